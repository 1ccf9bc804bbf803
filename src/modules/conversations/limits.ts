// What a tenant may put on one conversation (labels.ts, notes.ts, snooze.ts): here, importing
// nothing, so that the schemas and the services read them without a cycle.

/** The labels one conversation may carry. */
export const MAX_LABELS = 20;
/** A note's text, in characters. */
export const MAX_NOTE_LENGTH = 4096;
/** The team members one note may mention. */
export const MAX_MENTIONS = 20;
/** The notes one conversation may hold. */
export const MAX_NOTES = 1000;
/** The furthest ahead a conversation may be snoozed. */
export const MAX_SNOOZE_DAYS = 90;
