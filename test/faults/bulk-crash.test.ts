// Crash safety of bulk imports: a server killed (SIGKILL) in the middle of a 1,000-contact job
// leaves it `processing` with part of it done; the next process to start resumes it at its cursor,
// and in the end every item was applied exactly once: 1,000 contacts, 1,000 results, 1,000
// contact.created events. Real server processes: on PostgreSQL when TEST_DATABASE_URL is set, else
// on the embedded database in a temporary DATA_DIR.
import { describe, expect, it } from 'vitest';
import { type Database, openPglite } from '../../src/kernel/database/db.ts';
import { BOOTSTRAP_TOKEN, onPostgres } from '../helpers/harness.ts';
import {
  processApi as api,
  exited,
  type ServerProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';

const TOTAL = 1000;
const ATTEMPTS = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every result index appears once, in order, from 0 up to processed - 1. */
function expectContiguous(job: { processed: number; results: { index: number }[] }): void {
  expect(job.results.map((r) => r.index)).toEqual(Array.from({ length: job.processed }, (_, i) => i));
}

describe('a bulk import killed mid-job', () => {
  const store = useDurableStore('bulk-crash', {
    TIDINGS_BULK_CHUNK_SIZE: '10',
    TIDINGS_JOB_SUPERVISE_SECONDS: '1',
    TIDINGS_BULK_JOB_EXPIRE_SECONDS: '3',
  });

  async function start(extra: Record<string, string> = {}): Promise<ServerProcess> {
    const server = await startServerProcess({ ...store.settings, ...extra });
    store.servers.push(server);
    return server;
  }

  async function stop(server: ServerProcess): Promise<void> {
    server.child.kill('SIGTERM');
    expect(await exited(server.child, 20_000)).toEqual({ code: 0, signal: null });
  }

  it('resumes after a restart and applies every item exactly once', async () => {
    let server = await start();
    const boot = await api(server, 'POST', '/partner/bootstrap', `Bearer ${BOOTSTRAP_TOKEN}`);
    expect(boot.status).toBe(201);
    const partnerKey = boot.body.apiKey as string;

    let landed: { accountId: string; apiKey: string; jobId: string; processed: number } | null = null;
    const misses: string[] = [];
    let killedAt = 0;
    for (let attempt = 0; attempt < ATTEMPTS && !landed; attempt++) {
      // A fresh account per attempt, so that a job that finished before the kill leaves no trace.
      const account = await api(server, 'POST', '/partner/accounts', partnerKey, {
        accountName: `Crash ${attempt}`,
        countryCode: 'US',
        planCode: 'scale',
        externalRef: `bulk-crash-${attempt}`,
      });
      expect(account.status).toBe(201);
      const key = await api(server, 'POST', `/partner/accounts/${account.body.accountId}/keys`, partnerKey, {
        name: 'k',
        scope: 'live',
      });
      const apiKey = key.body.apiKey as string;
      const contacts = Array.from({ length: TOTAL }, (_, i) => ({
        phone: `+1201555${String(i).padStart(4, '0')}`,
        name: `Contact ${i}`,
      }));
      const accepted = await api(server, 'POST', '/bulk/contacts', apiKey, { contacts });
      expect(accepted.status).toBe(202);
      const jobId = accepted.body.jobId as string;

      // Kill as soon as the job is seen part-way through.
      let seen: any = accepted.body;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const res = await api(server, 'GET', `/bulk/contacts/${jobId}`, apiKey);
        expect(res.status).toBe(200);
        seen = res.body;
        if (
          (seen.processed > 0 && seen.processed < TOTAL) ||
          seen.status === 'completed' ||
          seen.status === 'failed'
        )
          break;
        await sleep(5);
      }
      if (seen.status !== 'processing') {
        misses.push(
          `attempt ${attempt}: job seen ${seen.status} at ${seen.processed}/${TOTAL}, before any kill`,
        );
        continue;
      }
      server.child.kill('SIGKILL');
      killedAt = Date.now();
      expect((await exited(server.child, 10_000)).signal).toBe('SIGKILL');

      // An API-only process shows the job as the crash left it; without workers nothing resumes it.
      const observer = await start({ TIDINGS_RUN_WORKERS: 'false' });
      const left = await api(observer, 'GET', `/bulk/contacts/${jobId}`, apiKey);
      expect(left.status).toBe(200);
      if (left.body.status !== 'processing') {
        misses.push(
          `attempt ${attempt}: killed at ${seen.processed}/${TOTAL} but the job had already ${left.body.status}`,
        );
        await stop(observer);
        server = await start();
        continue;
      }
      expect(left.body.processed).toBeGreaterThanOrEqual(seen.processed);
      expect(left.body.processed).toBeLessThan(TOTAL);
      expect(left.body.succeeded).toBe(left.body.processed);
      expect(left.body.completedAt).toBeNull();
      expectContiguous(left.body);
      await sleep(2500);
      const still = await api(observer, 'GET', `/bulk/contacts/${jobId}`, apiKey);
      expect(still.body).toEqual(left.body);
      await stop(observer);
      landed = { accountId: account.body.accountId, apiKey, jobId, processed: left.body.processed };
    }
    expect(landed, `the kill never landed mid-job: ${misses.join('; ')}`).not.toBeNull();
    const { accountId, apiKey, jobId } = landed!;

    // A process with workers takes the job over and finishes it.
    const restartedAt = Date.now();
    server = await start();
    const readyAt = Date.now();
    let job: any;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const res = await api(server, 'GET', `/bulk/contacts/${jobId}`, apiKey);
      expect(res.status).toBe(200);
      job = res.body;
      if (job.status === 'completed' || job.status === 'failed' || Date.now() > deadline) break;
      await sleep(100);
    }
    const recoveredAt = Date.now();
    console.info(
      `bulk crash (${onPostgres ? 'PostgreSQL' : 'PGlite'}): killed at ${landed!.processed}/${TOTAL} after ${misses.length} missed attempt(s); ` +
        `the new process was ready ${readyAt - restartedAt} ms after its start and the job completed ${recoveredAt - readyAt} ms later ` +
        `(${recoveredAt - killedAt} ms after the kill, including ~${restartedAt - killedAt} ms of observing the stuck job)`,
    );
    expect(job).toMatchObject({
      status: 'completed',
      total: TOTAL,
      processed: TOTAL,
      succeeded: TOTAL,
      failed: 0,
      error: null,
    });
    expectContiguous(job);
    expect(job.results.every((r: any) => r.outcome === 'created' && r.error === null)).toBe(true);
    const resultIds = new Set(job.results.map((r: any) => r.contactId));
    expect(resultIds.size).toBe(TOTAL);

    // The contacts, as a client lists them: 1,000, each phone once, the ones the results name.
    const listed: any[] = [];
    let cursor: string | null = null;
    do {
      const page = await api(
        server,
        'GET',
        `/contacts?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        apiKey,
      );
      expect(page.status).toBe(200);
      listed.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(listed).toHaveLength(TOTAL);
    expect(new Set(listed.map((c) => c.phone)).size).toBe(TOTAL);
    expect(new Set(listed.map((c) => c.id))).toEqual(resultIds);
    await stop(server);

    // The events, read from the database once no process holds it.
    let db: Database;
    if (store.tdb) db = store.tdb.db;
    else db = await openPglite(`${store.dataDir}/db`);
    try {
      const { rows } = await db.query<{ type: string; payload: string }>(
        'SELECT type, payload FROM events WHERE account_id = $1 ORDER BY id',
        [accountId],
      );
      const created = rows
        .filter((r) => r.type === 'contact.created')
        .map((r) => JSON.parse(r.payload).data.id);
      expect(created).toHaveLength(TOTAL);
      expect(new Set(created)).toEqual(resultIds);
      const completed = rows
        .filter((r) => r.type === 'bulk_job.completed')
        .map((r) => JSON.parse(r.payload).data);
      expect(completed).toEqual([
        expect.objectContaining({
          jobId,
          status: 'completed',
          processed: TOTAL,
          succeeded: TOTAL,
          failed: 0,
        }),
      ]);
      expect(rows.filter((r) => !['contact.created', 'bulk_job.completed'].includes(r.type))).toEqual([]);
      const { rows: dup } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT phone FROM contacts WHERE account_id = $1 GROUP BY phone HAVING count(*) > 1) d`,
        [accountId],
      );
      expect(dup[0]!.n).toBe(0);
    } finally {
      if (!store.tdb) await db.close();
    }
  }, 300_000);
});
