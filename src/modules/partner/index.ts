export { partnerAccountRoutes } from './account-routes.ts';
export { provisionAccount } from './accounts.ts';
export {
  bootstrapTokenFile,
  bootstrapWith,
  ensureBootstrapToken,
  installationPartner,
  isBootstrapped,
  precheckBootstrap,
  readBootstrapToken,
  renewBootstrapToken,
} from './bootstrap.ts';
export { partnerRoutes } from './routes.ts';
export { partnerWhatsAppAppRoutes } from './whatsapp-app-routes.ts';
