// The journey runner (docs/automation.md § Journeys): advances every run whose time has come. The
// automation worker calls runDueJourneys, which takes a batch of due runs FOR UPDATE SKIP LOCKED (of
// published journeys of active accounts) and, in the batch's transaction, walks each run from node
// to node (walk.ts; the nodes themselves: execute.ts) until it waits, ends, or has taken its share
// of the turn:
//   - instant nodes (condition, switch, split, a wait already over) are decided in memory (decide.ts);
//   - update_contact and assign go through the contacts and conversations services, in savepoints,
//     with the run as the cause of their events;
//   - send_message nodes are collected in rounds: each round's messages are accepted together by one
//     acceptBatch (window rule, price, charge; idempotency key `jrn:<run>:<seq>`), then each run goes
//     on by `next` or `failed`;
//   - waits set `resume_at`; a webhook node queues its call (automation/webhook-calls.ts) and waits for it;
//   - every run and every step touched is written by one statement each.
// A crash rolls the batch back, messages and records together; a commit does both once. A batch that
// throws is undone and its runs taken one by one, each in a savepoint: one that still throws is put
// back for a minute, alone.
import type { FastifyBaseLogger } from 'fastify';
import type { Tx } from '../../kernel/database/db.ts';
import type { EventEnvelope, EventInput } from '../../kernel/outbox/events.ts';
import type { EffectServices } from '../automation/index.ts';
import { actorsOf, runDueBatch } from '../automation/index.ts';
import type { SendResult } from '../messages/index.ts';
import { type Going, reread, type Turn, walkAll } from './execute.ts';
import type { Definition } from './graph.ts';
import type { RunRow, StepRow } from './repo.ts';
import { toRun } from './schemas.ts';
import { Walk } from './walk.ts';

/** A due run and its version's definition. */
type Due = RunRow & { definition: Definition };

const RUN_COLUMNS = [
  'id',
  'account_id',
  'journey_id',
  'version',
  'contact_id',
  'status',
  'current_node_id',
  'resume_at',
  'resume_edge',
  'vars',
  'trigger_data',
  'trigger_event_id',
  'depth',
  'error',
  'step_count',
  'last_node_id',
  'repeat_count',
  'sandbox',
  'expires_at',
  'started_at',
  'updated_at',
  'ended_at',
] as const;

// The run's columns are read by the locking subquery itself: a row another transaction changed
// after this statement began is locked (and rechecked) in its new version, while a second read of
// the table outside the subquery would still see the statement's older snapshot of it.
const DUE_SQL = `
  SELECT ${RUN_COLUMNS.map((c) => `d.${c}`).join(', ')}, v.definition
    FROM (SELECT ${RUN_COLUMNS.map((c) => `r.${c}`).join(', ')} FROM journey_runs r
            JOIN journeys j ON j.id = r.journey_id
            JOIN accounts a ON a.id = r.account_id
           WHERE r.status IN ('running', 'waiting') AND r.resume_at <= $1 AND j.status = 'published'
             AND a.status = 'ACTIVE'
           ORDER BY r.resume_at LIMIT $2 FOR UPDATE OF r SKIP LOCKED) d
    JOIN journey_versions v ON v.journey_id = d.journey_id AND v.version = d.version
   ORDER BY d.resume_at`;

/** Writes the runs in one statement, their steps in another, and emits the ends. */
async function write(t: Turn, walks: Walk[]): Promise<void> {
  const { rows } = await t.tx.query<RunRow>(
    `UPDATE journey_runs r
        SET status = x.status, current_node_id = x.current_node_id,
            resume_at = CASE WHEN x.status IN ('running', 'waiting') THEN x.resume_at END,
            resume_edge = x.resume_edge, vars = x.vars, error = x.error, step_count = x.step_count,
            last_node_id = x.last_node_id, repeat_count = x.repeat_count, updated_at = $2,
            ended_at = CASE WHEN x.status IN ('running', 'waiting') THEN NULL ELSE coalesce(r.ended_at, $2) END
       FROM jsonb_to_recordset($1::jsonb) AS x (id text, status text, current_node_id text, resume_at timestamptz,
            resume_edge text, vars jsonb, error jsonb, step_count int, last_node_id text, repeat_count int)
      WHERE r.id = x.id
      RETURNING r.*`,
    [
      JSON.stringify(
        walks.map(({ run }) => ({
          id: run.id,
          status: run.status,
          current_node_id: run.current_node_id,
          resume_at: run.resume_at,
          resume_edge: run.resume_edge,
          vars: run.vars,
          error: run.error,
          step_count: run.step_count,
          last_node_id: run.last_node_id,
          repeat_count: run.repeat_count,
        })),
      ),
      t.now,
    ],
  );
  // Steps entered this turn are inserted: a run walked twice from the same state would fail on the
  // primary key, not overwrite its history. Only the step a run waited at before the turn is updated.
  const entered = walks.flatMap((w) => w.enteredSteps());
  if (entered.length > 0) {
    await t.tx.query(
      `INSERT INTO journey_run_steps (run_id, seq, journey_id, node_id, type, status, edge, output, error, started_at,
                                      ended_at)
       SELECT x.run_id, x.seq, x.journey_id, x.node_id, x.type, x.status, x.edge, x.output, x.error, x.started_at,
              x.ended_at
         FROM jsonb_to_recordset($1::jsonb) AS x (run_id text, seq int, journey_id text, node_id text, type text,
              status text, edge text, output jsonb, error jsonb, started_at timestamptz, ended_at timestamptz)`,
      [JSON.stringify(entered)],
    );
  }
  const left = walks.flatMap((w) => w.earlierSteps());
  if (left.length > 0) {
    await t.tx.query(
      `UPDATE journey_run_steps s
          SET status = x.status, edge = x.edge, output = x.output, error = x.error, ended_at = x.ended_at
         FROM jsonb_to_recordset($1::jsonb) AS x (run_id text, seq int, status text, edge text, output jsonb,
              error jsonb, ended_at timestamptz)
        WHERE s.run_id = x.run_id AND s.seq = x.seq`,
      [JSON.stringify(left)],
    );
  }
  const events: EventInput[] = rows
    .filter((r) => r.status === 'completed' || r.status === 'failed' || r.status === 'expired')
    .map((r) => ({
      type: r.status === 'completed' ? 'journey_run.completed' : 'journey_run.failed',
      accountId: r.account_id,
      data: toRun(r),
    }));
  await t.s.events.emitMany(t.tx, events);
}

/** The open (waiting) step of each waiting run. */
async function openSteps(tx: Tx, rows: Due[]): Promise<Map<string, StepRow>> {
  const waiting = rows.filter((r) => r.status === 'waiting').map((r) => r.id);
  if (waiting.length === 0) return new Map();
  const { rows: steps } = await tx.query<StepRow>(
    `SELECT * FROM journey_run_steps WHERE run_id = ANY($1) AND status = 'waiting'`,
    [waiting],
  );
  return new Map(steps.map((s) => [s.run_id, s]));
}

/** What the batch's runs read: contacts, their conversations, the events that started them. */
async function readTurn(
  tx: Tx,
  s: EffectServices,
  rows: Due[],
  now: Date,
  sent: SendResult[],
): Promise<Turn> {
  const t: Turn = { tx, s, now, sent, contacts: new Map(), conversations: new Map(), events: new Map() };
  await reread(t, [...new Set(rows.map((r) => r.account_id))], [...new Set(rows.map((r) => r.contact_id))]);
  const eventIds = rows.flatMap((r) => (r.trigger_event_id ? [r.trigger_event_id] : []));
  if (eventIds.length > 0) {
    const { rows: events } = await tx.query<{ id: string; payload: string }>(
      'SELECT id, payload FROM events WHERE id = ANY($1) AND NOT event_erased(payload)',
      [eventIds],
    );
    for (const e of events) {
      const { id, type, data } = JSON.parse(e.payload) as EventEnvelope;
      t.events.set(id, { id, type, data: data as Record<string, unknown> });
    }
  }
  return t;
}

/** The turns of the due runs, acted and written together. */
async function runTurns(
  tx: Tx,
  s: EffectServices,
  rows: Due[],
  now: Date,
  sent: SendResult[],
): Promise<void> {
  const t = await readTurn(tx, s, rows, now, sent);
  const open = await openSteps(tx, rows);
  const actors = await actorsOf(
    tx,
    rows.map((r) => r.account_id),
  );
  const walks: Walk[] = [];
  const going: Going[] = [];
  for (const due of rows) {
    const { definition, ...run } = due;
    const walk = new Walk(run, definition, open.get(run.id) ?? null, now);
    walks.push(walk);
    const account = actors.get(run.account_id);
    if (!account) {
      // The plan lost automation: the run holds where it is (and expires in time).
      walk.run.resume_at = new Date(now.getTime() + 3600_000);
      continue;
    }
    if (now >= run.expires_at) {
      walk.end('expired', {
        code: 'RUN_EXPIRED',
        message: `The run passed its maxRunDuration (${definition.settings.maxRunDuration}).`,
      });
      continue;
    }
    if (!t.contacts.has(run.contact_id)) {
      walk.end('failed', { code: 'CONTACT_DELETED', message: 'The contact was deleted.' });
      continue;
    }
    going.push({
      walk,
      actor: { ...account, mode: run.sandbox ? 'sandbox' : 'live' },
      causedBy: { kind: 'journey', id: run.journey_id, runId: run.id, depth: run.depth },
    });
  }
  await walkAll(t, going);
  await write(t, walks);
}

/**
 * Advances up to `limit` due runs in one transaction; answers how many were taken. The accepted
 * sends are added to `sent` (for the dispatchers, woken after commit).
 */
export function runDueJourneys(
  s: EffectServices,
  sent: SendResult[],
  log: FastifyBaseLogger,
  limit: number,
): Promise<number> {
  return runDueBatch<Due>(s, sent, log, limit, {
    dueSql: DUE_SQL,
    work: (tx, batch, now, into) => runTurns(tx, s, batch, now, into),
    putBack: async (tx, id, at) => {
      await tx.query('UPDATE journey_runs SET resume_at = $2 WHERE id = $1', [id, at]);
    },
    log: {
      batchFailed: 'a batch of journey runs failed; its runs are taken one by one',
      rowFailed: 'a journey run failed unexpectedly; tried again in a minute',
      idField: 'runId',
    },
  });
}
