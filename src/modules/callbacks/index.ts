export { TwilioVoiceForm } from './envelope-schema.ts';
export { whatsappCallbackRoutes } from './whatsapp-routes.ts';
