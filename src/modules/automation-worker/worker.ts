// The automation worker: takes events from `automation_inbox` (written by the outbox, outbox.ts)
// and runs what listens to them: the inbox rows are taken FOR UPDATE SKIP LOCKED, a batch per
// transaction; each event's rules run (their actions through the services, in the same
// transaction), the runs are recorded and the row deleted, and all of it commits or none of it.
// Each event runs in its own savepoint: one that fails is undone alone and tried again later. The
// same happens to the enrollments the event ends or starts (sequences/engine.ts) and to the journey
// runs it answers or starts (journeys/engine.ts). Between events it sends the sequence steps that are
// due (sequences/timer.ts) and advances the journey runs that are due (journeys/runner.ts), a batch
// per transaction. So an event is acted
// on at most once across any number of processes, and a crash mid-run loses nothing (the row is
// still there, the half-done run rolled back). Woken by a NOTIFY at the event's commit; polls too.
// An account that is suspended or closed, or whose plan has no automation, runs nothing: its
// events are dropped from the inbox.
import type { FastifyBaseLogger } from 'fastify';
import { WakeSignal } from '../../kernel/async/wake-signal.ts';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Tx } from '../../kernel/database/db.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import type { CausedBy, EventEnvelope } from '../../kernel/outbox/events.ts';
import type { AccountActor, EffectServices } from '../automation/index.ts';
import {
  type ActorRow,
  AUTOMATION_CHANNEL,
  AUTOMATION_DUE_CHANNEL,
  actor,
  actorFrom,
  batchOrOneByOne,
  CallSender,
  inboxActorFrom,
  loadScope,
  type RunScope,
} from '../automation/index.ts';
import { answerCustomer } from '../business-hours/index.ts';
import { wakeSnoozed } from '../conversations/index.ts';
import { surveyOnEvent } from '../csat/index.ts';
import { holdAgainstErasure, isErasedEvent } from '../erasure/index.ts';
import { answerRuns, runDueJourneys, scanTimedEntries, startOnEvent } from '../journeys/index.ts';
import { type SendResult, wakeDispatchers } from '../messages/index.ts';
import type { RuleRow } from '../rules/index.ts';
import { recordRuns, runRulesFor, scanTimed } from '../rules/index.ts';
import { enrollOnEvent, exitOnEvent, runDue } from '../sequences/index.ts';
import { judgeDueSla } from '../sla/index.ts';
import { ASSIGN_CHANNEL, drainQueues, drainTeam } from '../teams/index.ts';

/** What the worker needs beyond what actions need: the egress and secrets of call_webhook. */
export interface WorkerServices extends EffectServices {
  egress: Egress;
  secrets: SecretBox;
}

export interface WorkerSettings {
  pollIntervalMs: number;
  /**
   * Inbox loops per process, each taking the events of its share of the accounts (so one
   * account's events stay in order within a process) on its own connection.
   */
  lanes: number;
  /** How often timed triggers are looked for (rules/timed.ts, journeys/timed.ts). */
  scanIntervalMs: number;
}

interface Taken extends ActorRow {
  event_id: string;
  payload: string;
}

/** Due enrollments taken per transaction by the step timer. */
const DUE_BATCH = 250;

/** Runs of one event tried before it is given up (logged as an error). */
const MAX_ATTEMPTS = 5;

// Taken in two statements around the accounts' erasure locks (erasure/lock.ts): the inbox rows
// first, then, once no erasure of their accounts is under way, what the events say, read afresh
// (an event erased meanwhile reads as such, and is not run).
const TAKE_SQL = `
  SELECT event_id, account_id FROM automation_inbox
   WHERE (next_attempt_at IS NULL OR next_attempt_at <= $1)
     AND ($3::int = 1 OR mod(abs(hashtext(account_id)::bigint), $3::int) = $4::int)
   ORDER BY created_at, event_id LIMIT $2 FOR UPDATE SKIP LOCKED`;

const TAKEN_SQL = `
  SELECT i.event_id, e.payload, a.*
    FROM unnest($1::text[], $2::text[]) AS i (event_id, account_id)
    JOIN events e ON e.id = i.event_id
    JOIN account_actors a ON a.account_id = i.account_id
   ORDER BY e.created_at, i.event_id`;

/**
 * Inbox events taken per transaction: one commit (one wait for the disk) for many events, each run
 * in its own savepoint, in order.
 */
const EVENT_BATCH = 25;

/**
 * The accounts of `rows` that have sequences which may hold enrollments, and those with journeys
 * which may hold runs or start them (the others skip those steps).
 */
async function accountsWithState(
  tx: Tx,
  rows: Taken[],
): Promise<{ sequenced: Set<string>; journeyed: Set<string> }> {
  const { rows: found } = await tx.query<{ account_id: string; kind: string }>(
    `SELECT DISTINCT account_id, 'sequence' AS kind FROM sequences
      WHERE account_id = ANY($1) AND status IN ('active', 'paused')
     UNION
     SELECT DISTINCT account_id, 'journey' FROM journeys
      WHERE account_id = ANY($1) AND status IN ('published', 'paused')`,
    [[...new Set(rows.map((r) => r.account_id))]],
  );
  const of = (kind: string) => new Set(found.filter((r) => r.kind === kind).map((r) => r.account_id));
  return { sequenced: of('sequence'), journeyed: of('journey') };
}

export class AutomationWorker {
  readonly #s: EffectServices;
  readonly #calls: CallSender;
  #callsInFlight: Promise<void> | null = null;
  readonly #log: FastifyBaseLogger;
  readonly #settings: WorkerSettings;
  #running = false;
  #loopsDone: Promise<unknown> = Promise.resolve();
  #unlisten: (() => Promise<void>) | null = null;
  /** Wakes the lanes' loops (kernel/async/wake-signal.ts). */
  readonly #signal = new WakeSignal();
  /** Per lane: when to look for due steps next, and whether the last look found some. */
  readonly #nextDueCheck: number[] = [];
  readonly #dueBacklog: boolean[] = [];
  #scanTimer: NodeJS.Timeout | null = null;
  #scanning: Promise<void> | null = null;
  /** Teams whose queues a wake-up asked to give out (teams/assign.ts), and the drain under way. */
  readonly #teamsToDrain = new Set<string>();
  #draining: Promise<void> | null = null;
  /** Set when an event made journey runs due (answered or started): the runner looks at once. */
  #runsDue = false;

  constructor(s: WorkerServices, log: FastifyBaseLogger, settings: WorkerSettings) {
    this.#s = {
      ...s,
      runsDue: () => {
        this.#runsDue = true;
      },
    };
    this.#calls = new CallSender({ ...s, log, leaseMs: 60_000, onJourneyCall: () => this.dueNow() });
    this.#log = log;
    this.#settings = settings;
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    const unlistenEvents = await this.#s.db.listen(AUTOMATION_CHANNEL, () => this.wake());
    const unlistenDue = await this.#s.db.listen(AUTOMATION_DUE_CHANNEL, () => this.dueNow());
    const unlistenAssign = await this.#s.db.listen(ASSIGN_CHANNEL, (teamId) => this.drainSoon(teamId));
    this.#unlisten = async () => {
      await unlistenEvents();
      await unlistenDue();
      await unlistenAssign();
    };
    const lanes = Math.max(1, this.#settings.lanes);
    this.#loopsDone = Promise.all(Array.from({ length: lanes }, (_, lane) => this.#loop(lane, lanes)));
    this.#scanTimer = setInterval(() => {
      this.#scanning ??= this.scan()
        .then(() => undefined)
        .catch((err) => this.#log.warn({ err }, 'automation could not look for timed triggers'))
        .finally(() => {
          this.#scanning = null;
        });
    }, this.#settings.scanIntervalMs).unref();
  }

  /**
   * Fires the timed triggers that are due: rules' (rules/timed.ts), then journeys' timed entries
   * (journeys/timed.ts), whose runs the runner then takes at once; and wakes the snoozed
   * conversations whose time has come (their conversation.unsnoozed is a trigger like any event),
   * gives out the teams' waiting conversations their members have room for (teams/assign.ts), and
   * tells the SLA targets missed (sla/breaches.ts: a breach is a trigger like any event).
   * Answers how many fired, started or woke.
   */
  async scan(): Promise<number> {
    const woken = await wakeSnoozed(this.#s);
    const given = await drainQueues(this.#s);
    const breached = await judgeDueSla(this.#s);
    const sent: SendResult[] = [];
    const fired = await scanTimed(this.#s, actor(this.#s, sent));
    wakeDispatchers(this.#s, sent);
    const started = await scanTimedEntries(this.#s);
    if (started > 0) this.dueNow();
    return woken + given + breached + fired + started;
  }

  /**
   * Gives out a team's waiting conversations (teams/assign.ts `drainTeam`), the teams woken one after
   * another; a team woken while its drain runs is drained again after it.
   */
  drainSoon(teamId: string): void {
    if (teamId) this.#teamsToDrain.add(teamId);
    this.#draining ??= (async () => {
      for (const id of this.#teamsToDrain) {
        this.#teamsToDrain.delete(id);
        await drainTeam(this.#s, id).catch((err) =>
          this.#log.warn({ err, teamId: id }, 'could not give out a team’s waiting conversations'),
        );
      }
    })().finally(() => {
      this.#draining = null;
      if (this.#teamsToDrain.size > 0 && this.#running) this.drainSoon('');
    });
  }

  /** Sends a batch of due sequence steps; answers how many enrollments were taken. */
  async runDue(): Promise<number> {
    const sent: SendResult[] = [];
    const taken = await runDue(this.#s, sent, this.#log, DUE_BATCH);
    wakeDispatchers(this.#s, sent);
    return taken;
  }

  /** Advances a batch of due journey runs; answers how many runs were taken. */
  async runDueJourneys(): Promise<number> {
    const sent: SendResult[] = [];
    const taken = await runDueJourneys(this.#s, sent, this.#log, DUE_BATCH);
    wakeDispatchers(this.#s, sent);
    return taken;
  }

  /**
   * Looks for due sequence steps and journey runs at once (a run started, a wait answered or woken),
   * not at the next interval.
   */
  dueNow(): void {
    this.#nextDueCheck.fill(0);
    this.wake();
  }

  wake(): void {
    this.#signal.wake();
  }

  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    if (this.#scanTimer) clearInterval(this.#scanTimer);
    this.wake();
    await this.#unlisten?.();
    await this.#loopsDone;
    await this.#scanning;
    await this.#draining;
    await this.#callsInFlight;
  }

  async #loop(lane: number, lanes: number): Promise<void> {
    while (this.#running) {
      const mark = this.#signal.mark;
      let took = false;
      try {
        took = await this.runOne(lane, lanes);
      } catch (err) {
        this.#log.warn({ err }, 'automation could not run events; they stay in the inbox');
      }
      took = (await this.#betweenEvents(lane)) || took;
      if (!this.#running) break;
      if (took || this.#signal.wokenSince(mark)) continue;
      await this.#signal.sleep(this.#settings.pollIntervalMs);
    }
  }

  /**
   * Between events: due sequence steps and journey runs (every lane takes batches of its own, SKIP LOCKED), and, from
   * lane 0, call_webhook's calls, sent beside the loop (an attempt may wait seconds for its answer).
   */
  async #betweenEvents(lane: number): Promise<boolean> {
    // Looked for at most once a poll interval (every NOTIFY of an event wakes the loops), and at
    // once again while a backlog lasts.
    const now = Date.now();
    if (!this.#dueBacklog[lane] && now < (this.#nextDueCheck[lane] ?? 0)) return false;
    this.#nextDueCheck[lane] = now + this.#settings.pollIntervalMs;
    if (lane === 0)
      this.#callsInFlight ??= this.#calls
        .sendDue()
        .then((n) => {
          if (n > 0) this.wake();
        })
        .catch((err) => this.#log.warn({ err }, 'automation could not send webhook calls'))
        .finally(() => {
          this.#callsInFlight = null;
        });
    let backlog = false;
    try {
      backlog = (await this.runDue()) > 0;
    } catch (err) {
      this.#log.warn({ err }, 'automation could not send due sequence steps; they stay due');
    }
    try {
      backlog = (await this.runDueJourneys()) > 0 || backlog;
    } catch (err) {
      this.#log.warn({ err }, 'automation could not advance due journey runs; they stay due');
    }
    this.#dueBacklog[lane] = backlog;
    return backlog;
  }

  /**
   * Runs the oldest events of the inbox that no other worker holds, a batch in one transaction;
   * answers whether there were any.
   */
  async runOne(lane = 0, lanes = 1): Promise<boolean> {
    const sent: SendResult[] = [];
    const taken = await this.#s.db.transaction(async (tx) => {
      const { rows: inbox } = await tx.query<{ event_id: string; account_id: string }>(TAKE_SQL, [
        this.#s.now(),
        EVENT_BATCH,
        lanes,
        lane,
      ]);
      if (inbox.length === 0) return 0;
      await holdAgainstErasure(
        tx,
        inbox.map((r) => r.account_id),
      );
      const { rows } = await tx.query<Taken>(TAKEN_SQL, [
        inbox.map((r) => r.event_id),
        inbox.map((r) => r.account_id),
      ]);
      const { sequenced, journeyed } = await accountsWithState(tx, rows);
      const rules = new Map<string, RuleRow[]>();
      const run = (row: Taken, into: SendResult[]) =>
        this.#runEvent(tx, row, into, {
          sequenced: sequenced.has(row.account_id),
          journeyed: journeyed.has(row.account_id),
          rules,
        });
      // Usually every event runs: the batch in one go. When one throws, the batch is undone and
      // its events run again one by one, each in a savepoint, so the one that fails fails alone: it
      // is tried again later, or given up (#failed), and the others' rows are deleted.
      const failed = new Set<string>();
      await batchOrOneByOne(
        tx,
        rows,
        async (batch, into) => {
          for (const row of batch) await run(row, into);
        },
        sent,
        {
          batchFailed: () => {},
          rowFailed: async (row, err) => {
            failed.add(row.event_id);
            await this.#failed(tx, row.event_id, err);
          },
        },
      );
      await tx.query('DELETE FROM automation_inbox WHERE event_id = ANY($1)', [
        inbox.filter((r) => !failed.has(r.event_id)).map((r) => r.event_id),
      ]);
      return inbox.length;
    });
    wakeDispatchers(this.#s, sent);
    if (this.#runsDue) {
      this.#runsDue = false;
      this.dueNow();
    }
    return taken > 0;
  }

  /** An event's run failed as a whole (rolled back): it is tried again later, or given up. */
  async #failed(tx: Tx, eventId: string, err: unknown): Promise<void> {
    const { rows } = await tx.query<{ attempts: number }>(
      `UPDATE automation_inbox SET attempts = attempts + 1,
              next_attempt_at = $2::timestamptz + make_interval(secs => power(2, attempts + 1))
        WHERE event_id = $1 RETURNING attempts`,
      [eventId, this.#s.now()],
    );
    if ((rows[0]?.attempts ?? 0) >= MAX_ATTEMPTS) {
      await tx.query('DELETE FROM automation_inbox WHERE event_id = $1', [eventId]);
      this.#log.error({ err, eventId }, 'automation gave up on an event after repeated failures');
    } else {
      this.#log.warn({ err, eventId }, 'automation could not run an event; it will be tried again');
    }
  }

  /** What one event does: the enrollments it ends, its rules, the enrollments and journey runs it starts or answers. */
  /** The away message or the greeting (a customer's message), the survey and its follow-ups. */
  async #inboxReplies(
    tx: Tx,
    event: EventEnvelope,
    actor: AccountActor & { mode: 'live' | 'sandbox' },
    sent: SendResult[],
  ): Promise<void> {
    await answerCustomer(this.#s, tx, event, actor, sent);
    await surveyOnEvent(this.#s, tx, event, actor, sent);
  }

  async #runEvent(
    tx: Tx,
    taken: Taken,
    sent: SendResult[],
    batch: { sequenced: boolean; journeyed: boolean; rules: Map<string, RuleRow[]> },
  ): Promise<void> {
    const { sequenced, journeyed } = batch;
    // An event erased before it ran says nothing to act on.
    if (isErasedEvent(taken.payload)) return;
    const event = JSON.parse(taken.payload) as EventEnvelope & { causedBy?: CausedBy };
    const data = event.data as { sandbox?: boolean };
    const mode = data.sandbox === true ? 'sandbox' : 'live';
    const account = actorFrom(taken);
    // Business hours' replies are the inbox's, on every plan: an active account gets them.
    const replying = account ?? inboxActorFrom(taken);
    if (!account) {
      if (replying) await this.#inboxReplies(tx, event, { ...replying, mode }, sent);
      return;
    }
    const now = this.#s.now();
    // A reply ends enrollments before the rules it triggers run; the rules see it ended.
    if (sequenced) await exitOnEvent(tx, this.#s, event);
    const runs = await runRulesFor(tx, event, {
      act: actor(this.#s, sent),
      actor: { ...account, mode },
      now,
      rules: batch.rules,
    });
    await recordRuns(tx, this.#s.events, runs);
    // The inbox's own replies, after the rules the same event set off.
    await this.#inboxReplies(tx, event, { ...account, mode }, sent);
    let scope: Promise<RunScope> | null = null;
    const scopeOnce = () => {
      scope ??= loadScope(tx, event, now);
      return scope;
    };
    if (sequenced) await enrollOnEvent(tx, this.#s, event, scopeOnce);
    if (journeyed) {
      const moved =
        (await answerRuns(tx, this.#s, event, scopeOnce)) +
        (await startOnEvent(tx, this.#s, event, scopeOnce));
      if (moved > 0) this.#runsDue = true;
    }
  }
}
