// Real server processes (`node src/cli.ts serve`) on one PostgreSQL database and one Redis: they
// share each account's per-second budget and monthly quota, and each shuts down cleanly on SIGTERM.
// Needs both TEST_DATABASE_URL and TEST_REDIS_URL; skipped otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { API_PREFIX } from '../../src/app.ts';
import { bootstrapPartner, call, type Partner, tenant } from '../helpers/client.ts';
import { memberSession } from '../helpers/console.ts';
import {
  createTestApp,
  createTestDatabase,
  onPostgres,
  redisUrl,
  type TestDatabase,
} from '../helpers/harness.ts';
import { exited, processApi, running, type ServerProcess, startServerProcess } from '../helpers/processes.ts';
import { SseClient } from '../helpers/sse.ts';
import { eventually, until } from '../helpers/wait.ts';

const enabled = onPostgres && Boolean(redisUrl);
/** Every finite plan's monthly quota in these processes. */
const QUOTA = 50;

type Server = ServerProcess;

interface HttpReply {
  status: number;
  body: any;
  headers: Headers;
}

function startServer(databaseUrl: string): Promise<Server> {
  // Four processes starting at once on two busy cores: more time than the default to be up.
  return startServerProcess(
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl!,
      TIDINGS_RUN_WORKERS: 'false',
      TIDINGS_MONTHLY_QUOTA_OVERRIDE: String(QUOTA),
    },
    { readyMs: 120_000 },
  );
}

async function get(server: Server, path: string, apiKey?: string): Promise<HttpReply> {
  const url = path === '/healthz' || path === '/readyz' ? path : `${API_PREFIX}${path}`;
  const res = await fetch(`${server.base}${url}`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** The account's calls as the partner reads them, once the processes wrote theirs (within 250 ms). */
async function countedCalls(app: App, partner: Partner, accountId: string, expected: number) {
  return eventually(
    async () =>
      (await call(app, 'GET', `/partner/accounts/${accountId}/usage`, { key: partner.partnerKey })).body
        .totalCalls,
    (n) => n === expected,
  );
}

describe.skipIf(!enabled)('four server processes sharing one database and one Redis', () => {
  let tdb: TestDatabase;
  let app: App;
  let partner: Partner;
  const servers: Server[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    app = await createTestApp(tdb.db);
    partner = await bootstrapPartner(app);
    servers.push(...(await Promise.all([1, 2, 3, 4].map(() => startServer(tdb.url!)))));
    // Warm the processes (code paths, database and Redis connections) with an account of its own,
    // so that the measured burst fits well inside its one-second window.
    const warm = await tenant(app, partner.partnerKey, { planCode: 'scale' });
    await Promise.all(
      servers.flatMap((s) => Array.from({ length: 10 }, () => get(s, '/account', warm.apiKey))),
    );
  }, 180_000);

  afterAll(async () => {
    for (const s of servers) if (running(s.child)) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => exited(s.child, 15_000)));
    await app?.close();
    await tdb?.drop();
  });

  it('both processes serve the same installation', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    for (const s of servers) {
      expect((await get(s, '/readyz')).status).toBe(200);
      const res = await get(s, '/account', t.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.accountId).toBe(t.accountId);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    }
    // Each counted its call in the one database.
    expect(await countedCalls(app, partner, t.accountId, 4)).toBe(4);
  });

  it('admit exactly the plan limit between them: 10 of 30 concurrent requests', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'pro', addons: ['api_access'] });
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => get(servers[i % 2], '/account', t.apiKey)),
    );
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(20);
    for (const r of refused) {
      expect(r.body.error.code).toBe('RATE_LIMITED');
      expect(r.body.error.message).toMatch(/^Rate limit exceeded\. Retry after \d+ second\(s\)\.$/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.headers.get('x-ratelimit-limit')).toBe('10');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    // Separate budgets would have admitted 10 in each process; only admitted calls were counted.
    expect(await countedCalls(app, partner, t.accountId, 10)).toBe(10);
  });

  it('admit exactly the monthly quota between them, and count every admitted call', async () => {
    // 60/s: a burst of 100 passes 60 to the quota, which admits 50 of them.
    const t = await tenant(app, partner.partnerKey, { planCode: 'business_plus' });
    const burst = await Promise.all(
      Array.from({ length: 100 }, (_, i) => get(servers[i % 4], '/account', t.apiKey)),
    );
    const codes = (rs: HttpReply[]) => rs.map((r) => (r.status === 200 ? 'ok' : r.body.error.code));
    const admitted = codes(burst).filter((c) => c === 'ok').length;
    expect(admitted).toBeLessThanOrEqual(QUOTA);
    // Then each process in turn, until every one of them refuses for the quota: a process refuses
    // only when it holds no lease and the month has none left, so all of it has been used.
    // A round the per-second limit refused (the burst filled its second) waits for it to pass.
    let more = 0;
    for (let round = 0; round < 200; round++) {
      const replies: HttpReply[] = [];
      for (const s of servers) replies.push(await get(s, '/account', t.apiKey));
      more += codes(replies).filter((c) => c === 'ok').length;
      if (codes(replies).every((c) => c === 'QUOTA_EXCEEDED')) break;
      if (codes(replies).includes('RATE_LIMITED')) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(admitted + more).toBe(QUOTA);
    const refused = await get(servers[0], '/account', t.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-quota-remaining')).toBe('0');
    expect(await countedCalls(app, partner, t.accountId, QUOTA)).toBe(QUOTA);
  });

  it('a key revoked or a session ended through one process ends the streams open on others within 1 s', async () => {
    const t = await tenant(app, partner.partnerKey);
    const agent = await memberSession(app, t.apiKey, 'agent');
    const stream = (server: Server, headers: Record<string, string>) =>
      SseClient.open(`${server.base}${API_PREFIX}/events/stream`, headers);
    const byKey = await stream(servers[0]!, { 'x-api-key': t.apiKey });
    const bySession = await stream(servers[1]!, { cookie: `tidings_session=${agent.cookie}` });
    try {
      const made = await call(app, 'POST', '/contacts', { key: t.apiKey, body: { phone: '+14155557001' } });
      for (const s of [byKey, bySession]) await s.waitFor(1);
      expect(byKey.messages[0]!.json.data.id).toBe(made.body.id);

      let phone = 7002;
      const endsWithin1s = async (client: SseClient, end: () => Promise<number>) => {
        expect(await end()).toBe(204);
        const ended = Date.now();
        const after = await call(app, 'POST', '/contacts', {
          key: partner.partnerKey,
          accountId: t.accountId,
          body: { phone: `+1415555${phone++}` },
        });
        expect(after.status).toBe(201);
        await until(
          () => client.ended,
          1000 - (Date.now() - ended),
          () => 'the stream is still open a second after its access ended',
        );
        expect(client.messages.map((m) => m.json.data.id)).not.toContain(after.body.id);
      };
      await endsWithin1s(byKey, async () => {
        const res = await processApi(
          servers[2]!,
          'DELETE',
          `/partner/accounts/${t.accountId}/keys/${t.keyId}`,
          partner.partnerKey,
        );
        return res.status;
      });
      await endsWithin1s(bySession, async () => {
        const res = await fetch(`${servers[3]!.base}${API_PREFIX}/console/session`, {
          method: 'DELETE',
          headers: { cookie: `tidings_session=${agent.cookie}`, 'x-csrf-token': agent.csrf },
        });
        return res.status;
      });
    } finally {
      await Promise.all([byKey.close(), bySession.close()]);
    }
  });

  it('a process shuts down gracefully on SIGTERM (exit code 0) while the other keeps serving', async () => {
    const [, second] = servers;
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    expect((await get(second, '/account', t.apiKey)).status).toBe(200);
    second.child.kill('SIGTERM');
    const ended = await exited(second.child, 15_000);
    expect(ended, second.output.join('')).toEqual({ code: 0, signal: null });
    await expect(fetch(`${second.base}/healthz`)).rejects.toThrow();
    expect((await get(servers[0], '/account', t.apiKey)).status).toBe(200);
  });
});
