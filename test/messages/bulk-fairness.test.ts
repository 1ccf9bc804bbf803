// Bulk jobs are served fairly across accounts: an account with 20 imports queued does not hold up
// another account's import for longer than one of its jobs takes (migrations/029, § Issue 27).
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { useTestApp } from '../helpers/setup.ts';

// Small chunks, so that a job of 100 contacts spans ten transactions and takes a measurable time.
const env = useTestApp({ workers: true, config: { bulkChunkSize: 10 } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const contacts = (from: number) =>
  Array.from({ length: 100 }, (_, i) => ({ phone: `+1201555${String(from + i).padStart(4, '0')}` }));

async function finished(apiKey: string, jobId: string): Promise<any> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(25)) {
    const res = await call(env.app, 'GET', `/bulk/contacts/${jobId}`, { key: apiKey });
    expect(res.status).toBe(200);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
  }
  throw new Error(`job ${jobId} did not finish`);
}

const ms = (from: string, to: string) => new Date(to).getTime() - new Date(from).getTime();

describe('bulk jobs across accounts', () => {
  it("another account's job waits at most for the job running, not for a queue of 20", async () => {
    const busy = await tenant(env.app, env.partner.partnerKey);
    const other = await tenant(env.app, env.partner.partnerKey);
    const queued: string[] = [];
    for (let j = 0; j < 20; j++) {
      const res = await call(env.app, 'POST', '/bulk/contacts', {
        key: busy.apiKey,
        body: { contacts: contacts(j * 100) },
      });
      expect(res.status).toBe(202);
      queued.push(res.body.jobId);
    }
    const mine = await call(env.app, 'POST', '/bulk/contacts', {
      key: other.apiKey,
      body: { contacts: contacts(5000) },
    });
    expect(mine.status).toBe(202);

    const done = await finished(other.apiKey, mine.body.jobId);
    expect(done.status).toBe('completed');
    const first = await finished(busy.apiKey, queued[0]!);
    // One job's time, measured here: the busy account's first job, from its start to its end.
    const oneJob = ms(first.startedAt, first.completedAt);
    expect(ms(done.createdAt, done.startedAt)).toBeLessThan(oneJob + 1_000);
    // And the busy account's queue was far from worked off when the other job ended.
    const last = await call(env.app, 'GET', `/bulk/contacts/${queued[19]}`, { key: busy.apiKey });
    expect(last.body.status).toBe('queued');
  }, 180_000);
});
