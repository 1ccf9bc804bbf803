// The face of keys: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { keyRoutes } from './routes.ts';
export {
  ApiKeyInfo,
  CreateAccountKeyBody,
  CreatedApiKey,
  CreatePartnerKeyBody,
  toCreatedKey,
  toKeyInfo,
} from './schemas.ts';
export { createKey, listKeys, revokeKey } from './service.ts';
