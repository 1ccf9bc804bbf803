// The face of contacts: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { addressOf, contactCountry, recipientOf } from './address.ts';
export { applyAppContacts } from './app-contacts.ts';
export { applyContactRows, checkRow } from './bulk-apply.ts';
export { changeIssues } from './change-checks.ts';
export type { ContactFields, NormalizedFields } from './fields.ts';
export {
  ATTRIBUTE_NAME,
  invalidFields,
  MAX_ATTRIBUTE_VALUE_LENGTH,
  normalizeTag,
  normalizeTags,
} from './fields.ts';
export type { CustomerIdentity, IdentityReport } from './identity.ts';
export {
  applyIdentityChange,
  customerContact,
  findCustomer,
  identityKey,
  rememberIdentities,
} from './identity.ts';
export { applyMarketingPreference } from './marketing-preference.ts';
export type { MergeServices } from './merge.ts';
export { currentContactId } from './merge.ts';
export type { ContactRow } from './repo.ts';
export { findContact, insertNumbers, noteInbound } from './repo.ts';
export { contactRoutes } from './routes.ts';
export { ContactSchema, toContact } from './schemas.ts';
export type { ContactServices } from './service.ts';
export { addTags, contactIdNamedBy, removeTag, updateContact } from './service.ts';
