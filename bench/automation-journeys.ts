// The journey phases of the automation benchmark (bench/automation.ts § 3): due runs,
// trigger → first message, and the memory of waiting runs.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Database } from '../src/kernel/database/db.ts';
import { newId } from '../src/kernel/values/ids.ts';
import { AUTOMATION_DUE_CHANNEL } from '../src/modules/automation/outbox.ts';
import {
  type Account,
  type Client,
  client,
  ENROLLMENTS,
  HOLD_SECONDS,
  JOURNEY_RUNS,
  say,
  TEXT,
  TIMER_ACCOUNTS,
  type TimerSetup,
  TRIGGER_CONCURRENCY,
  TRIGGER_RATE,
  TRIGGER_SECONDS,
  WAITING_DUE,
  WAITING_RUNS,
  WARM_UP_SECONDS,
} from './automation-common.ts';
import { describe, openLoop } from './load.ts';
import { record } from './report.ts';
import { percentile, sleep, startServer, stopServer, withCpuUsage } from './support.ts';

// ---------------------------------------------------------------- 3. journeys

/** What a journey phase runs on: the timers' accounts and contacts, a journey of each account. */
export interface JourneySet {
  accounts: Account[];
  contactIds: string[][];
  /** Per account, its journey. */
  journeys: string[];
  /** Per account, the runs started through the API. */
  runIds: string[][];
}

/**
 * Publishes a journey in each account: `wait P1D → send_message → end` (timer), or `send_message →
 * end` (instant). Re-entry `always`: a contact may have several runs.
 */
export async function publishJourneys(
  c: Client,
  setup: TimerSetup,
  kind: 'timer' | 'instant',
): Promise<JourneySet> {
  const timer = kind === 'timer';
  const journeys: string[] = [];
  for (const a of setup.accounts) {
    const journey = await c.ok('POST', '/journeys', a.key, {
      name: `bench ${kind}`,
      entry: { trigger: 'api', reentry: 'always', start: timer ? 'pause' : 'hello' },
      nodes: [
        ...(timer ? [{ id: 'pause', type: 'wait', config: { duration: 'P1D' } }] : []),
        { id: 'hello', type: 'send_message', config: { message: { type: 'text', text: TEXT } } },
        { id: 'done', type: 'end' },
      ],
      edges: [...(timer ? [{ from: 'pause', to: 'hello' }] : []), { from: 'hello', to: 'done' }],
    });
    await c.ok('POST', `/journeys/${journey.id}/publish`, a.key);
    journeys.push(journey.id as string);
  }
  return {
    accounts: setup.accounts,
    contactIds: setup.contactIds,
    journeys,
    runIds: setup.accounts.map(() => []),
  };
}

/** The n-th trigger of a phase: the accounts in turn, each account's contacts in turn. */
export function nthTrigger(set: JourneySet, n: number) {
  const i = n % set.accounts.length;
  const contacts = set.contactIds[i]!;
  return {
    i,
    path: `/journeys/${set.journeys[i]}/trigger`,
    key: set.accounts[i]!.sandboxKey,
    body: { contactId: contacts[Math.floor(n / set.accounts.length) % contacts.length] },
  };
}

/** Why a trigger's answer is not a run started (202, running), or null. */
export function refusedTrigger(res: Awaited<ReturnType<Client['api']>>): string | null {
  if (res.status === 202 && res.body?.status === 'running' && typeof res.body.id === 'string') return null;
  return `POST /journeys/{id}/trigger: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
}

/** Starts `count` runs through the API (sandbox keys), TRIGGER_CONCURRENCY at once; throws on any refusal. */
export async function triggerRuns(c: Client, set: JourneySet, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: TRIGGER_CONCURRENCY }, async () => {
      while (next < count) {
        const t = nthTrigger(set, next++);
        const res = await c.api('POST', t.path, { 'x-api-key': t.key }, t.body);
        const refused = refusedTrigger(res);
        if (refused) throw new Error(refused);
        set.runIds[t.i]!.push(res.body.id as string);
      }
    }),
  );
}

/**
 * Waits until none of the set's journeys has a run in one of `statuses` (asked through the API, as
 * the enrollments are); answers when it saw that (performance.now()).
 */
export async function noRunsIn(
  c: Client,
  set: JourneySet,
  statuses: string[],
  timeoutMs: number,
): Promise<number> {
  const pending = new Set(set.journeys.keys());
  const until = performance.now() + timeoutMs;
  for (;;) {
    for (const i of [...pending]) {
      let any = false;
      for (const status of statuses) {
        const page = await c.ok(
          'GET',
          `/journeys/${set.journeys[i]}/runs?status=${status}&limit=1`,
          set.accounts[i]!.key,
        );
        if (page.data.length > 0) {
          any = true;
          break;
        }
      }
      if (!any) pending.delete(i);
    }
    if (pending.size === 0) return performance.now();
    if (performance.now() > until) {
      throw new Error(`journey runs still ${statuses.join(' or ')} after ${timeoutMs / 1000} s`);
    }
    await sleep(200);
  }
}

/** The timer journeys, one run of each started through the API (the copies' templates), waiting. */
export async function startJourneyTimers(c: Client, setup: TimerSetup): Promise<JourneySet> {
  const set = await publishJourneys(c, setup, 'timer');
  await triggerRuns(c, set, set.accounts.length);
  await noRunsIn(c, set, ['running'], 60_000);
  return set;
}

/**
 * BENCH_JOURNEY_RUNS runs waiting at their timer in all: the started ones' copies, made in SQL
 * (through the API, setting up 10,000 runs would take minutes on PGlite, whose one connection
 * serves the triggers and the runner walking each run to its wait, one after the other).
 */
export async function copyJourneyTimers(db: Database, set: JourneySet): Promise<void> {
  const started = performance.now();
  const templates = set.runIds.map((ids) => ids[0]!);
  await copyWaitingRuns(db, set, templates, JOURNEY_RUNS - templates.length, 1);
  say(
    `journeys: ${JOURNEY_RUNS} runs waiting at their timer (${templates.length} started through the API, the rest copied in SQL in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
}

/**
 * Checks every run completed by wait → send_message → end with its one message (SQL, after the
 * run); answers the step rows the drain wrote (every step the runs closed: 3 a run).
 */
export async function verifyJourneyTimers(db: Database, set: JourneySet): Promise<number> {
  const { rows } = await db.query<{ completed: number; total: number; first: string | null }>(
    `SELECT count(*) FILTER (WHERE status = 'completed' AND step_count = 3 AND current_node_id = 'done')::int AS completed,
            count(*)::int AS total,
            min(CASE WHEN NOT (status = 'completed' AND step_count = 3)
                     THEN status || ' at ' || current_node_id || ' ' || coalesce(error::text, '') END) AS first
       FROM journey_runs WHERE journey_id = ANY($1::text[])`,
    [set.journeys],
  );
  const { completed, total, first } = rows[0]!;
  if (completed !== JOURNEY_RUNS || total !== JOURNEY_RUNS) {
    throw new Error(
      `${completed} of ${total} journey runs completed (${JOURNEY_RUNS} expected; e.g. ${first})`,
    );
  }
  const { rows: steps } = await db.query<{ closed: number; open: number }>(
    `SELECT count(*) FILTER (WHERE status = 'completed')::int AS closed,
            count(*) FILTER (WHERE status <> 'completed')::int AS open
       FROM journey_run_steps WHERE journey_id = ANY($1::text[])`,
    [set.journeys],
  );
  const { closed, open } = steps[0]!;
  if (closed !== 3 * JOURNEY_RUNS || open !== 0) {
    throw new Error(
      `${closed} journey steps completed and ${open} not (${3 * JOURNEY_RUNS} completed expected)`,
    );
  }
  const { rows: sent } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM journey_runs r
       JOIN messages m ON m.account_id = r.account_id AND m.idempotency_key = 'jrn:' || r.id || ':2'
      WHERE r.journey_id = ANY($1::text[])`,
    [set.journeys],
  );
  if (sent[0]!.n !== JOURNEY_RUNS)
    throw new Error(`${sent[0]!.n} of ${JOURNEY_RUNS} journey runs sent their message`);
  return closed;
}

export function recordJourneyTimers(
  database: 'PostgreSQL' | 'PGlite',
  figures: { seconds: number; steps: number },
  sequences: { perSecond: number },
  how: string,
) {
  const stepsPerSecond = figures.steps / figures.seconds;
  const sendsPerSecond = JOURNEY_RUNS / figures.seconds;
  const ratio = sendsPerSecond / sequences.perSecond;
  const runs = JOURNEY_RUNS.toLocaleString('en');
  say(
    `${JOURNEY_RUNS} due journey runs (${database}): ${stepsPerSecond.toFixed(0)} steps/s, ${sendsPerSecond.toFixed(0)} sent/s ` +
      `(drained in ${figures.seconds.toFixed(1)} s); due sequence steps: ${sequences.perSecond.toFixed(0)} sent/s; ratio ${ratio.toFixed(2)}`,
  );
  const note =
    `all due at once (${how}) until none running or waiting, ${figures.seconds.toFixed(1)} s, over ${TIMER_ACCOUNTS} accounts; ` +
    `${figures.steps} journey_run_steps rows written (each run closes its wait and writes send_message and end), one message a run (sandbox keys)`;
  record({
    figure: `${runs} due journey runs (wait → send_message → end), steps written (${database})`,
    value: stepsPerSecond,
    unit: 'steps/s',
    note,
  });
  record({
    figure: `${runs} due journey runs (wait → send_message → end), messages sent (${database})`,
    value: sendsPerSecond,
    unit: 'sends/s',
    baseline: {
      name: `${ENROLLMENTS.toLocaleString('en')} due sequence steps (one message each), the same run`,
      value: sequences.perSecond,
    },
    note,
  });
}

/** PostgreSQL, part a: the runs waiting, all made due by one UPDATE (and a NOTIFY), drained. */
export async function dueJourneysPostgres(
  c: Client,
  db: Database,
  setup: TimerSetup,
  vacuum: () => Promise<void>,
): Promise<{ seconds: number; steps: number }> {
  const set = await startJourneyTimers(c, setup);
  await copyJourneyTimers(db, set);
  await vacuum();
  await db.transaction(async (tx) => {
    await tx.query(
      `UPDATE journey_runs SET resume_at = now() WHERE status = 'waiting' AND journey_id = ANY($1::text[])`,
      [set.journeys],
    );
    await tx.query(`SELECT pg_notify('${AUTOMATION_DUE_CHANNEL}', '')`);
  });
  const due = performance.now();
  const done = await noRunsIn(c, set, ['running', 'waiting'], 600_000);
  return { seconds: (done - due) / 1000, steps: await verifyJourneyTimers(db, set) };
}

/** PostgreSQL, part b: trigger → the run's first message accepted, at TRIGGER_RATE triggers/s. */
export async function triggerToMessage(
  c: Client,
  db: Database,
  setup: TimerSetup,
  vacuum: () => Promise<void>,
) {
  const set = await publishJourneys(c, setup, 'instant');
  let next = 0;
  /** Per measured run, its request's scheduled start and its answer (ms since the epoch). */
  const scheduled = new Map<string, number>();
  const answered = new Map<string, number>();
  let loopStart = 0;
  const trigger =
    (keep: boolean) =>
    async (i: number): Promise<true | string> => {
      const t = nthTrigger(set, next++);
      const res = await c.api('POST', t.path, { 'x-api-key': t.key }, t.body);
      const refused = refusedTrigger(res);
      if (refused) return refused;
      if (keep) {
        scheduled.set(res.body.id as string, performance.timeOrigin + loopStart + (i * 1000) / TRIGGER_RATE);
        answered.set(res.body.id as string, performance.timeOrigin + performance.now());
      }
      return true;
    };
  const live = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM journey_runs WHERE journey_id = ANY($1::text[]) AND status IN ('running', 'waiting')`,
        [set.journeys],
      )
    ).rows[0]!.n;
  const allEnded = async (seconds: number) => {
    const timeoutSeconds = 60 + 2 * seconds;
    const started = performance.now();
    let left = await live();
    while (left > 0 && performance.now() - started < timeoutSeconds * 1000) {
      await sleep(100);
      left = await live();
    }
    if (left > 0)
      throw new Error(
        `${left} triggered runs still running or waiting ${timeoutSeconds} s after the last trigger`,
      );
    return (performance.now() - started) / 1000;
  };

  await vacuum();
  loopStart = performance.now();
  const warmUp = await openLoop(TRIGGER_RATE, WARM_UP_SECONDS, trigger(false));
  if (warmUp.failures)
    throw new Error(`warm-up: ${warmUp.failures} triggers failed (${warmUp.firstFailure})`);
  await allEnded(WARM_UP_SECONDS);
  loopStart = performance.now();
  const { result: load, cpu } = await withCpuUsage(() =>
    openLoop(TRIGGER_RATE, TRIGGER_SECONDS, trigger(true)),
  );
  if (load.failures) throw new Error(`${load.failures} triggers failed (first: ${load.firstFailure})`);
  say(`journey triggers (POST /journeys/{id}/trigger, ${TRIGGER_RATE}/s, open loop): ${describe(load)}`);
  say(`         meanwhile: ${cpu}`);
  const backlogSeconds = await allEnded(TRIGGER_SECONDS);

  const { rows } = await db.query<{ id: string; status: string; at: number | null }>(
    `SELECT r.id, r.status, (extract(epoch FROM m.created_at) * 1000)::float8 AS at
       FROM journey_runs r
       LEFT JOIN messages m ON m.account_id = r.account_id AND m.idempotency_key = 'jrn:' || r.id || ':1'
      WHERE r.id = ANY($1::text[])`,
    [[...scheduled.keys()]],
  );
  const unsent = rows.filter((r) => r.status !== 'completed' || r.at === null);
  if (rows.length !== scheduled.size || unsent.length > 0) {
    throw new Error(
      `${rows.length - unsent.length} of ${scheduled.size} triggered runs completed with their message (e.g. ${JSON.stringify(unsent[0])})`,
    );
  }
  const latencies = rows.map((r) => Number(r.at) - scheduled.get(r.id)!).sort((a, b) => a - b);
  // The runner's share: from the trigger's answer (the run committed, the worker woken) to the message.
  const afterAnswer = rows.map((r) => Number(r.at) - answered.get(r.id)!).sort((a, b) => a - b);
  const figures = {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1)!,
    note:
      `${latencies.length} runs (${TRIGGER_RATE}/s over ${set.accounts.length} accounts for ${TRIGGER_SECONDS} s, after ${WARM_UP_SECONDS} s of warm-up), ` +
      `each completed with its message; from the request's scheduled start to the message's created_at (in the runner's transaction, before its commit); ` +
      `the last run ended ${backlogSeconds.toFixed(1)} s after the last trigger's answer; trigger POST (202) p50 ${load.p50.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms; ` +
      `from the 202 to the message p50 ${percentile(afterAnswer, 0.5).toFixed(1)} ms, p99 ${percentile(afterAnswer, 0.99).toFixed(1)} ms`,
  };
  say(
    `journey trigger → first message accepted (PostgreSQL): p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms, max ${figures.max.toFixed(1)} ms (${latencies.length} runs)`,
  );
  say(
    `         from the trigger's 202 to the message: p50 ${percentile(afterAnswer, 0.5).toFixed(1)} ms, p99 ${percentile(afterAnswer, 0.99).toFixed(1)} ms; the last run ended ${backlogSeconds.toFixed(1)} s after the last 202`,
  );
  return figures;
}

/** A process's resident memory now and its peak so far, in MiB (Linux's VmRSS and VmHWM). */
export function memoryOf(proc: ChildProcess): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/**
 * Copies of each account's waiting run `templates[i]` (started through the API), made in SQL with
 * their open wait step: new ids, the account's contacts in turn from `offset`, resume_at a
 * millisecond apart. `count` in all, over the accounts; answers the new ids.
 */
export async function copyWaitingRuns(
  db: Database,
  set: JourneySet,
  templates: string[],
  count: number,
  offset: number,
): Promise<string[]> {
  const all: string[] = [];
  for (const [i, template] of templates.entries()) {
    const n = Math.floor(count / templates.length) + (i < count % templates.length ? 1 : 0);
    const runIds = Array.from({ length: n }, () => newId('journeyRun'));
    const contacts = set.contactIds[i]!;
    const contactIds = runIds.map((_, k) => contacts[(offset + k) % contacts.length]!);
    await db.transaction(async (tx) => {
      const { rowCount } = await tx.query(
        `INSERT INTO journey_runs (id, account_id, journey_id, version, contact_id, status, current_node_id, resume_at,
                                   resume_edge, vars, trigger_data, trigger_event_id, depth, error, step_count,
                                   last_node_id, repeat_count, sandbox, expires_at, started_at, updated_at, ended_at)
         SELECT x.id, t.account_id, t.journey_id, t.version, x.contact_id, t.status, t.current_node_id,
                t.resume_at + x.n * interval '1 millisecond', t.resume_edge, t.vars, t.trigger_data, t.trigger_event_id,
                t.depth, t.error, t.step_count, t.last_node_id, t.repeat_count, t.sandbox, t.expires_at, t.started_at,
                t.updated_at, t.ended_at
           FROM journey_runs t, unnest($2::text[], $3::text[]) WITH ORDINALITY AS x (id, contact_id, n)
          WHERE t.id = $1 AND t.status = 'waiting'`,
        [template, runIds, contactIds],
      );
      if (rowCount !== n) throw new Error(`the template run ${template} is not waiting`);
      await tx.query(
        `INSERT INTO journey_run_steps (run_id, seq, journey_id, node_id, type, status, edge, output, error, started_at,
                                        ended_at)
         SELECT x.id, s.seq, s.journey_id, s.node_id, s.type, s.status, s.edge, s.output, s.error, s.started_at, s.ended_at
           FROM journey_run_steps s, unnest($2::text[]) AS x (id)
          WHERE s.run_id = $1`,
        [template, runIds],
      );
    });
    all.push(...runIds);
  }
  return all;
}

/**
 * PostgreSQL, part c: the server's peak RSS with WAITING_RUNS runs waiting, against the same
 * process before, with none waiting, having advanced as many due runs as it will advance after.
 */
export async function waitingRunsMemory(
  env: { PORT: string } & Record<string, string>,
  db: Database,
  setup: TimerSetup,
  vacuum: () => Promise<void>,
) {
  const label = `PostgreSQL server, ${WAITING_RUNS.toLocaleString('en')} waiting journey runs`;
  const server = await startServer(env, { label });
  const c = client(Number(env.PORT));
  const set = await publishJourneys(c, setup, 'timer');
  const count = async (sql: string, params: unknown[] = [set.journeys]) =>
    (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
  /** One waiting run per account through the API: the template of the copies. */
  const templates = async () => {
    const before = set.runIds.map((ids) => ids.length);
    await triggerRuns(c, set, set.accounts.length);
    await noRunsIn(c, set, ['running'], 60_000);
    return set.runIds.map((ids, i) => ids[before[i]!]!);
  };
  /** Makes the chosen runs due (and the runner told so); answers once none is due, in seconds. */
  const dueAndDrained = async (where: string, params: unknown[]) => {
    await db.transaction(async (tx) => {
      await tx.query(`UPDATE journey_runs SET resume_at = now() WHERE ${where}`, params);
      await tx.query(`SELECT pg_notify('${AUTOMATION_DUE_CHANNEL}', '')`);
    });
    const started = performance.now();
    while (
      (await count(
        `SELECT count(*)::int AS n FROM journey_runs
          WHERE journey_id = ANY($1::text[]) AND status IN ('running', 'waiting') AND resume_at <= now()`,
      )) > 0
    ) {
      if (performance.now() - started > 300_000) throw new Error('due journey runs left after 300 s');
      await sleep(100);
    }
    return (performance.now() - started) / 1000;
  };
  const ended = async (expected: number) => {
    const completed = await count(
      `SELECT count(*)::int AS n FROM journey_runs WHERE journey_id = ANY($1::text[]) AND status = 'completed'`,
    );
    const other = await count(
      `SELECT count(*)::int AS n FROM journey_runs
        WHERE journey_id = ANY($1::text[]) AND status NOT IN ('completed', 'waiting')`,
    );
    if (completed !== expected || other !== 0) {
      throw new Error(
        `${completed} journey runs completed (${expected} expected) and ${other} ended otherwise`,
      );
    }
  };

  // The baseline: WAITING_DUE runs (waiting, then due at once) advanced, as many as fall due below,
  // then the process idle with no run waiting.
  const warm = await copyWaitingRuns(
    db,
    set,
    await templates(),
    Math.max(0, WAITING_DUE - set.accounts.length),
    0,
  );
  await vacuum();
  const warmSeconds = await dueAndDrained(`journey_id = ANY($1::text[]) AND status = 'waiting'`, [
    set.journeys,
  ]);
  await ended(warm.length + set.accounts.length);
  await sleep(3000);
  const idle = memoryOf(server);

  // The waiting runs: one per account through the API, the rest its copies in SQL (starting 100,000
  // runs through the API would measure the API for minutes; the runner reads a waiting run the
  // same way however it was written), a day ahead. The worker polls over them for a while.
  const made = performance.now();
  await copyWaitingRuns(db, set, await templates(), WAITING_RUNS - set.accounts.length, 1);
  const madeSeconds = (performance.now() - made) / 1000;
  const waiting = await count(
    `SELECT count(*)::int AS n FROM journey_runs WHERE journey_id = ANY($1::text[]) AND status = 'waiting'`,
  );
  if (waiting !== WAITING_RUNS) throw new Error(`${waiting} of ${WAITING_RUNS} journey runs waiting`);
  await vacuum();
  const mib = (
    await db.query<{ mib: number }>(
      `SELECT ((pg_total_relation_size('journey_runs') + pg_total_relation_size('journey_run_steps')) / 1048576.0)::float8 AS mib`,
    )
  ).rows[0]!.mib;
  let holdRss = memoryOf(server).rss;
  const holdEnd = performance.now() + HOLD_SECONDS * 1000;
  while (performance.now() < holdEnd) {
    await sleep(200);
    holdRss = Math.max(holdRss, memoryOf(server).rss);
  }
  const held = memoryOf(server);

  // WAITING_DUE of them due (the contacts' runs spread: one a contact before any has two), advanced.
  const dueSeconds = await dueAndDrained(
    `id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY contact_id ORDER BY id) AS k
                              FROM journey_runs WHERE status = 'waiting' AND journey_id = ANY($1::text[])) w
             ORDER BY k, id LIMIT $2)`,
    [set.journeys, WAITING_DUE],
  );
  await ended(2 * WAITING_DUE);
  await sleep(3000);
  const end = memoryOf(server);
  await c.http.close();
  await stopServer(server);

  const runs = WAITING_RUNS.toLocaleString('en');
  const due = WAITING_DUE.toLocaleString('en');
  const baseline = {
    name: `the same process before, no run waiting, after advancing ${due} due runs`,
    value: idle.peak,
  };
  const ratios = [held.peak / idle.peak, end.peak / idle.peak];
  const note =
    `RSS now/peak (MiB): ${idle.rss.toFixed(0)}/${idle.peak.toFixed(0)} with none waiting, after ${due} runs fell due and were advanced in ${warmSeconds.toFixed(1)} s; ` +
    `${runs} waiting (${set.accounts.length} started through the API, the rest copied in SQL in ${madeSeconds.toFixed(1)} s; journey_runs and journey_run_steps ${mib.toFixed(0)} MiB on disk), ` +
    `the worker polling over them for ${HOLD_SECONDS} s: at most ${holdRss.toFixed(0)}, ${held.rss.toFixed(0)}/${held.peak.toFixed(0)}; ` +
    `then ${due} of them due and advanced in ${dueSeconds.toFixed(1)} s: ${end.rss.toFixed(0)}/${end.peak.toFixed(0)}`;
  say(
    `${runs} waiting journey runs (PostgreSQL): peak RSS ${held.peak.toFixed(0)} MiB none due, ${end.peak.toFixed(0)} MiB after ${due} of them fell due; ` +
      `${idle.peak.toFixed(0)} MiB before, none waiting; ratios ${ratios.map((r) => r.toFixed(2)).join(', ')} (targets ≤ 1.1, ≤ 1.2)`,
  );
  say(`         ${note}`);
  // Targets: waiting costs no memory (≤ 1.1×); advancing the due ones again may grow the heap a
  // little beyond what the same work did before the baseline (≤ 1.2×: ~100 MiB, 1 KiB a waiting run).
  for (const [figure, value, ratio, target] of [
    [`peak RSS with ${runs} journey runs waiting, none due (PostgreSQL)`, held.peak, ratios[0]!, 1.1],
    [
      `peak RSS with ${runs} journey runs waiting, ${due} of them due and advanced (PostgreSQL)`,
      end.peak,
      ratios[1]!,
      1.2,
    ],
  ] as const) {
    record({ figure, value, unit: 'MiB', baseline, target: `≤ ${target}×`, met: ratio <= target, note });
  }
}
