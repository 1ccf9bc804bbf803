// When a sequence's steps are sent (docs/automation.md § Sequences). Pure: the timer (timer.ts)
// and enrolling (enroll.ts) apply it.
//   - A step's delay is `after` a duration (from the enrollment for the first step, from the end of
//     the step before for the others), or `at` a date a contact attribute holds (plus `offset`),
//     read when the step before it ends. An attribute without a date makes the step due at once, to
//     be skipped with reason no_date.
//   - The time it is tried (`nextRunAt`) is that, moved to the send window's next opening in the
//     contact's zone. A step tried more than an hour after that time (the service was down, the
//     sequence paused) is skipped with reason past_due: a reminder is not sent after the fact.
import { DateTime } from 'luxon';
import { contactZone, durationMs, nextOpening, signedDurationMs, windowZone } from '../automation/index.ts';
import type { Definition, Step } from './repo.ts';

export const PAST_DUE_MS = 3600_000;

export interface ContactTime {
  attributes: Record<string, unknown>;
  country: string | null;
}

/** The date an `at` delay names for the contact (with its offset), or null when it holds none. */
export function attributeDate(step: Step, contact: ContactTime, fallbackZone: string): Date | null {
  if (!('at' in step.delay)) return null;
  const value = contact.attributes[step.delay.at.slice('contact.attributes.'.length)];
  if (typeof value !== 'string') return null;
  const date = DateTime.fromISO(value, { zone: contactZone(contact, fallbackZone) });
  if (!date.isValid) return null;
  const offset = step.delay.offset ? (signedDurationMs(step.delay.offset) ?? 0) : 0;
  return new Date(date.toMillis() + offset);
}

/** When the step is due, counted from `from` (the enrollment, or the end of the step before). */
export function dueAt(step: Step, from: Date, contact: ContactTime, definition: Definition): Date {
  if ('after' in step.delay) return new Date(from.getTime() + durationMs(step.delay.after));
  return attributeDate(step, contact, definition.sendWindow?.fallbackTimezone ?? 'UTC') ?? from;
}

/** `at`, or the send window's next opening after it (in the contact's zone). */
export function inWindow(at: Date, definition: Definition, contact: ContactTime): Date {
  const window = definition.sendWindow;
  if (!window) return at;
  return nextOpening(at, window, windowZone(window, contact));
}

/** When the step is tried: due, then moved into the window. */
export function nextRunAt(step: Step, from: Date, contact: ContactTime, definition: Definition): Date {
  return inWindow(dueAt(step, from, contact, definition), definition, contact);
}

export type StepVerdict =
  | { kind: 'send' }
  | { kind: 'wait'; until: Date }
  | { kind: 'skip'; reason: 'past_due' | 'no_date' };

/** What to do with a step whose time (`runAt`) has come, at `now`. */
export function verdict(
  step: Step,
  runAt: Date,
  now: Date,
  contact: ContactTime,
  definition: Definition,
): StepVerdict {
  if (now.getTime() - runAt.getTime() > PAST_DUE_MS) return { kind: 'skip', reason: 'past_due' };
  if ('at' in step.delay && !attributeDate(step, contact, 'UTC')) return { kind: 'skip', reason: 'no_date' };
  // The window is read again: the contact's zone may have changed since the step was scheduled,
  // and a woken enrollment (sandbox) still waits for the window.
  const open = inWindow(now, definition, contact);
  if (open.getTime() > now.getTime()) return { kind: 'wait', until: open };
  return { kind: 'send' };
}
