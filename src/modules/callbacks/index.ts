// The face of callbacks: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { TwilioVoiceForm } from './envelope-schema.ts';
export { whatsappCallbackRoutes } from './whatsapp-routes.ts';
