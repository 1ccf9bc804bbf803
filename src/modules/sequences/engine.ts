// What an event does to sequences, inside the automation worker's transaction for that event
// (automation/worker.ts): first it ends the enrollments it exits (a reply, a tag added or removed,
// an opt-out), then, after the event's rules ran, it enrols its contact in the active sequences it
// triggers (their conditions holding, their reenroll setting allowing). An event caused by a
// sequence's own steps never enrols in that sequence, and a chain of automation deeper than the
// rules' bound enrols nowhere.
import type { Tx } from '../../kernel/database/db.ts';
import type { CausedBy, EventEnvelope } from '../../kernel/outbox/events.ts';
import {
  conditionContext,
  contactIdOf,
  EXIT_EVENTS,
  evaluate,
  MAX_DEPTH,
  type RunScope,
} from '../automation/index.ts';
import { type EnrollServices, exitEnrollments, tryEnroll } from './enroll.ts';
import type { Definition, ExitReason, SequenceRow } from './repo.ts';

type Event = EventEnvelope & { causedBy?: CausedBy };

/** Why the event ends an enrollment on `definition`, or null. */
function exitReasonOf(event: Event, definition: Definition): ExitReason | null {
  const data = event.data as {
    optedIn?: boolean;
    previous?: { optedIn?: boolean };
    tagsAdded?: string[];
    tagsRemoved?: string[];
  };
  switch (event.type) {
    case 'message.received':
      return definition.exit.onReply ? 'replied' : null;
    case 'contact.tagged':
      return definition.exit.onTagAdded && data.tagsAdded?.includes(definition.exit.onTagAdded)
        ? 'tag_added'
        : null;
    case 'contact.untagged':
      return definition.exit.onTagRemoved && data.tagsRemoved?.includes(definition.exit.onTagRemoved)
        ? 'tag_removed'
        : null;
    case 'contact.updated':
      // Opting out is the change from opted in to not (a contact never opted in has not opted out).
      return data.optedIn === false && data.previous?.optedIn === true ? 'opted_out' : null;
    default:
      return null;
  }
}

/** Ends the enrollments of the event's contact that the event exits. */
export async function exitOnEvent(tx: Tx, s: EnrollServices, event: Event): Promise<void> {
  const contactId = contactIdOf(event);
  if (!contactId || !EXIT_EVENTS.includes(event.type)) return;
  await exitEnrollments(tx, s, event.accountId!, contactId, (e) => exitReasonOf(event, e.definition), {
    before: new Date(event.createdAt),
  });
}

/** Enrols the event's contact in the active sequences whose trigger it is. */
export async function enrollOnEvent(
  tx: Tx,
  s: EnrollServices,
  event: Event,
  scope: () => Promise<RunScope>,
): Promise<void> {
  const contactId = contactIdOf(event);
  if (!contactId || (event.causedBy?.depth ?? 0) >= MAX_DEPTH) return;
  const { rows } = await tx.query<SequenceRow>(
    `SELECT * FROM sequences WHERE account_id = $1 AND trigger_event = $2 AND status = 'active' ORDER BY id`,
    [event.accountId, event.type],
  );
  for (const sequence of rows) {
    if (event.causedBy?.kind === 'sequence' && event.causedBy.id === sequence.id) continue;
    const conditions = sequence.definition.enrollment.trigger?.conditions;
    if (conditions && !evaluate(conditions, conditionContext(await scope())).matched) continue;
    // A refusal (already enrolled, opted out) is the reenroll setting at work, not a fault.
    await tryEnroll(tx, s, sequence, contactId, {
      sandbox: (event.data as { sandbox?: boolean }).sandbox === true,
      triggerEventId: event.id,
    });
  }
}
