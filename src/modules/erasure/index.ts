export { ERASED, ERASED_ERROR_MESSAGE, eraseData, erasePeople, isErasedEvent } from './erase.ts';
export { holdAgainstErasure, lockForErasure, tryHoldAgainstErasure } from './lock.ts';
