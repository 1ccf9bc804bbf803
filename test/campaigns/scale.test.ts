// A 5,000-contact campaign to a tag in the sandbox, through HTTP: never faster than its
// messagesPerSecond (counted per second from the messages it made), paused (nobody more is
// messaged) and resumed, counters and per-recipient statuses adding up at every look, replies
// counted, each contact messaged exactly once.
import { describe, expect, it } from 'vitest';
import { call, createAccountKey } from '../helpers/client.ts';
import { approvedTemplate, sandboxTenant } from '../helpers/messaging.ts';
import { useTestApp } from '../helpers/setup.ts';
import { eventually, sleep } from '../helpers/wait.ts';

const env = useTestApp({ workers: true, config: { campaignPollMs: 20 } });
const SIZE = 5000;
const RATE = 400;

const phoneOf = (i: number) => `+1415555${String(2000 + i).padStart(4, '0')}`;

async function importContacts(key: string, tag: string) {
  for (let from = 0; from < SIZE; from += 1000) {
    const contacts = Array.from({ length: 1000 }, (_, i) => ({ phone: phoneOf(from + i), tags: [tag] }));
    const job = await call(env.app, 'POST', '/bulk/contacts', { key, body: { contacts } });
    expect(job.status, JSON.stringify(job.body)).toBe(202);
    const done = await eventually(
      () => call(env.app, 'GET', `/bulk/contacts/${job.body.jobId}`, { key }),
      (r) => r.body.status === 'completed',
      60_000,
    );
    expect(done.body).toMatchObject({ status: 'completed', failed: 0 });
  }
}

const sum = (c: Record<string, number>) => c.queued + c.sent + c.delivered + c.read + c.failed + c.skipped;

describe('a 5,000-contact campaign in the sandbox', () => {
  it('is paced, pauses and resumes, adds up, counts replies, messages each contact once', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, {
      deliveredAfterMs: 0,
      readAfterMs: null,
      reviewAfterMs: 0,
    });
    const k = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, { scope: 'sandbox' });
    await approvedTemplate(env.app, t.apiKey, {
      name: 'news',
      category: 'MARKETING',
      body: 'News for {{1}} today.',
      examples: ['you'],
    });
    const t0 = Date.now();
    const timings: Record<string, number> = {};
    await importContacts(t.apiKey, 'newsletter');
    timings.imported = Date.now() - t0;
    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Newsletter',
        message: { templateName: 'news', templateLanguage: 'en_US', parameters: ['{{ contact.phone }}'] },
        audience: { tag: 'newsletter' },
        pacing: { messagesPerSecond: RATE },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    const get = () => call(env.app, 'GET', `/campaigns/${id}`, { key: t.apiKey });
    const started = await call(env.app, 'POST', `/campaigns/${id}/start`, { key: t.apiKey });
    expect(started.body).toMatchObject({ status: 'running', counters: { total: SIZE } });
    timings.started = Date.now() - t0;

    const messaged = async () => {
      const { rows } = await env.tdb.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1',
        [id],
      );
      return rows[0]!.n;
    };
    const some = await eventually(messaged, (n) => n >= 1000, 60_000);
    expect(some).toBeGreaterThanOrEqual(1000);
    const paused = await call(env.app, 'POST', `/campaigns/${id}/pause`, { key: t.apiKey });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.status).toBe('paused');
    const atPause = await messaged();
    expect(atPause).toBeLessThan(SIZE);
    expect(sum(paused.body.counters)).toBe(SIZE);
    // Paused: the sender's rounds go by and nobody more is messaged.
    await sleep(500);
    expect(await messaged()).toBe(atPause);
    const resumed = await call(env.app, 'POST', `/campaigns/${id}/resume`, { key: t.apiKey });
    expect(resumed.body.status).toBe('running');

    const seen: Record<string, number>[] = [];
    const done = await eventually(
      async () => {
        const r = await get();
        seen.push(r.body.counters);
        return r;
      },
      (r) => r.body.status === 'completed' && r.body.counters.delivered === SIZE,
      120_000,
    );
    expect(done.body.counters).toEqual({
      total: SIZE,
      queued: 0,
      sent: 0,
      delivered: SIZE,
      read: 0,
      failed: 0,
      skipped: 0,
      replied: 0,
    });
    timings.completed = Date.now() - t0;
    for (const c of seen) expect(sum(c)).toBe(SIZE);

    // Never faster than the pace: messages per second as they were stamped.
    const { rows: perSecond } = await env.tdb.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1
        GROUP BY date_trunc('second', created_at) ORDER BY n DESC LIMIT 1`,
      [id],
    );
    expect(perSecond[0]!.n).toBeLessThanOrEqual(RATE);
    console.log(`campaign of ${SIZE}: ${JSON.stringify(timings)}`);
    // Each contact exactly once.
    const { rows: once } = await env.tdb.db.query<{ messages: number; contacts: number }>(
      'SELECT count(*)::int AS messages, count(DISTINCT contact_id)::int AS contacts FROM messages WHERE campaign_id = $1',
      [id],
    );
    expect(once[0]).toEqual({ messages: SIZE, contacts: SIZE });

    for (const i of [3, 1500, 4999]) {
      const reply = await call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: k.apiKey,
        body: { from: phoneOf(i), text: 'Unsubscribe me' },
      });
      expect(reply.status).toBe(201);
    }
    const replied = await get();
    expect(replied.body.counters).toMatchObject({ replied: 3, delivered: SIZE });
    const page = await call(env.app, 'GET', `/campaigns/${id}/recipients?replied=true`, { key: t.apiKey });
    expect(page.body.data.map((r: { phone: string }) => r.phone).sort()).toEqual(
      [phoneOf(3), phoneOf(1500), phoneOf(4999)].sort(),
    );
    const delivered = await call(env.app, 'GET', `/campaigns/${id}/recipients?status=delivered&limit=100`, {
      key: t.apiKey,
    });
    expect(delivered.body.data).toHaveLength(100);
    expect(delivered.body.nextCursor).not.toBeNull();
  }, 240_000);
});
