// What starts automation: the events rules, sequences and journeys may react to, the timed
// triggers, and how deep one automation's events may set off another. Shared by the engines.
import { EVENT_TYPES } from '../../kernel/outbox/events.ts';

/** Triggers that are not events: they fire when a time has passed without something happening. */
export const TIMED_TRIGGERS = ['conversation.unanswered', 'contact.inactive'] as const;
/** Events a rule may react to: every event but a webhook's test. */
export const TRIGGER_EVENTS = [
  ...EVENT_TYPES.filter((t): t is Exclude<typeof t, 'webhook.test'> => t !== 'webhook.test'),
  ...TIMED_TRIGGERS,
];
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

/** Rules caused by rules caused by rules: a fourth link is not run. */
export const MAX_DEPTH = 3;
