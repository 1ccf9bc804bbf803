// Enrolling contacts and ending enrollments (docs/automation.md § Sequences). Used by the API (one
// contact, a bulk job), by the engine (a sequence's trigger event, a rule's enroll_in_sequence and
// exit_sequences, exits on reply, tags and opt-out) and by archiving. Every path ends in the same
// functions, in the caller's transaction, so the rules hold whoever enrols:
//   - only an active sequence enrols;
//   - reenroll `never`: once per contact; `after_exit`: not while one is active; `always`: any time;
//     checked under a lock on (sequence, contact), so two enrolments at once cannot both pass;
//   - an enrollment runs on the version current when it started;
//   - an enrollment that ends other than completed emits `enrollment.exited` (its status says how).
import type { Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { contactCountry, findContact } from '../contacts/index.ts';
import {
  type EnrollmentRow,
  type EnrollmentStatus,
  type ExitReason,
  insertEnrollment,
  type SequenceRow,
  saveEnrollment,
} from './repo.ts';
import { nextRunAt } from './schedule.ts';
import { toEnrollment } from './schemas.ts';

export interface EnrollServices {
  events: EventOutbox;
  now: () => Date;
  /** Told when an enrollment's first step is due at once (the worker's timer looks now). */
  runsDue?: () => void;
}

export interface EnrollOptions {
  sandbox: boolean;
  triggerEventId?: string | null;
}

/** Enrols the contact, or throws why not (404 no such contact, 409 a rule of enrolment). */
export async function enroll(
  tx: Tx,
  s: EnrollServices,
  sequence: SequenceRow,
  contactId: string,
  options: EnrollOptions,
): Promise<EnrollmentRow> {
  // Read again, shared-locked: archiving (which locks the row) cannot miss this enrollment.
  const { rows: current } = await tx.query<{ status: string }>(
    'SELECT status FROM sequences WHERE id = $1 FOR SHARE',
    [sequence.id],
  );
  const status = current[0]?.status ?? 'deleted';
  if (status !== 'active') {
    throw conflict(`The sequence is ${status}: only an active sequence enrols contacts.`);
  }
  const contact = await findContact(tx, sequence.account_id, contactId);
  if (!contact) throw notFound('contact');
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('enroll:' || $1 || ':' || $2, 0))`, [
    sequence.id,
    contactId,
  ]);
  const policy = sequence.definition.enrollment.reenroll;
  if (policy !== 'always') {
    const { rows } = await tx.query<{ status: EnrollmentStatus }>(
      `SELECT status FROM sequence_enrollments WHERE sequence_id = $1 AND contact_id = $2
        ORDER BY (status = 'active') DESC LIMIT 1`,
      [sequence.id, contactId],
    );
    const earlier = rows[0]?.status;
    if (earlier === 'active') throw conflict('The contact is already enrolled in this sequence.');
    if (earlier && policy === 'never') {
      throw conflict('The contact was enrolled in this sequence before, and its reenroll is "never".');
    }
  }
  const now = s.now();
  const definition = sequence.definition;
  const first = definition.steps[0]!;
  const where = { attributes: contact.attributes, country: contactCountry(contact) };
  const firstRunAt = nextRunAt(first, now, where, definition);
  if (firstRunAt <= now) s.runsDue?.();
  return insertEnrollment(tx, {
    id: newId('enrollment'),
    account_id: sequence.account_id,
    sequence_id: sequence.id,
    version: sequence.version,
    contact_id: contactId,
    status: 'active',
    exit_reason: null,
    reason: null,
    step_index: 0,
    next_run_at: firstRunAt,
    steps: definition.steps.map((step) => ({ stepId: step.id, status: 'pending' })),
    sandbox: options.sandbox,
    opted_in_at_start: contact.opted_in,
    trigger_event_id: options.triggerEventId ?? null,
    created_at: now,
    updated_at: now,
    ended_at: null,
  });
}

/** Enrols, answering the refusal instead of throwing it (bulk jobs, rules, triggers). */
export async function tryEnroll(
  tx: Tx,
  s: EnrollServices,
  sequence: SequenceRow,
  contactId: string,
  options: EnrollOptions,
): Promise<{ enrollment: EnrollmentRow } | { error: ApiError }> {
  await tx.query('SAVEPOINT enroll');
  try {
    const enrollment = await enroll(tx, s, sequence, contactId, options);
    await tx.query('RELEASE SAVEPOINT enroll');
    return { enrollment };
  } catch (err) {
    await tx.query('ROLLBACK TO SAVEPOINT enroll');
    if (err instanceof ApiError) return { error: err };
    throw err;
  }
}

/** Ends an active enrollment: exited (with its reason), canceled or failed; emits enrollment.exited. */
export async function endEnrollment(
  tx: Tx,
  s: EnrollServices,
  row: EnrollmentRow,
  end: { status: 'exited' | 'canceled' | 'failed'; exitReason?: ExitReason; reason?: string },
): Promise<EnrollmentRow> {
  const ended = await saveEnrollment(
    tx,
    { ...row, status: end.status, exit_reason: end.exitReason ?? null, reason: end.reason ?? null },
    s.now(),
  );
  await s.events.emit(tx, {
    type: 'enrollment.exited',
    accountId: row.account_id,
    data: toEnrollment(ended),
  });
  return ended;
}

/**
 * Ends the contact's active enrollments that `which` picks (given the definition of the version each
 * runs on), with `reason`; only those made `before` a time when given (an event ends only the
 * enrollments that existed when it happened). Answers how many ended.
 */
export async function exitEnrollments(
  tx: Tx,
  s: EnrollServices,
  accountId: string,
  contactId: string,
  which: (e: EnrollmentRow & { definition: SequenceRow['definition'] }) => ExitReason | null,
  options: { sequenceId?: string; before?: Date } = {},
): Promise<number> {
  const { rows } = await tx.query<EnrollmentRow & { definition: SequenceRow['definition'] }>(
    `SELECT e.*, v.definition FROM sequence_enrollments e
       JOIN sequence_versions v ON v.sequence_id = e.sequence_id AND v.version = e.version
      WHERE e.account_id = $1 AND e.contact_id = $2 AND e.status = 'active'
        AND ($3::text IS NULL OR e.sequence_id = $3) AND ($4::timestamptz IS NULL OR e.created_at < $4)
      ORDER BY e.id FOR UPDATE OF e`,
    [accountId, contactId, options.sequenceId ?? null, options.before ?? null],
  );
  let ended = 0;
  for (const row of rows) {
    const exitReason = which(row);
    if (!exitReason) continue;
    const { definition: _, ...enrollment } = row;
    await endEnrollment(tx, s, enrollment, { status: 'exited', exitReason });
    ended++;
  }
  return ended;
}
