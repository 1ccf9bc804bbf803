// The face of partner: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
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
