// The face of erasure: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { ERASED, ERASED_ERROR_MESSAGE, eraseData, erasePeople, isErasedEvent } from './erase.ts';
export { holdAgainstErasure, lockForErasure, tryHoldAgainstErasure } from './lock.ts';
