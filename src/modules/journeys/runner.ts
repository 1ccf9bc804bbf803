// The journey runner (docs/automation.md § Journeys): advances every run whose time has come. The
// automation worker calls runDueJourneys, which takes a batch of due runs FOR UPDATE SKIP LOCKED (of
// published journeys of active accounts) and, in the batch's transaction, walks each run from node
// to node (walk.ts) until it waits, ends, or has taken its share of the turn:
//   - instant nodes (condition, switch, split, a wait already over) are decided in memory (decide.ts);
//   - update_contact and assign go through the contacts and conversations services, in savepoints,
//     with the run as the cause of their events;
//   - send_message nodes are collected in rounds: each round's messages are accepted together by one
//     acceptBatch (window rule, price, charge; idempotency key `jrn:<run>:<seq>`), then each run goes
//     on by `next` or `failed`;
//   - waits set `resume_at`; a webhook node queues its call (automation/calls.ts) and waits for it;
//   - every run and every step touched is written by one statement each.
// A crash rolls the batch back, messages and records together; a commit does both once. A batch that
// throws is undone and its runs taken one by one, each in a savepoint: one that still throws is put
// back for a minute, alone.
import type { FastifyBaseLogger } from 'fastify';
import type { Tx } from '../../kernel/db.ts';
import type { CausedBy, EventEnvelope, EventInput } from '../../kernel/events.ts';
import { countryOf } from '../../kernel/phones.ts';
import { actor as actionsOf } from '../automation/act.ts';
import type { Action } from '../automation/actions.ts';
import { queueCall } from '../automation/calls.ts';
import { type ConversationRef, scopeOf } from '../automation/context.ts';
import {
  ACTOR_COLUMNS,
  type Actor,
  type ActorRow,
  actorFrom,
  automatedSendsLastHour,
  type EffectServices,
  failureOf,
  markCausedBy,
  renderDeep,
  runActions,
} from '../automation/effects.ts';
import { durationMs, nextOpening, windowZone } from '../automation/time.ts';
import { CONTACT_COLUMNS, type ContactRow } from '../contacts/repo.ts';
import { acceptBatch, type SendRequest, type SendResult } from '../messages/accept-batch.ts';
import type { MessageFieldsInput } from '../messages/content.ts';
import { prepareMessage, templateLookup } from '../messages/prepare.ts';
import { conditionEdge, type JourneyScope, splitEdge, switchEdge, waitEnd } from './decide.ts';
import { type Definition, type JourneyNode, LATE_MS } from './graph.ts';
import type { RunRow, StepRow } from './repo.ts';
import { toRun } from './schemas.ts';
import { Walk } from './walk.ts';

/** A due run, its version's definition and its account (`account_status`: the account's). */
type Due = RunRow & Omit<ActorRow, 'status'> & { account_status: string; definition: Definition };

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

const DUE_SQL = `
  SELECT ${RUN_COLUMNS.map((c) => `r.${c}`).join(', ')}, v.definition,
         ${ACTOR_COLUMNS.replace('a.status', 'a.status AS account_status')}
    FROM (SELECT r.id FROM journey_runs r
            JOIN journeys j ON j.id = r.journey_id
            JOIN accounts a ON a.id = r.account_id
           WHERE r.status IN ('running', 'waiting') AND r.resume_at <= $1 AND j.status = 'published'
             AND a.status = 'ACTIVE'
           ORDER BY r.resume_at LIMIT $2 FOR UPDATE OF r SKIP LOCKED) d
    JOIN journey_runs r ON r.id = d.id
    JOIN journey_versions v ON v.journey_id = r.journey_id AND v.version = r.version
    JOIN accounts a ON a.id = r.account_id
    LEFT JOIN account_channels c ON c.account_id = r.account_id
   ORDER BY r.resume_at`;

/** What a turn shares: the services, the batch's reads, the sends accepted. */
interface Turn {
  tx: Tx;
  s: EffectServices;
  now: Date;
  sent: SendResult[];
  contacts: Map<string, ContactRow>;
  conversations: Map<string, ConversationRef>;
  events: Map<string, { id: string; type: string; data: Record<string, unknown> }>;
}

/** A run in the turn: its walk, and what it acts with. */
interface Going {
  walk: Walk;
  due: Due;
  actor: Actor;
  causedBy: CausedBy;
}

function scopeFor(t: Turn, g: Going): JourneyScope {
  const run = g.walk.run;
  const event = (run.trigger_event_id && t.events.get(run.trigger_event_id)) || {
    id: run.id,
    type: 'journey.triggered',
    data: run.trigger_data,
  };
  const scope = scopeOf(
    t.contacts.get(run.contact_id) ?? null,
    t.conversations.get(run.contact_id) ?? null,
    event,
    t.now,
  );
  return { ...scope, run: { vars: run.vars }, trigger: { data: run.trigger_data } };
}

/** Reads the contact and its latest conversation again (an update_contact or assign changed them). */
async function reread(t: Turn, contactIds: string[]): Promise<void> {
  const { rows: contacts } = await t.tx.query<ContactRow>(
    `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE id = ANY($1)`,
    [contactIds],
  );
  for (const id of contactIds) t.contacts.delete(id);
  for (const c of contacts) t.contacts.set(c.id, c);
  const { rows: conversations } = await t.tx.query<ConversationRef & { contact_id: string }>(
    `SELECT DISTINCT ON (contact_id) contact_id, id, status, assignee_id FROM conversations
      WHERE contact_id = ANY($1) ORDER BY contact_id, opened_at DESC`,
    [contactIds],
  );
  for (const c of conversations) t.conversations.set(c.contact_id, c);
}

/** Runs actions of the action set through the services (update_contact, assign). */
async function act(t: Turn, g: Going, step: StepRow, actions: Action[]): Promise<void> {
  const results = await runActions(t.tx, actions, actionsOf(t.s, t.sent), {
    scope: scopeFor(t, g),
    actor: g.actor,
    causedBy: g.causedBy,
    keyPrefix: `jrn:${g.walk.run.id}:${step.seq}`,
  });
  await reread(t, [g.walk.run.contact_id]);
  const failed = results.find((r) => r.status !== 'succeeded');
  if (failed) {
    g.walk.leave(step, 'failed', {
      error: failed.error ?? { code: 'ACTION_FAILED', message: `${failed.type} did not succeed.` },
    });
  } else g.walk.leave(step, 'next');
}

function updateActions(config: Record<string, unknown>): Action[] {
  const c = config as {
    addTags?: string[];
    removeTags?: string[];
    setAttributes?: Record<string, string | number | boolean | null>;
  };
  return [
    ...(c.addTags ?? []).map((tag) => ({ type: 'add_tag', tag })),
    ...(c.removeTags ?? []).map((tag) => ({ type: 'remove_tag', tag })),
    ...Object.entries(c.setAttributes ?? {}).map(([key, value]) => ({ type: 'set_attribute', key, value })),
  ];
}

/** A send_message node: sent in this round's batch, or waiting for the send window to open. */
function sendOrWait(t: Turn, g: Going, step: StepRow): void {
  const window = g.walk.definition.settings.sendWindow;
  if (window) {
    const contact = t.contacts.get(g.walk.run.contact_id);
    const where = contact ? { attributes: contact.attributes, country: countryOf(contact.phone) } : null;
    const opening = nextOpening(t.now, window, windowZone(window, where));
    if (opening > t.now) {
      g.walk.wait(step, opening, { sendWindowOpensAt: opening.toISOString() });
      return;
    }
  }
  g.walk.sending = step;
}

/** Executes the node the run just entered. */
async function execute(t: Turn, g: Going, node: JourneyNode, step: StepRow): Promise<void> {
  const w = g.walk;
  switch (node.type) {
    case 'end':
      w.leave(step, 'end');
      return;
    case 'condition':
      w.leave(step, conditionEdge(node, scopeFor(t, g)).edge);
      return;
    case 'switch': {
      const { edge, output } = switchEdge(node, scopeFor(t, g));
      w.leave(step, edge, { output });
      return;
    }
    case 'split':
      w.leave(step, splitEdge(node, w.run.id).edge);
      return;
    case 'wait': {
      const end = waitEnd(node, scopeFor(t, g), t.now);
      if ('error' in end) w.leave(step, 'failed', { error: { code: 'NO_DATE', message: end.error } });
      else if (end > t.now) w.wait(step, end, { until: end.toISOString() });
      else {
        const late = t.now.getTime() - end.getTime() > LATE_MS && w.hasEdge(node.id, 'late');
        w.leave(step, late ? 'late' : 'next', { output: { until: end.toISOString() } });
      }
      return;
    }
    case 'wait_for_reply': {
      const until = new Date(t.now.getTime() + durationMs(node.config.timeout as string));
      w.run.resume_edge = null;
      w.wait(step, until, { until: until.toISOString() });
      return;
    }
    case 'send_message':
      sendOrWait(t, g, step);
      return;
    case 'update_contact':
      await act(t, g, step, updateActions(node.config));
      return;
    case 'assign':
      await act(t, g, step, [{ type: 'assign', ...node.config }]);
      return;
    case 'webhook': {
      const c = node.config as { url: string; body?: Record<string, unknown> };
      try {
        const body = c.body ? await renderDeep(c.body, scopeFor(t, g)) : {};
        const callId = await queueCall(
          t.tx,
          {
            accountId: w.run.account_id,
            journeyId: w.run.journey_id,
            nodeId: node.id,
            runId: w.run.id,
            url: c.url,
            // The run is added to the body (it wins over a key of the same name).
            payload: {
              ...body,
              run: {
                id: w.run.id,
                journeyId: w.run.journey_id,
                nodeId: node.id,
                contactId: w.run.contact_id,
              },
            },
          },
          t.now,
        );
        w.run.resume_edge = null;
        // It waits for the call's outcome (the sender makes it due), at the latest until it expires.
        w.wait(step, w.run.expires_at, { callId });
      } catch (err) {
        w.leave(step, 'failed', { error: failureOf(err) });
      }
      return;
    }
    default:
      w.leave(step, 'failed', {
        error: { code: 'NOT_AVAILABLE', message: `${node.type} nodes are not available in this release.` },
      });
  }
}

/** A waiting run whose time came: it leaves its node by the edge its wait ended with. */
function resume(t: Turn, g: Going): void {
  const w = g.walk;
  const step = w.open!;
  const node = w.node(step.node_id);
  const edge = w.run.resume_edge;
  w.run.resume_edge = null;
  switch (node?.type) {
    case 'wait':
      w.leave(step, 'next');
      return;
    case 'wait_for_reply':
      w.leave(step, edge ?? 'timeout');
      return;
    case 'webhook': {
      if (!edge) {
        // Woken before its call ended (a sandbox wake): it goes on waiting for the call.
        w.wait(step, w.run.expires_at);
        return;
      }
      const answer = w.run.vars[step.node_id] as { status?: number | null; error?: string } | undefined;
      if (edge === 'next') w.leave(step, 'next', { output: { status: answer?.status ?? null } });
      else {
        w.leave(step, 'failed', {
          error: {
            code: 'WEBHOOK_FAILED',
            message: answer?.error ?? `The URL answered ${answer?.status ?? 'nothing'} to every attempt.`,
          },
        });
      }
      return;
    }
    case 'send_message':
      sendOrWait(t, g, step);
      return;
    default:
      w.end('failed', {
        code: 'NODE_NOT_FOUND',
        message: `The journey version has no node ${step.node_id}.`,
      });
  }
}

/** The round's messages, accepted together; each run goes on by next or failed. */
async function sendRound(t: Turn, going: Going[]): Promise<void> {
  const recent = await automatedSendsLastHour(
    t.tx,
    going.map((g) => g.walk.run.contact_id),
    t.now,
  );
  const requests: SendRequest[] = [];
  const owners: { g: Going; step: StepRow }[] = [];
  for (const g of going) {
    const step = g.walk.sending!;
    g.walk.sending = null;
    const run = g.walk.run;
    const contact = t.contacts.get(run.contact_id)!;
    const count = recent.get(run.contact_id) ?? 0;
    if (count >= t.s.contactCapPerHour) {
      g.walk.leave(step, 'failed', {
        error: {
          code: 'CONTACT_CAP',
          message: `The contact got ${t.s.contactCapPerHour} messages from automation in the last hour.`,
        },
      });
      continue;
    }
    const node = g.walk.node(step.node_id)!;
    try {
      const message = await renderDeep(node.config.message as MessageFieldsInput, scopeFor(t, g));
      const prepared = await prepareMessage(
        { ...message, to: contact.phone },
        {
          countryCode: g.actor.countryCode,
          lookup: templateLookup(t.tx, run.account_id, t.s.approvedTemplates),
        },
      );
      requests.push({
        sender: {
          account: { id: run.account_id, channelProvider: g.actor.channelProvider },
          mode: g.actor.mode,
          // The step's message, at most once whatever happens.
          idempotencyKey: `jrn:${run.id}:${step.seq}`,
        },
        message: prepared,
      });
      owners.push({ g, step });
      recent.set(run.contact_id, count + 1);
    } catch (err) {
      g.walk.leave(step, 'failed', { error: failureOf(err) });
    }
  }
  const results = requests.length ? await acceptBatch(t.s, t.tx, requests) : [];
  const caused: { id: string; caused_by: CausedBy }[] = [];
  results.forEach((result, i) => {
    const { g, step } = owners[i]!;
    if (result.kind === 'refused') {
      g.walk.leave(step, 'failed', { error: { code: result.error.code, message: result.error.message } });
      return;
    }
    if (result.kind === 'accepted') {
      t.sent.push(result);
      caused.push({ id: result.message.id, caused_by: g.causedBy });
      g.walk.leave(step, 'next', { output: { messageId: result.message.id } });
    } else g.walk.leave(step, 'next');
  });
  await markCausedBy(t.tx, caused);
}

/** Walks every run until it stops: instant nodes at once, sends in rounds. */
async function walkAll(t: Turn, going: Going[]): Promise<void> {
  for (const g of going) {
    const w = g.walk;
    if (w.run.status === 'waiting') resume(t, g);
  }
  for (;;) {
    for (const g of going) {
      const w = g.walk;
      while (!w.stopped && !w.sending) {
        const entered = w.enter();
        if (entered) await execute(t, g, entered.node, entered.step);
      }
    }
    const sending = going.filter((g) => g.walk.sending);
    if (sending.length === 0) return;
    await sendRound(t, sending);
  }
}

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
  const steps = walks.flatMap((w) => [...w.steps.values()]);
  if (steps.length > 0) {
    await t.tx.query(
      `INSERT INTO journey_run_steps (run_id, seq, journey_id, node_id, type, status, edge, output, error, started_at,
                                      ended_at)
       SELECT x.run_id, x.seq, x.journey_id, x.node_id, x.type, x.status, x.edge, x.output, x.error, x.started_at,
              x.ended_at
         FROM jsonb_to_recordset($1::jsonb) AS x (run_id text, seq int, journey_id text, node_id text, type text,
              status text, edge text, output jsonb, error jsonb, started_at timestamptz, ended_at timestamptz)
       ON CONFLICT (run_id, seq) DO UPDATE
          SET status = EXCLUDED.status, edge = EXCLUDED.edge, output = EXCLUDED.output, error = EXCLUDED.error,
              ended_at = EXCLUDED.ended_at`,
      [JSON.stringify(steps)],
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
  await reread(t, [...new Set(rows.map((r) => r.contact_id))]);
  const eventIds = rows.flatMap((r) => (r.trigger_event_id ? [r.trigger_event_id] : []));
  if (eventIds.length > 0) {
    const { rows: events } = await tx.query<{ id: string; payload: string }>(
      'SELECT id, payload FROM events WHERE id = ANY($1)',
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
  const walks: Walk[] = [];
  const going: Going[] = [];
  for (const due of rows) {
    const { definition, account_status, plan_code, addons, country_code, provider, ...run } = due;
    const walk = new Walk(run, definition, open.get(run.id) ?? null, now);
    walks.push(walk);
    const account = actorFrom(run.account_id, {
      status: account_status,
      plan_code,
      addons,
      country_code,
      provider,
    });
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
      due,
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
export async function runDueJourneys(
  s: EffectServices,
  sent: SendResult[],
  log: FastifyBaseLogger,
  limit: number,
): Promise<number> {
  return s.db.transaction(async (tx) => {
    const now = s.now();
    const { rows } = await tx.query<Due>(DUE_SQL, [now, limit]);
    if (rows.length === 0) return 0;
    const batch: SendResult[] = [];
    await tx.query('SAVEPOINT journey_batch');
    try {
      await runTurns(tx, s, rows, now, batch);
      await tx.query('RELEASE SAVEPOINT journey_batch');
      sent.push(...batch);
      return rows.length;
    } catch (err) {
      await tx.query('ROLLBACK TO SAVEPOINT journey_batch');
      log.warn({ err }, 'a batch of journey runs failed; its runs are taken one by one');
    }
    for (const row of rows) {
      const own: SendResult[] = [];
      await tx.query('SAVEPOINT journey_run');
      try {
        await runTurns(tx, s, [row], now, own);
        await tx.query('RELEASE SAVEPOINT journey_run');
        sent.push(...own);
      } catch (err) {
        await tx.query('ROLLBACK TO SAVEPOINT journey_run');
        log.error({ err, runId: row.id }, 'a journey run failed unexpectedly; tried again in a minute');
        await tx.query('UPDATE journey_runs SET resume_at = $2 WHERE id = $1', [
          row.id,
          new Date(now.getTime() + 60_000),
        ]);
      }
    }
    return rows.length;
  });
}
