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
