// A 2,000-contact campaign at 100 messages a second across real server processes (docs/messaging.md
// § Campaigns): one process is killed mid-campaign (SIGKILL, no shutdown) and a replacement started,
// a pause stops every process, the pace is held (messages per second counted from their stamps), and
// in the end each contact got exactly one message. On PostgreSQL two processes share the work (the
// pause goes through the other one); on PGlite, which has one owner, the processes follow each other
// on its data directory.
import { describe, expect, it } from 'vitest';
import { openPglite } from '../../src/kernel/database/db.ts';
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
import { eventually, sleep, until } from '../helpers/wait.ts';

const TOTAL = 2000;
const RATE = 100;
const TAG = 'autumn';
const phone = (i: number) => `+1415555${String(2000 + i).padStart(4, '0')}`;

describe('a campaign across server processes, one killed', () => {
  const store = useDurableStore('campaign', {
    TIDINGS_RUN_WORKERS: 'true',
    TIDINGS_CAMPAIGN_POLL_MS: '50',
    // The killed process's dispatch jobs are taken up again soon (their messages are queued, paid).
    TIDINGS_DISPATCH_JOB_EXPIRE_SECONDS: '5',
    TIDINGS_JOB_SUPERVISE_SECONDS: '1',
  });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(store.settings);
    store.servers.push(server);
    return server;
  }

  it('holds the pace between the processes, survives a SIGKILL, messages each contact once', {
    timeout: 150_000,
  }, async () => {
    const a = await start();
    // On PostgreSQL, B comes up while A prepares the account (a process takes seconds to start).
    const starting = onPostgres ? start() : null;
    const partnerKey = await bootstrapOnProcess(a);
    const { apiKey } = await accountOnProcess(a, partnerKey, 'campaign');
    const channel = await api(a, 'PUT', '/account/channel', apiKey, {
      provider: 'sandbox',
      sandbox: { deliveredAfterMs: 0, readAfterMs: null, reviewAfterMs: 0 },
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    for (let from = 0; from < TOTAL; from += 1000) {
      const contacts = Array.from({ length: 1000 }, (_, i) => ({ phone: phone(from + i), tags: [TAG] }));
      const job = await api(a, 'POST', '/bulk/contacts', apiKey, { contacts, mode: 'create' });
      expect(job.status, JSON.stringify(job.body)).toBe(202);
      const imported = await eventually(
        () => api(a, 'GET', `/bulk/contacts/${job.body.jobId}`, apiKey),
        (r) => r.body.status === 'completed' || r.body.status === 'failed',
        30_000,
      );
      expect(imported.body).toMatchObject({ status: 'completed', failed: 0 });
    }
    const template = await api(a, 'POST', '/templates', apiKey, {
      name: 'autumn',
      language: 'en_US',
      category: 'MARKETING',
      components: [
        { type: 'BODY', text: 'Autumn is here, {{1}}. Enjoy it.', example: { body_text: [['Ann']] } },
      ],
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    await api(a, 'POST', `/templates/${template.body.id}/submit`, apiKey);
    await eventually(
      () => api(a, 'GET', `/templates/${template.body.id}`, apiKey),
      (r) => r.body.status === 'APPROVED',
      10_000,
    );
    const made = await api(a, 'POST', '/campaigns', apiKey, {
      name: 'Autumn',
      message: { templateName: 'autumn', templateLanguage: 'en_US', parameters: ['friend'] },
      audience: { tag: TAG },
      pacing: { messagesPerSecond: RATE },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    const campaign = (server: ServerProcess) => api(server, 'GET', `/campaigns/${id}`, apiKey);
    const move = (server: ServerProcess, what: string) =>
      api(server, 'POST', `/campaigns/${id}/${what}`, apiKey);
    /** Recipients whose message was accepted, as the recipients list shows them. */
    const messaged = async (server: ServerProcess) => {
      let n = 0;
      let cursor: string | null = null;
      do {
        const page: { status: number; body: any } = await api(
          server,
          'GET',
          `/campaigns/${id}/recipients?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
          apiKey,
        );
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        n += page.body.data.filter((r: { messageId: string | null }) => r.messageId !== null).length;
        cursor = page.body.nextCursor;
      } while (cursor);
      return n;
    };
    /** Handed over or further, from the counters: cheap enough to poll. */
    const gone = async (server: ServerProcess) => {
      const c = (await campaign(server)).body.counters;
      return c.total - c.queued - c.skipped;
    };

    const b = await starting;
    const started = await move(a, 'start');
    expect(started.body).toMatchObject({ status: 'running', counters: { total: TOTAL } });

    // A third through: A dies without a word; C comes up.
    await until(
      async () => (await gone(b ?? a)) >= TOTAL / 3,
      40_000,
      () => 'a third was not messaged',
    );
    a.child.kill('SIGKILL');
    expect((await exited(a.child, 10_000)).signal).toBe('SIGKILL');
    // C comes up: on PostgreSQL while B goes on (a start takes seconds on a loaded machine, long
    // enough for B to finish the campaign if the pause waited for it), on PGlite as the only owner.
    const replacement = start();
    const live = b ?? (await replacement);
    const atKill = await messaged(live);

    // Two thirds through: a pause (through B, on PostgreSQL) stops every process at once.
    await until(
      async () => (await gone(live)) >= (2 * TOTAL) / 3,
      40_000,
      () => 'two thirds were not messaged',
    );
    const paused = await move(live, 'pause');
    expect(paused.body.status, JSON.stringify(paused)).toBe('paused');
    const atPause = await messaged(live);
    const c = await replacement;
    await sleep(1000);
    expect(await messaged(c)).toBe(atPause);
    const resumed = await move(c, 'resume');
    expect(resumed.body.status, JSON.stringify(resumed)).toBe('running');

    const done = await eventually(
      () => campaign(c),
      (r) => r.body.status === 'completed' && r.body.counters.delivered === TOTAL,
      60_000,
    );
    expect(done.body.counters).toMatchObject({
      total: TOTAL,
      queued: 0,
      delivered: TOTAL,
      failed: 0,
      skipped: 0,
    });

    // What the database holds: on PGlite, once its one owner has stopped.
    let db = store.tdb?.db;
    if (!db) {
      c.child.kill('SIGTERM');
      await exited(c.child, 30_000);
      db = await openPglite(`${store.dataDir!}/db`);
    }
    const { rows: once } = await db.query<{ messages: number; contacts: number }>(
      'SELECT count(*)::int AS messages, count(DISTINCT contact_id)::int AS contacts FROM messages WHERE campaign_id = $1',
      [id],
    );
    expect(once[0]).toEqual({ messages: TOTAL, contacts: TOTAL });
    const { rows: seconds } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1
        GROUP BY date_trunc('second', created_at) ORDER BY n DESC`,
      [id],
    );
    const busiest = seconds[0]!.n;
    const full = seconds.filter((row: { n: number }) => row.n >= RATE * 0.9).length;
    console.info(
      `campaign across processes: ${TOTAL} messages over ${seconds.length} seconds with a message, ` +
        `max ${busiest} in one second (limit ${RATE}), ${full} seconds at 90 % of it or more; ` +
        `killed at ${atKill}, paused at ${atPause}`,
    );
    expect(busiest).toBeLessThanOrEqual(RATE);
    // Held near the pace, not at a crawl: most seconds with messages were nearly full.
    expect(full).toBeGreaterThan(seconds.length / 2);
    if (!store.tdb) await db.close();
  });
});
