import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openPglite, openPostgres } from '../src/kernel/database/db.ts';
import { AUTOMATION_DUE_CHANNEL } from '../src/modules/automation/outbox.ts';
import {
  BULK_CONCURRENCY,
  bootstrap,
  type Client,
  client,
  completedJob,
  contactPhone,
  ENROLLMENTS,
  lines,
  POOL_SIZE,
  provision,
  RATE,
  RULE_ACCOUNTS,
  SECONDS,
  SERVER_ENV,
  say,
  TEXT,
  TIMER_ACCOUNTS,
  type TimerSetup,
  TRIGGER_RATE,
  WARM_UP_SECONDS,
  writerPhone,
} from './automation-common.ts';
import {
  copyJourneyTimers,
  dueJourneysPostgres,
  noRunsIn,
  recordJourneyTimers,
  startJourneyTimers,
  triggerToMessage,
  verifyJourneyTimers,
  waitingRunsMemory,
} from './automation-journeys.ts';
import { describe, openLoop } from './load.ts';
import { record } from './report.ts';
import { benchDatabase, percentile, sleep, startServer, stopServer, withCpuUsage } from './support.ts';

// ---------------------------------------------------------------- 1. event → rule effect

interface RuleFigures {
  p50: number;
  p99: number;
  max: number;
  matched: number;
  note: string;
}

async function eventToRuleEffect(
  c: Client,
  partnerKey: string,
  database: Database,
  vacuum: () => Promise<void>,
) {
  const accounts = await provision(c, partnerKey, RULE_ACCOUNTS, 'rules');
  for (const a of accounts) {
    await c.ok('POST', '/rules', a.key, {
      name: 'tag who writes in',
      trigger: { event: 'message.received' },
      actions: [{ type: 'add_tag', tag: 'seen' }],
    });
  }
  let next = 0;
  const measured = new Set<string>();
  const writeIn = (keep: boolean) => async (): Promise<true | string> => {
    const n = next++;
    const res = await c.api(
      'POST',
      '/sandbox/inbound-messages',
      { 'x-api-key': accounts[n % accounts.length]!.sandboxKey },
      { from: writerPhone(n), text: `hi ${n}` },
    );
    if (res.status !== 201) return `HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
    if (keep) measured.add(res.body.id as string);
    return true;
  };
  // Every message's contact tagged by the rule (all the contact.tagged events of these accounts are
  // its), or a loud failure. A worker slower than the messages has a backlog to finish: time for
  // it, in proportion to the run.
  const ids = accounts.map((a) => a.id);
  const tagged = async () =>
    (
      await database.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events WHERE type = 'contact.tagged' AND account_id = ANY($1::text[])`,
        [ids],
      )
    ).rows[0]!.n;
  const allTagged = async (seconds: number) => {
    const timeoutSeconds = 60 + 2 * seconds;
    const started = performance.now();
    let done = await tagged();
    while (done < next && performance.now() - started < timeoutSeconds * 1000) {
      await sleep(250);
      done = await tagged();
    }
    if (done < next) {
      throw new Error(
        `only ${done} of ${next} contacts were tagged by the rule within ${timeoutSeconds} s of the last message's answer`,
      );
    }
    return (performance.now() - started) / 1000;
  };

  await vacuum();
  const warmUp = await openLoop(RATE, WARM_UP_SECONDS, writeIn(false));
  if (warmUp.failures)
    throw new Error(`warm-up: ${warmUp.failures} inbound messages failed (${warmUp.firstFailure})`);
  // The measured run starts with the warm-up's events done: its figures do not carry its backlog.
  await allTagged(WARM_UP_SECONDS);
  const { result: load, cpu } = await withCpuUsage(() => openLoop(RATE, SECONDS, writeIn(true)));
  if (load.failures)
    throw new Error(`${load.failures} inbound messages failed (first: ${load.firstFailure})`);
  say(`inbound messages (POST /sandbox/inbound-messages, ${RATE}/s, open loop): ${describe(load)}`);
  say(`         meanwhile: ${cpu}`);
  const backlogSeconds = await allTagged(SECONDS);

  const { rows } = await database.query<{ message_id: string; ms: number; at: number }>(
    `SELECT r.payload::jsonb #>> '{data,id}' AS message_id,
            (extract(epoch FROM t.created_at - r.created_at) * 1000)::float8 AS ms,
            (extract(epoch FROM t.created_at) * 1000)::float8 AS at
       FROM events r
       JOIN events t ON t.account_id = r.account_id AND t.type = 'contact.tagged'
                    AND t.payload::jsonb #>> '{data,id}' = r.payload::jsonb #>> '{data,contactId}'
                    AND t.payload::jsonb #>> '{causedBy,kind}' = 'rule'
      WHERE r.type = 'message.received' AND r.account_id = ANY($1::text[])`,
    [ids],
  );
  const mine = rows.filter((r) => measured.has(r.message_id));
  const latencies = mine.map((r) => Number(r.ms)).sort((a, b) => a - b);
  if (latencies.length !== measured.size) {
    throw new Error(`${latencies.length} of ${measured.size} measured messages have their rule's tag event`);
  }
  // The pace at which the rule's tags were committed, from the first to the last of the run: below
  // the messages' rate, the worker fell behind and the latency grew with the run's length.
  const tagTimes = mine.map((r) => Number(r.at));
  const pace = (mine.length - 1) / ((Math.max(...tagTimes) - Math.min(...tagTimes)) / 1000);
  const figures: RuleFigures = {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1)!,
    matched: latencies.length,
    note:
      `${latencies.length}/${measured.size} messages matched (${RATE}/s over ${accounts.length} accounts for ${SECONDS} s, after ${WARM_UP_SECONDS} s of warm-up); ` +
      `tags committed at ${pace.toFixed(0)}/s, the last ${backlogSeconds.toFixed(1)} s after the last message's answer; ` +
      `inbound POST p50 ${load.p50.toFixed(1)} ms, p99 ${load.p99.toFixed(1)} ms; event times have millisecond resolution`,
  };
  say(
    `message.received → contact.tagged by the rule (PostgreSQL): p50 ${figures.p50.toFixed(1)} ms, p99 ${figures.p99.toFixed(1)} ms, max ${figures.max.toFixed(1)} ms (${figures.matched}/${measured.size} matched; target p50 < 20 ms, p99 < 100 ms)`,
  );
  say(
    `         the rule's tags committed at ${pace.toFixed(0)}/s; the last ${backlogSeconds.toFixed(1)} s after the last message's answer`,
  );
  return figures;
}

// ---------------------------------------------------------------- 2. due timers

/** The accounts, their contacts (bulk imports), a published one-step sequence each, and everyone enrolled. */
async function setUpTimers(c: Client, partnerKey: string): Promise<TimerSetup> {
  const accounts = await provision(c, partnerKey, TIMER_ACCOUNTS, 'timers');
  const phones: string[][] = accounts.map(() => []);
  for (let i = 0; i < ENROLLMENTS; i++) phones[i % accounts.length]!.push(contactPhone(i));
  const chunks = <T>(list: T[]) =>
    Array.from({ length: Math.ceil(list.length / 1000) }, (_, k) => list.slice(k * 1000, k * 1000 + 1000));
  // The imports of all the accounts at once, as a customer's several jobs would run.
  const contactIds = await Promise.all(
    accounts.map(async (a, i) => {
      const ids: string[] = [];
      for (const chunk of chunks(phones[i]!)) {
        const job = await c.ok('POST', '/bulk/contacts', a.key, {
          contacts: chunk.map((phone) => ({ phone, optedIn: true })),
        });
        const done = await completedJob(c, a.key, `/bulk/contacts/${job.jobId}`);
        ids.push(...(done.results as { contactId: string }[]).map((r) => r.contactId));
      }
      return ids;
    }),
  );
  const sequences: string[] = [];
  for (const a of accounts) {
    const sequence = await c.ok('POST', '/sequences', a.key, {
      name: 'bench',
      steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: TEXT } }],
      exit: { onReply: false },
    });
    await c.ok('POST', `/sequences/${sequence.id}/publish`, a.key);
    sequences.push(sequence.id as string);
  }
  const enrollmentIds = (
    await Promise.all(
      accounts.map(async (a, i) => {
        const ids: string[] = [];
        for (const chunk of chunks(contactIds[i]!)) {
          const job = await c.ok('POST', `/sequences/${sequences[i]}/enrollments`, a.sandboxKey, {
            contactIds: chunk,
          });
          const done = await completedJob(c, a.sandboxKey, `/bulk/enrollments/${job.jobId}`);
          ids.push(...(done.results as { enrollmentId: string }[]).map((r) => r.enrollmentId));
        }
        return ids;
      }),
    )
  ).flat();
  if (enrollmentIds.length !== ENROLLMENTS)
    throw new Error(`${enrollmentIds.length} of ${ENROLLMENTS} enrolled`);
  return { accounts, sequences, contactIds, phones, enrollmentIds };
}

/** Setup, not measured: the customer service window of the bench's contacts open (a text needs it). */
async function openWindows(db: Database, setup: TimerSetup): Promise<void> {
  await db.query('UPDATE contacts SET last_inbound_at = now() WHERE account_id = ANY($1::text[])', [
    setup.accounts.map((a) => a.id),
  ]);
}

/** Waits until no enrollment of the bench's sequences is active; answers when it saw that (performance.now()). */
async function allSent(c: Client, setup: TimerSetup, timeoutMs: number): Promise<number> {
  const pending = new Set(setup.sequences.keys());
  const until = performance.now() + timeoutMs;
  while (pending.size > 0) {
    for (const i of [...pending]) {
      const page = await c.ok(
        'GET',
        `/sequences/${setup.sequences[i]}/enrollments?status=active&limit=1`,
        setup.accounts[i]!.key,
      );
      if (page.data.length === 0) pending.delete(i);
    }
    if (pending.size === 0) break;
    if (performance.now() > until) throw new Error(`enrollments still active after ${timeoutMs / 1000} s`);
    await sleep(200);
  }
  return performance.now();
}

/** Waits until the bench's messages have all been handed over, delivered and read (the sandbox's delays). */
async function drained(c: Client, setup: TimerSetup): Promise<void> {
  const until = performance.now() + 180_000;
  for (const a of setup.accounts) {
    for (const status of ['queued', 'sent', 'delivered']) {
      for (;;) {
        const page = await c.ok('GET', `/messages?status=${status}&limit=1`, a.key);
        if (page.data.length === 0) break;
        if (performance.now() > until) throw new Error(`messages still ${status} after 180 s`);
        await sleep(250);
      }
    }
  }
}

/** Checks every enrollment completed with its step sent (SQL, after the run). */
async function verifyTimers(db: Database, setup: TimerSetup): Promise<void> {
  const { rows } = await db.query<{ sent: number; total: number; first: string | null }>(
    `SELECT count(*) FILTER (WHERE status = 'completed' AND steps #>> '{0,status}' = 'sent')::int AS sent,
            count(*)::int AS total,
            min(CASE WHEN NOT (status = 'completed' AND steps #>> '{0,status}' = 'sent')
                     THEN status || ' ' || steps::text END) AS first
       FROM sequence_enrollments WHERE sequence_id = ANY($1::text[])`,
    [setup.sequences],
  );
  const { sent, total, first } = rows[0]!;
  if (sent !== ENROLLMENTS || total !== ENROLLMENTS) {
    throw new Error(
      `${sent} of ${total} enrollments completed with their step sent (${ENROLLMENTS} expected; e.g. ${first})`,
    );
  }
}

/** The baseline: the same text to the same contacts through POST /bulk/messages; accepted sends/s. */
async function bulkSends(c: Client, setup: TimerSetup): Promise<{ perSecond: number; seconds: number }> {
  const calls: { key: string; to: string[] }[] = [];
  const perAccount = setup.phones.map((list) =>
    Array.from({ length: Math.ceil(list.length / 100) }, (_, k) => list.slice(k * 100, k * 100 + 100)),
  );
  // The accounts in turn, as the due steps come (oldest due first, whatever the account).
  for (let k = 0; perAccount.some((list) => k < list.length); k++) {
    for (const [i, list] of perAccount.entries()) {
      if (k < list.length) calls.push({ key: setup.accounts[i]!.sandboxKey, to: list[k]! });
    }
  }
  let accepted = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: BULK_CONCURRENCY }, async () => {
      while (next < calls.length) {
        const call = calls[next++]!;
        const job = await c.ok('POST', '/bulk/messages', call.key, {
          type: 'text',
          text: TEXT,
          recipients: call.to.map((to) => ({ to })),
        });
        const refused = (job.results as { messageId: string | null; error: unknown }[]).find(
          (r) => !r.messageId,
        );
        if (refused)
          throw new Error(`POST /bulk/messages refused a recipient: ${JSON.stringify(refused.error)}`);
        accepted += job.results.length;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (accepted !== ENROLLMENTS) throw new Error(`${accepted} of ${ENROLLMENTS} bulk sends accepted`);
  return { perSecond: accepted / seconds, seconds };
}

function recordTimers(
  database: 'PostgreSQL' | 'PGlite',
  timers: { perSecond: number; seconds: number },
  bulk: { perSecond: number; seconds: number },
  how: string,
) {
  const ratio = timers.perSecond / bulk.perSecond;
  say(
    `${ENROLLMENTS} due steps (${database}): ${timers.perSecond.toFixed(0)} sent/s (${timers.seconds.toFixed(1)} s); ` +
      `POST /bulk/messages: ${bulk.perSecond.toFixed(0)} sends/s (${bulk.seconds.toFixed(1)} s); ratio ${ratio.toFixed(2)} (target ≥ 0.5)`,
  );
  record({
    figure: `${ENROLLMENTS.toLocaleString('en')} due sequence steps sent (${database})`,
    value: timers.perSecond,
    unit: 'sends/s',
    baseline: {
      name: `POST /bulk/messages, 100 recipients a call, ${BULK_CONCURRENCY} at once, the same text to the same contacts`,
      value: bulk.perSecond,
    },
    target: '≥ 0.5×',
    met: ratio >= 0.5,
    note:
      `all due at once (${how}) until none active, ${timers.seconds.toFixed(1)} s, over ${TIMER_ACCOUNTS} accounts; ` +
      `the bulk sends took ${bulk.seconds.toFixed(1)} s; both count a message accepted into the send path (sandbox keys)`,
  });
}

// ---------------------------------------------------------------- PostgreSQL
say(
  `bench:automation ${new Date().toISOString()}; rules: ${RATE} messages/s over ${RULE_ACCOUNTS} accounts for ${SECONDS} s; timers: ${ENROLLMENTS} enrollments over ${TIMER_ACCOUNTS} accounts`,
);

// BENCH_ONLY=pglite skips PostgreSQL; BENCH_ONLY=postgres, PGlite.
if (process.env.BENCH_ONLY !== 'pglite') {
  const database = await benchDatabase();
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const env = {
    ...SERVER_ENV,
    DATABASE_URL: database.url,
    PORT: String(port),
    TIDINGS_DB_POOL_SIZE: String(POOL_SIZE),
  };
  // This process reads and changes rows beside the server (setup, and the figures after a run).
  const db = await openPostgres(database.url, 2);

  let server = await startServer(env, { label: 'PostgreSQL server, event → rule effect' });
  let c = client(port);
  const partnerKey = await bootstrap(c);
  const rules = await eventToRuleEffect(c, partnerKey, db, database.vacuum);
  for (const [q, value] of [
    [50, rules.p50],
    [99, rules.p99],
  ] as const) {
    const target = q === 50 ? 20 : 100;
    record({
      figure: `message.received → rule's tag committed, p${q} at ${RATE} messages/s (PostgreSQL)`,
      value,
      unit: 'ms',
      target: `< ${target} ms`,
      met: value < target,
      note: rules.note,
    });
  }
  await c.http.close();
  await stopServer(server);

  server = await startServer(env, { label: 'PostgreSQL server, due timers and bulk sends' });
  c = client(port);
  const setup = await setUpTimers(c, partnerKey);
  await openWindows(db, setup);
  await database.vacuum();
  // All due at once: the steps' time moved to now, and the NOTIFY a commit that makes work due sends
  // (the due channel: an event's NOTIFY has the worker look for due steps only at its next poll).
  await db.transaction(async (tx) => {
    await tx.query(
      `UPDATE sequence_enrollments SET next_run_at = now() WHERE status = 'active' AND sequence_id = ANY($1::text[])`,
      [setup.sequences],
    );
    await tx.query(`SELECT pg_notify('${AUTOMATION_DUE_CHANNEL}', '')`);
  });
  const due = performance.now();
  const done = await allSent(c, setup, 600_000);
  const timers = { perSecond: ENROLLMENTS / ((done - due) / 1000), seconds: (done - due) / 1000 };
  await verifyTimers(db, setup);
  await drained(c, setup);
  await database.vacuum();
  const bulk = await bulkSends(c, setup);
  recordTimers('PostgreSQL', timers, bulk, 'next_run_at = now() and a NOTIFY');
  await drained(c, setup);
  await c.http.close();
  await stopServer(server);

  server = await startServer(env, { label: 'PostgreSQL server, due journey runs and triggers' });
  c = client(port);
  const journeyTimers = await dueJourneysPostgres(c, db, setup, database.vacuum);
  recordJourneyTimers('PostgreSQL', journeyTimers, timers, 'resume_at = now() and a NOTIFY');
  await drained(c, setup);
  const triggers = await triggerToMessage(c, db, setup, database.vacuum);
  for (const [q, value] of [
    [50, triggers.p50],
    [99, triggers.p99],
  ] as const) {
    record({
      figure: `journey trigger → first message accepted, p${q} at ${TRIGGER_RATE} triggers/s (PostgreSQL)`,
      value,
      unit: 'ms',
      note: triggers.note,
    });
  }
  await drained(c, setup);
  await c.http.close();
  await stopServer(server);

  await waitingRunsMemory(env, db, setup, database.vacuum);
  await db.close();
  await database.drop();
}

// ---------------------------------------------------------------- PGlite
if (process.env.BENCH_ONLY !== 'postgres') {
  const dataDir = mkdtempSync(join(tmpdir(), 'tidings-bench-automation-'));
  const port = 40_000 + Math.floor(Math.random() * 10_000);
  const env = { ...SERVER_ENV, DATA_DIR: dataDir, PORT: String(port) };
  let startedAt = performance.now();
  let server = await startServer(env, { label: 'PGlite server, setup (contacts, enrollments)' });
  const firstStart = performance.now() - startedAt;
  let c = client(port);
  const setupStarted = performance.now();
  const setup = await setUpTimers(c, await bootstrap(c));
  say(
    `PGlite setup: ${ENROLLMENTS} contacts imported and enrolled in ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`,
  );
  await c.http.close();
  await stopServer(server);

  // The server's database, opened from here while no server runs: the windows open, and every step
  // due at one moment, far enough ahead for a new server to be up by then.
  // (The first start migrated an empty database: a restart takes less.)
  const margin = Math.max(5000, firstStart + 3000);
  let local = await openPglite(`${dataDir}/db`);
  await openWindows(local, setup);
  const dueAt = Date.now() + margin;
  await local.query(
    `UPDATE sequence_enrollments SET next_run_at = $2 WHERE status = 'active' AND sequence_id = ANY($1::text[])`,
    [setup.sequences, new Date(dueAt)],
  );
  await local.close();
  startedAt = performance.now();
  server = await startServer(env, { label: 'PGlite server, due timers and bulk sends' });
  const restart = performance.now() - startedAt;
  c = client(port);
  if (Date.now() > dueAt - 200) {
    throw new Error(
      `the PGlite server took ${(restart / 1000).toFixed(1)} s to restart: the steps fell due before it was up`,
    );
  }
  await sleep(dueAt - Date.now());
  const due = performance.now();
  // The worker would find them at its next poll; a wake's NOTIFY has it look now. 409: it already has.
  const woken = await c.api(
    'POST',
    '/sandbox/wake',
    { 'x-api-key': setup.accounts[0]!.sandboxKey },
    {
      enrollmentId: setup.enrollmentIds[0],
    },
  );
  if (woken.status !== 200 && woken.status !== 409) {
    throw new Error(`POST /sandbox/wake: ${woken.status} ${JSON.stringify(woken.body)}`);
  }
  const done = await allSent(c, setup, 600_000);
  const timers = { perSecond: ENROLLMENTS / ((done - due) / 1000), seconds: (done - due) / 1000 };
  await drained(c, setup);
  const bulk = await bulkSends(c, setup);
  recordTimers(
    'PGlite',
    timers,
    bulk,
    `next_run_at set while the server was down to a moment ${(margin / 1000).toFixed(0)} s ahead, the restarted server up ${((margin - restart) / 1000).toFixed(1)} s before it`,
  );
  await drained(c, setup);
  await c.http.close();
  await stopServer(server);

  // Journeys: the runs started and waiting at their timer; then, the server down, every timer due at
  // one moment ahead (as the steps above), the restarted server woken at that moment.
  server = await startServer(env, { label: 'PGlite server, journey runs started' });
  c = client(port);
  const journeys = await startJourneyTimers(c, setup);
  await c.http.close();
  await stopServer(server);
  local = await openPglite(`${dataDir}/db`);
  await copyJourneyTimers(local, journeys);
  const runsDueAt = Date.now() + margin;
  await local.query(
    `UPDATE journey_runs SET resume_at = $2 WHERE status = 'waiting' AND journey_id = ANY($1::text[])`,
    [journeys.journeys, new Date(runsDueAt)],
  );
  await local.close();
  startedAt = performance.now();
  server = await startServer(env, { label: 'PGlite server, due journey runs' });
  const runsRestart = performance.now() - startedAt;
  c = client(port);
  if (Date.now() > runsDueAt - 200) {
    throw new Error(
      `the PGlite server took ${(runsRestart / 1000).toFixed(1)} s to restart: the runs fell due before it was up`,
    );
  }
  await sleep(runsDueAt - Date.now());
  const runsDue = performance.now();
  const wokenRun = await c.api(
    'POST',
    '/sandbox/wake',
    { 'x-api-key': journeys.accounts[0]!.sandboxKey },
    { runId: journeys.runIds[0]![0] },
  );
  if (wokenRun.status !== 200 && wokenRun.status !== 409) {
    throw new Error(`POST /sandbox/wake: ${wokenRun.status} ${JSON.stringify(wokenRun.body)}`);
  }
  const runsDone = await noRunsIn(c, journeys, ['running', 'waiting'], 600_000);
  await drained(c, setup);
  await c.http.close();
  await stopServer(server);
  local = await openPglite(`${dataDir}/db`);
  await verifyTimers(local, setup);
  const journeySteps = await verifyJourneyTimers(local, journeys);
  await local.close();
  recordJourneyTimers(
    'PGlite',
    { seconds: (runsDone - runsDue) / 1000, steps: journeySteps },
    timers,
    `resume_at set while the server was down to a moment ${(margin / 1000).toFixed(0)} s ahead, the restarted server up ${((margin - runsRestart) / 1000).toFixed(1)} s before it`,
  );
  rmSync(dataDir, { recursive: true, force: true });
}

process.stdout.write(`${lines.join('\n')}\n`);
