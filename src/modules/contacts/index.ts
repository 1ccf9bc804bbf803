// The face of contacts: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { applyContactRows, checkRow } from './bulk-apply.ts';
export { changeIssues } from './change-checks.ts';
export type { ContactFields, NormalizedFields } from './fields.ts';
export { ATTRIBUTE_NAME, invalidFields, MAX_ATTRIBUTE_VALUE_LENGTH, normalizeTag } from './fields.ts';
export { applyMarketingPreference } from './marketing-preference.ts';
export type { ContactRow, WaIdReport } from './repo.ts';
export { findContact, insertNumbers, insertSender, lockSender, noteInbound, rememberWaIds } from './repo.ts';
export { contactRoutes } from './routes.ts';
export { toContact } from './schemas.ts';
export type { ContactServices } from './service.ts';
export { addTags, contactIdNamedBy, removeTag, updateContact } from './service.ts';
