// Crash safety of the journey runner: 1,000 runs wait on a timer (wait P1D → send_message → end);
// their wait is made due at once (resume_at moved to now, and the NOTIFY a commit that makes runs
// due sends), and the server is killed (SIGKILL) as soon as the first of them have been advanced,
// with the runner's next batches under way. A new server takes over. Each run then resumed once:
// every run completed, its steps exactly wait → send_message → end (seq 1, 2, 3, each left once by
// its edge), exactly one outbound message per run (its idempotency key `jrn:<run>:2`, the one its
// send step names), one journey_run.completed event per run, and no run left running or waiting.
// A batch cut off by the kill rolled back with its messages and was advanced by the successor.
// Real server processes on PostgreSQL (the test moves resume_at beside the running server); skipped
// on PGlite, whose database only its server can open.
import { describe, expect, it } from 'vitest';
import { AUTOMATION_DUE_CHANNEL } from '../../src/modules/automation/outbox.ts';
import { onPostgres } from '../helpers/harness.ts';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  type ServerProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

const RUNS = 1000;
const CONCURRENCY = 20;
const TEXT = 'Your timer is up';
const phone = (i: number) => `+1415557${String(i).padStart(4, '0')}`;
/** What every run's steps must read, in seq order: `seq:node:status:edge`. */
const PATH = ['1:pause:completed:next', '2:hello:completed:next', '3:done:completed:end'];

/** Runs `work` for 0 … count-1, CONCURRENCY at a time; answers the results in order. */
async function inBatches<T>(count: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += CONCURRENCY) {
    out.push(
      ...(await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count - i) }, (_, j) => work(i + j)))),
    );
  }
  return out;
}

describe.skipIf(!onPostgres)('journey runs waiting on a timer, cut short by SIGKILL', () => {
  // 2,000 setup calls back to back, 20 at once: the plan's per-second limit is not under test here.
  const store = useDurableStore('journeys-crash', {
    TIDINGS_AUTOMATION_POLL_MS: '100',
    TIDINGS_RATE_LIMIT_OVERRIDE: '100000',
  });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(store.settings);
    store.servers.push(server);
    return server;
  }

  it('resumes each of 1,000 waiting runs exactly once across the kill', async () => {
    const db = store.tdb!.db;
    const count = async (sql: string, params: unknown[]) =>
      (await db.query<{ n: number }>(sql, params)).rows[0]!.n;

    let server = await start();
    const partnerKey = await bootstrapOnProcess(server);
    const { accountId, apiKey: key } = await accountOnProcess(
      server,
      partnerKey,
      'journeys-crash',
      'sandbox',
    );

    // Each contact writes in: the customer service window opens for the free-form text.
    const contactIds = await inBatches(RUNS, async (i) => {
      const res = await api(server, 'POST', '/sandbox/inbound-messages', key, { from: phone(i), text: 'hi' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.contactId as string;
    });
    expect(new Set(contactIds).size).toBe(RUNS);

    const made = await api(server, 'POST', '/journeys', key, {
      name: 'Crash',
      entry: { trigger: 'api', reentry: 'after_exit', start: 'pause' },
      nodes: [
        { id: 'pause', type: 'wait', config: { duration: 'P1D' } },
        { id: 'hello', type: 'send_message', config: { message: { type: 'text', text: TEXT } } },
        { id: 'done', type: 'end' },
      ],
      edges: [
        { from: 'pause', to: 'hello' },
        { from: 'hello', to: 'done' },
      ],
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const journeyId = made.body.id as string;
    const published = await api(server, 'POST', `/journeys/${journeyId}/publish`, key);
    expect(published.status, JSON.stringify(published.body)).toBe(200);

    // Started by the sandbox key: the runs' messages go to the sandbox channel.
    const runIds = await inBatches(RUNS, async (i) => {
      const res = await api(server, 'POST', `/journeys/${journeyId}/trigger`, key, {
        contactId: contactIds[i],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body.id as string;
    });
    expect(new Set(runIds).size).toBe(RUNS);

    // Every run waits at its timer, its wait step open (a day ahead).
    let waiting = 0;
    await until(
      async () => {
        waiting = await count(
          `SELECT count(*)::int AS n FROM journey_runs
            WHERE journey_id = $1 AND status = 'waiting' AND current_node_id = 'pause'
              AND resume_at > now() + interval '12 hours'`,
          [journeyId],
        );
        return waiting === RUNS;
      },
      60_000,
      () => `${waiting} of ${RUNS} runs wait at the timer`,
    );
    expect(
      await count(
        `SELECT count(*)::int AS n FROM journey_run_steps WHERE journey_id = $1 AND seq = 1 AND status = 'waiting'`,
        [journeyId],
      ),
    ).toBe(RUNS);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'outbound'`,
        [accountId],
      ),
    ).toBe(0);

    // Every timer due at once, and the runner told so.
    await db.transaction(async (tx) => {
      await tx.query('UPDATE journey_runs SET resume_at = now() WHERE journey_id = $1', [journeyId]);
      await tx.query(`SELECT pg_notify('${AUTOMATION_DUE_CHANNEL}', '')`);
    });

    // Kill: as soon as the first batch has committed (the next ones are under way by then).
    const completed = () =>
      count(`SELECT count(*)::int AS n FROM journey_runs WHERE journey_id = $1 AND status = 'completed'`, [
        journeyId,
      ]);
    let before = 0;
    await until(
      async () => {
        before = await completed();
        return before > 0;
      },
      60_000,
      () => 'no run was advanced',
    );
    // The server's transactions open at that moment (the runner's next batches), for the log below.
    const open = await count(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL`,
      [],
    );
    server.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await exited(server.child, 10_000)).signal).toBe('SIGKILL');
    const atKill = await completed();
    expect(atKill, 'the kill came after every run was advanced').toBeLessThan(RUNS);

    server = await start();
    let live = RUNS;
    await until(
      async () => {
        live = await count(
          `SELECT count(*)::int AS n FROM journey_runs WHERE journey_id = $1 AND status IN ('running', 'waiting')`,
          [journeyId],
        );
        return live === 0;
      },
      90_000,
      () => `${live} of ${RUNS} runs still running or waiting (${atKill} were completed at the kill)`,
    );

    console.info(
      `journeys crash: killed with ${atKill}/${RUNS} runs completed (${open} writing transaction(s) of the server open); ` +
        `the new server finished the other ${RUNS - atKill} ${Date.now() - killedAt} ms after the kill`,
    );

    // Every run completed, its three steps taken once, one message sent.
    const { rows: runs } = await db.query<{
      id: string;
      status: string;
      step_count: number;
      current_node_id: string | null;
      resume_at: Date | null;
      error: unknown;
      ended_at: Date | null;
    }>(
      `SELECT id, status, step_count, current_node_id, resume_at, error, ended_at FROM journey_runs
        WHERE journey_id = $1`,
      [journeyId],
    );
    expect(runs).toHaveLength(RUNS);
    expect(new Set(runs.map((r) => r.id))).toEqual(new Set(runIds));
    const unlike = runs.filter(
      (r) =>
        r.status !== 'completed' ||
        r.step_count !== 3 ||
        r.current_node_id !== 'done' ||
        r.resume_at !== null ||
        r.error !== null ||
        r.ended_at === null,
    );
    expect(
      unlike.slice(0, 3),
      `${unlike.length} runs did not end as completed at done after 3 steps`,
    ).toEqual([]);

    const { rows: paths } = await db.query<{ run_id: string; steps: string[]; bad_times: number }>(
      `SELECT run_id, array_agg(seq || ':' || node_id || ':' || status || ':' || coalesce(edge, '-') ORDER BY seq) AS steps,
              count(*) FILTER (WHERE ended_at IS NULL OR ended_at < started_at)::int AS bad_times
         FROM journey_run_steps WHERE journey_id = $1 GROUP BY run_id`,
      [journeyId],
    );
    expect(paths).toHaveLength(RUNS);
    const offPath = paths.filter((p) => JSON.stringify(p.steps) !== JSON.stringify(PATH) || p.bad_times > 0);
    expect(offPath.slice(0, 3), `${offPath.length} runs whose steps are not ${PATH.join(', ')}`).toEqual([]);

    // One outbound message per run: the one its send step names, under the step's idempotency key,
    // to the run's contact, and no other message to anyone.
    const { rows: sends } = await db.query<{
      run_id: string;
      run_contact: string;
      messages: number;
      message_id: string | null;
      message_contact: string | null;
      text: string | null;
      step_message: string | null;
    }>(
      `SELECT r.id AS run_id, r.contact_id AS run_contact, count(m.id)::int AS messages, min(m.id) AS message_id,
              min(m.contact_id) AS message_contact, min(m.content #>> '{text,body}') AS text,
              min(s.output ->> 'messageId') AS step_message
         FROM journey_runs r
         LEFT JOIN messages m ON m.account_id = r.account_id AND m.idempotency_key = 'jrn:' || r.id || ':2'
         LEFT JOIN journey_run_steps s ON s.run_id = r.id AND s.seq = 2
        WHERE r.journey_id = $1 GROUP BY r.id, r.contact_id`,
      [journeyId],
    );
    const wrongSends = sends.filter(
      (s) =>
        s.messages !== 1 ||
        s.message_id !== s.step_message ||
        s.message_contact !== s.run_contact ||
        s.text !== TEXT,
    );
    expect(wrongSends.slice(0, 3), `${wrongSends.length} runs without exactly their one message`).toEqual([]);
    const { rows: outbound } = await db.query<{ contact_id: string; n: number }>(
      `SELECT contact_id, count(*)::int AS n FROM messages WHERE account_id = $1 AND direction = 'outbound'
        GROUP BY contact_id`,
      [accountId],
    );
    expect(outbound).toHaveLength(RUNS);
    expect(outbound.filter((o) => o.n !== 1)).toEqual([]);

    // One journey_run.completed per run: no run ended twice.
    const { rows: ends } = await db.query<{ run_id: string; n: number }>(
      `SELECT payload::jsonb #>> '{data,id}' AS run_id, count(*)::int AS n FROM events
        WHERE account_id = $1 AND type LIKE 'journey_run.%' GROUP BY 1`,
      [accountId],
    );
    expect(ends).toHaveLength(RUNS);
    expect(ends.filter((e) => e.n !== 1)).toEqual([]);
    expect(new Set(ends.map((e) => e.run_id))).toEqual(new Set(runIds));

    // The API says the same: 1,000 entered each node, and every run completed.
    const stats = await api(server, 'GET', `/journeys/${journeyId}/stats`, key);
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body.runs).toMatchObject({
      total: RUNS,
      completed: RUNS,
      running: 0,
      waiting: 0,
      failed: 0,
    });
    for (const node of stats.body.nodes) {
      expect(node, node.nodeId).toMatchObject({ entered: RUNS, completed: RUNS, failed: 0, waiting: 0 });
    }
  }, 240_000);
});
