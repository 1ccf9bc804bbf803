// The step timer: sends the steps that are due (docs/automation.md § Sequences). The automation
// worker calls runDue, which takes a batch of due enrollments FOR UPDATE SKIP LOCKED (of active
// sequences of active accounts) and, for each, in the batch's transaction: sends the step through
// the send path (idempotency key `seq:<enrollment>:<step>`), records its outcome and schedules the
// next step, or ends the enrollment. A crash rolls the batch back, send and record together; a
// commit does both once. So each step is sent at most once, across any number of processes.
// Each enrollment runs in a savepoint: one that throws (a bug) is put back for a minute, alone.
import type { FastifyBaseLogger } from 'fastify';
import type { Tx } from '../../kernel/db.ts';
import type { CausedBy } from '../../kernel/events.ts';
import { countryOf } from '../../kernel/phones.ts';
import { scopeFor } from '../automation/context.ts';
import {
  ACTOR_COLUMNS,
  type Act,
  type ActorRow,
  actorFrom,
  type EffectServices,
  runActions,
} from '../automation/effects.ts';
import { findContact } from '../contacts/repo.ts';
import { endEnrollment } from './enroll.ts';
import { type Definition, type EnrollmentRow, type StepRecord, saveEnrollment } from './repo.ts';
import { nextRunAt, verdict } from './schedule.ts';
import { toEnrollment } from './schemas.ts';

/** A due enrollment (its status is `active`: `status` here is its account's) with its version and account. */
type Due = Omit<EnrollmentRow, 'status'> & ActorRow & { definition: Definition };

const DUE_SQL = `
  SELECT e.id, e.account_id, e.sequence_id, e.version, e.contact_id, e.exit_reason, e.reason, e.step_index,
         e.next_run_at, e.steps, e.sandbox, e.opted_in_at_start, e.trigger_event_id, e.created_at, e.updated_at, e.ended_at,
         v.definition, ${ACTOR_COLUMNS}
    FROM (SELECT e.id FROM sequence_enrollments e
            JOIN sequences q ON q.id = e.sequence_id
            JOIN accounts a ON a.id = e.account_id
           WHERE e.status = 'active' AND e.next_run_at <= $1 AND q.status = 'active' AND a.status = 'ACTIVE'
           ORDER BY e.next_run_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED) d
    JOIN sequence_enrollments e ON e.id = d.id
    JOIN sequence_versions v ON v.sequence_id = e.sequence_id AND v.version = e.version
    JOIN accounts a ON a.id = e.account_id
    LEFT JOIN account_channels c ON c.account_id = e.account_id
   ORDER BY e.next_run_at`;

/** What `{{ event.… }}` reads in a step: the event that enrolled the contact, if still kept. */
async function eventOf(tx: Tx, row: Pick<EnrollmentRow, 'id' | 'trigger_event_id'>) {
  if (row.trigger_event_id) {
    const { rows } = await tx.query<{ payload: string }>('SELECT payload FROM events WHERE id = $1', [
      row.trigger_event_id,
    ]);
    if (rows[0]) {
      const e = JSON.parse(rows[0].payload) as { id: string; type: string; data: Record<string, unknown> };
      return { id: e.id, type: e.type, data: e.data };
    }
  }
  return { id: row.id, type: 'enrollment.step', data: {} };
}

/** Runs one due enrollment's step; the caller holds its row. */
async function runStep(tx: Tx, s: EffectServices, act: Act, row: Due, now: Date): Promise<void> {
  const {
    definition,
    status: _,
    plan_code: __,
    addons: ___,
    country_code: ____,
    provider: _____,
    ...rest
  } = row;
  const enrollment: EnrollmentRow = { ...rest, status: 'active' };
  const account = actorFrom(row.account_id, row);
  if (!account) {
    // The plan lost automation: the step waits (and is past due if it stays so for an hour).
    await saveEnrollment(tx, { ...enrollment, next_run_at: new Date(now.getTime() + 3600_000) }, now);
    return;
  }
  const contact = await findContact(tx, row.account_id, row.contact_id);
  if (!contact) {
    await endEnrollment(tx, s, enrollment, { status: 'failed', reason: 'The contact was deleted.' });
    return;
  }
  // The event may have been missed (a bulk import changes contacts without saying what they were).
  if (row.opted_in_at_start && !contact.opted_in) {
    await endEnrollment(tx, s, enrollment, { status: 'exited', exitReason: 'opted_out' });
    return;
  }
  const where = { attributes: contact.attributes, country: countryOf(contact.phone) };
  const index = row.step_index;
  const step = definition.steps[index]!;
  const v = verdict(step, row.next_run_at!, now, where, definition);
  if (v.kind === 'wait') {
    await saveEnrollment(tx, { ...enrollment, next_run_at: v.until }, now);
    return;
  }
  const steps: StepRecord[] = [...row.steps];
  const at = now.toISOString();
  if (v.kind === 'skip') {
    steps[index] = { stepId: step.id, status: 'skipped', at, reason: v.reason };
  } else {
    const scope = await scopeFor(tx, row.account_id, row.contact_id, await eventOf(tx, row), now);
    const causedBy: CausedBy = { kind: 'sequence', id: row.sequence_id, runId: row.id, depth: 1 };
    const [result] = await runActions(tx, [{ type: 'send_message', message: step.message }], act, {
      scope,
      actor: { ...account, mode: row.sandbox ? 'sandbox' : 'live' },
      causedBy,
      keyPrefix: `seq:${row.id}:${step.id}`,
    });
    if (result!.status === 'succeeded') {
      steps[index] = {
        stepId: step.id,
        status: 'sent',
        at,
        ...(result!.ref ? { messageId: result!.ref } : {}),
      };
    } else if (result!.status === 'suppressed') {
      steps[index] = { stepId: step.id, status: 'skipped', at, reason: 'contact_cap' };
    } else {
      const reason = result!.error?.message ?? 'The message could not be sent.';
      steps[index] = { stepId: step.id, status: 'failed', at, reason };
      await endEnrollment(tx, s, { ...enrollment, steps }, { status: 'failed', reason });
      return;
    }
  }
  const next = definition.steps[index + 1];
  if (!next) {
    const done = await saveEnrollment(
      tx,
      { ...enrollment, steps, step_index: index + 1, status: 'completed' },
      now,
    );
    await s.events.emit(tx, {
      type: 'enrollment.completed',
      accountId: row.account_id,
      data: toEnrollment(done),
    });
    return;
  }
  await saveEnrollment(
    tx,
    { ...enrollment, steps, step_index: index + 1, next_run_at: nextRunAt(next, now, where, definition) },
    now,
  );
}

/** Sends up to `limit` due steps in one transaction; answers how many enrollments were taken. */
export async function runDue(
  s: EffectServices,
  act: Act,
  log: FastifyBaseLogger,
  limit: number,
): Promise<number> {
  return s.db.transaction(async (tx) => {
    const now = s.now();
    const { rows } = await tx.query<Due>(DUE_SQL, [now, limit]);
    for (const row of rows) {
      await tx.query('SAVEPOINT sequence_step');
      try {
        await runStep(tx, s, act, row, now);
        await tx.query('RELEASE SAVEPOINT sequence_step');
      } catch (err) {
        await tx.query('ROLLBACK TO SAVEPOINT sequence_step');
        log.error(
          { err, enrollmentId: row.id },
          'a sequence step failed unexpectedly; tried again in a minute',
        );
        await tx.query('UPDATE sequence_enrollments SET next_run_at = $2 WHERE id = $1', [
          row.id,
          new Date(now.getTime() + 60_000),
        ]);
      }
    }
    return rows.length;
  });
}
