// The step timer: sends the steps that are due (docs/automation.md § Sequences). The automation
// worker calls runDue, which takes a batch of due enrollments FOR UPDATE SKIP LOCKED (of active
// sequences of active accounts) and, in the batch's transaction, decides each one's turn (wait for
// the window, skip, send, or end), sends the batch's messages through the send path together (one
// acceptBatch: window rule, price and charge per message, idempotency key `seq:<enrollment>:<step>`)
// and writes every enrollment's outcome and next step in one statement. A crash rolls the batch
// back, messages and records together; a commit does both once. So each step is sent at most once,
// across any number of processes. A batch that throws (a bug, a message that existed already) is
// undone and its enrollments taken one by one, each in a savepoint: one that still throws is put
// back for a minute, alone.
import type { FastifyBaseLogger } from 'fastify';
import type { Tx } from '../../kernel/database/db.ts';
import type { CausedBy, EventInput } from '../../kernel/outbox/events.ts';
import {
  type AccountActor,
  actorsOf,
  automatedSendsLastHour,
  type ConversationRef,
  type EffectServices,
  failureOf,
  markCausedBy,
  renderMessage,
  runDueBatch,
  scopeOf,
} from '../automation/index.ts';
import type { ContactRow } from '../contacts/index.ts';
import { contactCountry, recipientOf } from '../contacts/index.ts';
import {
  acceptBatch,
  prepareMessage,
  type SendRequest,
  type SendResult,
  templateLookup,
} from '../messages/index.ts';
import type { Definition, EnrollmentRow, ExitReason, Step, StepRecord } from './repo.ts';
import { type ContactTime, nextRunAt, verdict } from './schedule.ts';
import { toEnrollment } from './schemas.ts';

/** A due enrollment (its status is `active`, not read) with its version's definition. */
type Due = Omit<EnrollmentRow, 'status'> & { definition: Definition };

const ENROLLMENT_COLUMNS =
  'id, account_id, sequence_id, version, contact_id, exit_reason, reason, step_index, next_run_at, steps, sandbox, ' +
  'opted_in_at_start, trigger_event_id, created_at, updated_at, ended_at';
const columns = (table: string) =>
  ENROLLMENT_COLUMNS.split(', ')
    .map((c) => `${table}.${c}`)
    .join(', ');

// The enrollment's columns are read by the locking subquery itself: a row another transaction
// changed after this statement began is locked (and rechecked) in its new version, while a second
// read of the table outside the subquery would still see the statement's older snapshot of it.
const DUE_SQL = `
  SELECT ${columns('d')}, v.definition
    FROM (SELECT ${columns('e')} FROM sequence_enrollments e
            JOIN sequences q ON q.id = e.sequence_id
            JOIN accounts a ON a.id = e.account_id
           WHERE e.status = 'active' AND e.next_run_at <= $1 AND q.status = 'active' AND a.status = 'ACTIVE'
           ORDER BY e.next_run_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED) d
    JOIN sequence_versions v ON v.sequence_id = d.sequence_id AND v.version = d.version
   ORDER BY d.next_run_at`;

/** Where an enrollment stands after its turn. */
type Turn = EnrollmentRow;

function enrollmentOf(row: Due): EnrollmentRow {
  const { definition: _, ...e } = row;
  return { ...e, status: 'active' };
}

const end = (
  e: EnrollmentRow,
  status: 'exited' | 'failed',
  how: { exitReason?: ExitReason; reason?: string },
): Turn => ({ ...e, status, exit_reason: how.exitReason ?? null, reason: how.reason ?? null });

/** The enrollment once its current step has `record`: the next step scheduled, or its end. */
function afterStep(e: EnrollmentRow, d: Definition, where: ContactTime, record: StepRecord, now: Date): Turn {
  const steps = [...e.steps];
  steps[e.step_index] = record;
  if (record.status === 'failed') return end({ ...e, steps }, 'failed', { reason: record.reason });
  const next = d.steps[e.step_index + 1];
  if (!next) return { ...e, steps, step_index: e.step_index + 1, status: 'completed' };
  return { ...e, steps, step_index: e.step_index + 1, next_run_at: nextRunAt(next, now, where, d) };
}

interface Send {
  row: Due;
  actor: AccountActor;
  e: EnrollmentRow;
  step: Step;
  contact: ContactRow;
  where: ContactTime;
}

/** Each due enrollment's turn, except the sends: those are answered as `sends`. */
function triage(
  rows: Due[],
  contacts: Map<string, ContactRow>,
  actors: Map<string, AccountActor | null>,
  now: Date,
) {
  const turns: Turn[] = [];
  const sends: Send[] = [];
  for (const row of rows) {
    const e = enrollmentOf(row);
    const actor = actors.get(row.account_id);
    if (!actor) {
      // The plan lost automation: the step waits (and is past due if it stays so for an hour).
      turns.push({ ...e, next_run_at: new Date(now.getTime() + 3600_000) });
      continue;
    }
    const contact = contacts.get(row.contact_id);
    if (!contact) {
      turns.push(end(e, 'failed', { reason: 'The contact was deleted.' }));
      continue;
    }
    // The opt-out's event may have been missed (a bulk import says nothing of what a contact was).
    if (row.opted_in_at_start && !contact.opted_in) {
      turns.push(end(e, 'exited', { exitReason: 'opted_out' }));
      continue;
    }
    const where = { attributes: contact.attributes, country: contactCountry(contact) };
    const step = row.definition.steps[row.step_index]!;
    const v = verdict(step, row.next_run_at!, now, where, row.definition);
    if (v.kind === 'wait') turns.push({ ...e, next_run_at: v.until });
    else if (v.kind === 'skip') {
      const record: StepRecord = {
        stepId: step.id,
        status: 'skipped',
        at: now.toISOString(),
        reason: v.reason,
      };
      turns.push(afterStep(e, row.definition, where, record, now));
    } else sends.push({ row, actor, e, step, contact, where });
  }
  return { turns, sends };
}

/** What the sends' templates read: each contact's latest conversation, the events that enrolled. */
async function scopesFor(tx: Tx, sends: Send[]) {
  const { rows: conversations } = await tx.query<ConversationRef & { contact_id: string }>(
    `SELECT DISTINCT ON (contact_id) contact_id, id, status, assignee_id FROM conversations
      WHERE account_id = ANY($1) AND contact_id = ANY($2) ORDER BY contact_id, opened_at DESC`,
    [[...new Set(sends.map((x) => x.row.account_id))], sends.map((x) => x.row.contact_id)],
  );
  const eventIds = sends.flatMap((x) => (x.row.trigger_event_id ? [x.row.trigger_event_id] : []));
  const { rows: events } = eventIds.length
    ? await tx.query<{ id: string; payload: string }>(
        'SELECT id, payload FROM events WHERE id = ANY($1) AND NOT event_erased(payload)',
        [eventIds],
      )
    : { rows: [] };
  return {
    conversation: new Map(conversations.map((c) => [c.contact_id, c])),
    event: new Map(
      events.map((ev) => [
        ev.id,
        JSON.parse(ev.payload) as { id: string; type: string; data: Record<string, unknown> },
      ]),
    ),
  };
}

/** Sends the steps together; answers each enrollment's turn. */
async function send(
  tx: Tx,
  s: EffectServices,
  sends: Send[],
  now: Date,
  sent: SendResult[],
): Promise<Turn[]> {
  const turns: Turn[] = [];
  const scopes = await scopesFor(tx, sends);
  const recent = await automatedSendsLastHour(
    tx,
    sends.map((x) => x.row.contact_id),
    now,
  );
  const requests: SendRequest[] = [];
  const owners: Send[] = [];
  const at = now.toISOString();
  for (const x of sends) {
    const record = (r: Omit<StepRecord, 'stepId' | 'at'>) =>
      turns.push(afterStep(x.e, x.row.definition, x.where, { stepId: x.step.id, at, ...r }, now));
    const count = recent.get(x.row.contact_id) ?? 0;
    if (count >= s.contactCapPerHour) {
      record({ status: 'skipped', reason: 'contact_cap' });
      continue;
    }
    const trigger = x.row.trigger_event_id ? scopes.event.get(x.row.trigger_event_id) : undefined;
    const scope = scopeOf(
      x.contact,
      scopes.conversation.get(x.row.contact_id) ?? null,
      trigger ?? { id: x.row.id, type: 'enrollment.step', data: {} },
      now,
    );
    try {
      const message = await renderMessage(x.step.message, scope);
      const lookup = templateLookup(tx, x.row.account_id, s.approvedTemplates);
      const prepared = await prepareMessage(
        { ...message, ...recipientOf(x.contact) },
        { countryCode: x.actor.countryCode, lookup },
      );
      requests.push({
        sender: {
          account: { id: x.row.account_id, channelProvider: x.actor.channelProvider },
          mode: x.row.sandbox ? 'sandbox' : 'live',
          // The step's message, at most once whatever happens.
          idempotencyKey: `seq:${x.row.id}:${x.step.id}`,
        },
        message: prepared,
      });
      owners.push(x);
      recent.set(x.row.contact_id, count + 1);
    } catch (err) {
      record({ status: 'failed', reason: failureOf(err).message });
    }
  }
  const results = requests.length ? await acceptBatch(s, tx, requests) : [];
  const caused: { id: string; caused_by: CausedBy }[] = [];
  results.forEach((result, i) => {
    const x = owners[i]!;
    const record: Omit<StepRecord, 'stepId' | 'at'> =
      result.kind === 'refused'
        ? { status: 'failed', reason: result.error.message }
        : result.kind === 'accepted'
          ? { status: 'sent', messageId: result.message.id }
          : { status: 'sent' };
    if (result.kind === 'accepted') {
      sent.push(result);
      caused.push({
        id: result.message.id,
        caused_by: { kind: 'sequence', id: x.row.sequence_id, runId: x.row.id, depth: 1 },
      });
    }
    turns.push(afterStep(x.e, x.row.definition, x.where, { stepId: x.step.id, at, ...record }, now));
  });
  await markCausedBy(tx, caused);
  return turns;
}

/** Writes the turns in one statement and emits the end of those that ended. */
async function write(tx: Tx, s: EffectServices, turns: Turn[], now: Date): Promise<void> {
  const { rows } = await tx.query<EnrollmentRow>(
    `UPDATE sequence_enrollments e
        SET status = r.status, exit_reason = r.exit_reason, reason = r.reason, step_index = r.step_index,
            next_run_at = CASE WHEN r.status = 'active' THEN r.next_run_at END, steps = r.steps, updated_at = $2,
            ended_at = CASE WHEN r.status = 'active' THEN NULL ELSE coalesce(e.ended_at, $2) END
       FROM jsonb_to_recordset($1::jsonb) AS r (id text, status text, exit_reason text, reason text,
            step_index int, next_run_at timestamptz, steps jsonb)
      WHERE e.id = r.id
      RETURNING e.*`,
    [
      JSON.stringify(
        turns.map((t) => ({
          id: t.id,
          status: t.status,
          exit_reason: t.exit_reason,
          reason: t.reason,
          step_index: t.step_index,
          next_run_at: t.next_run_at,
          steps: t.steps,
        })),
      ),
      now,
    ],
  );
  const events: EventInput[] = rows
    .filter((r) => r.status !== 'active')
    .map((r) => ({
      type: r.status === 'completed' ? 'enrollment.completed' : 'enrollment.exited',
      accountId: r.account_id,
      data: toEnrollment(r),
    }));
  await s.events.emitMany(tx, events);
}

/** The turns of the due enrollments, sent and written together. */
async function runTurns(
  tx: Tx,
  s: EffectServices,
  rows: Due[],
  now: Date,
  sent: SendResult[],
): Promise<void> {
  const { rows: contacts } = await tx.query<ContactRow>('SELECT * FROM contact_rows WHERE id = ANY($1)', [
    rows.map((r) => r.contact_id),
  ]);
  const actors = await actorsOf(
    tx,
    rows.map((r) => r.account_id),
  );
  const { turns, sends } = triage(rows, new Map(contacts.map((c) => [c.id, c])), actors, now);
  if (sends.length > 0) turns.push(...(await send(tx, s, sends, now, sent)));
  await write(tx, s, turns, now);
}

/**
 * Sends up to `limit` due steps in one transaction; answers how many enrollments were taken. The
 * accepted sends are added to `sent` (for the dispatchers, woken after commit).
 */
export function runDue(
  s: EffectServices,
  sent: SendResult[],
  log: FastifyBaseLogger,
  limit: number,
): Promise<number> {
  return runDueBatch<Due>(s, sent, log, limit, {
    dueSql: DUE_SQL,
    work: (tx, batch, now, into) => runTurns(tx, s, batch, now, into),
    putBack: async (tx, id, at) => {
      await tx.query('UPDATE sequence_enrollments SET next_run_at = $2 WHERE id = $1', [id, at]);
    },
    log: {
      batchFailed: 'a batch of sequence steps failed; its enrollments are taken one by one',
      rowFailed: 'a sequence step failed unexpectedly; tried again in a minute',
      idField: 'enrollmentId',
    },
  });
}
