// Two real server processes (`node src/cli.ts serve`) on one PostgreSQL database and one Redis: they
// share each account's per-second budget, and each shuts down cleanly on SIGTERM. Needs both
// TEST_DATABASE_URL and TEST_REDIS_URL; skipped otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { API_PREFIX } from '../src/app.ts';
import { bootstrapPartner, call, type Partner, tenant } from './helpers/client.ts';
import {
  createTestApp,
  createTestDatabase,
  onPostgres,
  redisUrl,
  type TestDatabase,
} from './helpers/harness.ts';
import { exited, running, type ServerProcess, startServerProcess } from './helpers/processes.ts';

const enabled = onPostgres && Boolean(redisUrl);

type Server = ServerProcess;

interface HttpReply {
  status: number;
  body: any;
  headers: Headers;
}

function startServer(databaseUrl: string): Promise<Server> {
  return startServerProcess({
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl!,
    TIDINGS_RUN_WORKERS: 'false',
  });
}

async function get(server: Server, path: string, apiKey?: string): Promise<HttpReply> {
  const url = path === '/healthz' || path === '/readyz' ? path : `${API_PREFIX}${path}`;
  const res = await fetch(`${server.base}${url}`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

describe.skipIf(!enabled)('two server processes sharing one database and one Redis', () => {
  let tdb: TestDatabase;
  let app: App;
  let partner: Partner;
  const servers: Server[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    app = await createTestApp(tdb.db);
    partner = await bootstrapPartner(app);
    servers.push(...(await Promise.all([startServer(tdb.url!), startServer(tdb.url!)])));
    // Warm both processes (code paths, database and Redis connections) with an account of its own,
    // so that the measured burst fits well inside its one-second window.
    const warm = await tenant(app, partner.partnerKey, { planCode: 'scale' });
    await Promise.all(
      servers.flatMap((s) => Array.from({ length: 10 }, () => get(s, '/account', warm.apiKey))),
    );
  });

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
    // Both counted their call in the one database.
    const usage = await call(app, 'GET', `/partner/accounts/${t.accountId}/usage`, {
      key: partner.partnerKey,
    });
    expect(usage.body.totalCalls).toBe(2);
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
    const usage = await call(app, 'GET', `/partner/accounts/${t.accountId}/usage`, {
      key: partner.partnerKey,
    });
    expect(usage.body.totalCalls).toBe(10);
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
