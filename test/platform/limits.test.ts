// Per-second limits, monthly quotas and their headers (docs/decisions.md § Limits, docs/errors.md).
// Every test makes its own accounts, so no budget or count is shared with another test.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import {
  bootstrapPartner,
  type CallOptions,
  call,
  createAccountKey,
  type Partner,
  type Reply,
  tenant,
} from '../helpers/client.ts';
import {
  connectRedis,
  createTestApp,
  createTestDatabase,
  redisUrl,
  type TestDatabase,
} from '../helpers/harness.ts';
import { expectError } from '../helpers/setup.ts';

let tdb: TestDatabase;
let app: App;
let partner: Partner;

beforeAll(async () => {
  tdb = await createTestDatabase();
  app = await createTestApp(tdb.db);
  partner = await bootstrapPartner(app);
  // Warm the request path once, so that the first burst is not slowed by first-call work and
  // every burst fits well inside its one-second window.
  const warm = await tenant(app, partner.partnerKey, { planCode: 'scale' });
  await burst(20, () => ({ key: warm.apiKey }));
});

afterAll(async () => {
  await app.close();
  await tdb.drop();
});

const PRO_API = { planCode: 'pro', addons: ['api_access'] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fires `n` requests at once; `options(i)` says who sends the i-th, `appOf(i)` which app answers it. */
function burst(
  n: number,
  options: (i: number) => CallOptions,
  appOf: (i: number) => App = () => app,
  path = '/account',
): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => call(appOf(i), 'GET', path, options(i))));
}

function statuses(replies: Reply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** A 429 RATE_LIMITED as documented: body, message naming the wait, whole-seconds Retry-After. */
function expectRateLimited(res: Reply, limit: number) {
  expectError(res, 429, 'RATE_LIMITED');
  const retryAfter = String(res.headers['retry-after']);
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(res.body.error.message).toBe(`Rate limit exceeded. Retry after ${retryAfter} second(s).`);
  expect(res.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
  expectResetNearNow(res);
}

function expectResetNearNow(res: Reply) {
  const reset = String(res.headers['x-ratelimit-reset']);
  expect(reset).toMatch(/^\d+$/);
  const nowSeconds = Date.now() / 1000;
  expect(Number(reset)).toBeGreaterThanOrEqual(Math.floor(nowSeconds) - 1);
  expect(Number(reset)).toBeLessThanOrEqual(Math.ceil(nowSeconds) + 2);
}

/** Exactly `admitted` of the burst answered 200, every other reply a documented 429 of `limit`. */
function expectAdmitted(replies: Reply[], admitted: number, limit = admitted) {
  expect(statuses(replies)).toEqual({ 200: admitted, 429: replies.length - admitted });
  for (const r of replies.filter((x) => x.status === 429)) expectRateLimited(r, limit);
}

/** For a burst alternating between two accounts: each account's half admitted exactly `admitted`. */
function expectEachHalfAdmitted(replies: Reply[], admitted: number) {
  expectAdmitted(
    replies.filter((_, i) => i % 2 === 0),
    admitted,
  );
  expectAdmitted(
    replies.filter((_, i) => i % 2 === 1),
    admitted,
  );
}

/** Calls counted this month, read through the partner (which counts nothing itself). */
/** The account's counted calls as the partner reads them, once `others` (other processes) wrote theirs. */
async function countedCalls(accountId: string, ...others: App[]): Promise<number> {
  for (const other of others) await other.ctx.usage.flush();
  const res = await call(app, 'GET', `/partner/accounts/${accountId}/usage`, { key: partner.partnerKey });
  expect(res.status).toBe(200);
  return res.body.totalCalls;
}

describe('per-second limit', () => {
  it('pro with api_access admits exactly 10 of 30 concurrent requests', async () => {
    const t = await tenant(app, partner.partnerKey, PRO_API);
    const replies = await burst(30, () => ({ key: t.apiKey }));
    expectAdmitted(replies, 10);
    // Rate-limited calls never reach the monthly count.
    expect(await countedCalls(t.accountId)).toBe(10);
  });

  it('business admits exactly 30 of 90 concurrent requests', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    const replies = await burst(90, () => ({ key: t.apiKey }));
    expectAdmitted(replies, 30);
  });

  it("all keys of one account share the account's budget", async () => {
    const t = await tenant(app, partner.partnerKey, PRO_API);
    const second = await createAccountKey(app, partner.partnerKey, t.accountId, { name: 'second' });
    const replies = await burst(30, (i) => ({ key: i % 2 === 0 ? t.apiKey : second.apiKey }));
    expectAdmitted(replies, 10);
  });

  it('two accounts have separate budgets', async () => {
    const a = await tenant(app, partner.partnerKey, PRO_API);
    const b = await tenant(app, partner.partnerKey, PRO_API);
    const replies = await burst(40, (i) => ({ key: i % 2 === 0 ? a.apiKey : b.apiKey }));
    expectEachHalfAdmitted(replies, 10);
  });

  it('admits requests again once the window has passed', async () => {
    const t = await tenant(app, partner.partnerKey, PRO_API);
    expectAdmitted(await burst(15, () => ({ key: t.apiKey })), 10);
    const refused = await call(app, 'GET', '/account', { key: t.apiKey });
    expectRateLimited(refused, 10);
    await sleep(1100);
    const again = await call(app, 'GET', '/account', { key: t.apiKey });
    expect(again.status).toBe(200);
    expect(again.headers['x-ratelimit-remaining']).toBe('9');
    expectAdmitted(await burst(15, () => ({ key: t.apiKey })), 9, 10);
  });

  it("a partner key acting on a sub-account is held to the sub-account's plan and budget", async () => {
    const t = await tenant(app, partner.partnerKey, PRO_API);
    const asPartner = await burst(30, () => ({ key: partner.partnerKey, accountId: t.accountId }));
    expectAdmitted(asPartner, 10);
    await sleep(1100);
    // The partner's calls and the account's own share one budget.
    const mixed = await burst(30, (i) =>
      i % 2 === 0 ? { key: partner.partnerKey, accountId: t.accountId } : { key: t.apiKey },
    );
    expectAdmitted(mixed, 10);
    expect(await countedCalls(t.accountId)).toBe(20);
  });

  it('partner endpoints have their own configurable limit', async () => {
    const limited = await createTestApp(tdb.db, { config: { partnerRatePerSecond: 5 } });
    try {
      const t = await tenant(app, partner.partnerKey, PRO_API);
      const replies = await burst(
        15,
        () => ({ key: partner.partnerKey }),
        () => limited,
        '/partner/keys',
      );
      expectAdmitted(replies, 5);
      // The partner's budget is not the sub-account's: acting on the account is still admitted.
      const onAccount = await call(limited, 'GET', '/account', {
        key: partner.partnerKey,
        accountId: t.accountId,
      });
      expect(onAccount.status).toBe(200);
      expect(onAccount.headers['x-ratelimit-limit']).toBe('10');
    } finally {
      await limited.close();
    }
  });
});

describe('limit headers', () => {
  it('X-RateLimit-* on every authenticated response, Remaining counting down', async () => {
    const t = await tenant(app, partner.partnerKey, PRO_API);
    const replies: Reply[] = [];
    for (let i = 0; i < 4; i++) replies.push(await call(app, 'GET', '/account', { key: t.apiKey }));
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit']).toBe('10');
      expectResetNearNow(r);
    }
    expect(replies.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['9', '8', '7', '6']);
    expect(replies.map((r) => r.headers['x-quota-limit'])).toEqual(['10000', '10000', '10000', '10000']);
    expect(replies.map((r) => r.headers['x-quota-remaining'])).toEqual(['9999', '9998', '9997', '9996']);
  });

  it.each([
    { planCode: 'pro', addons: ['api_access'], rate: 10, quota: 10_000 },
    { planCode: 'business', rate: 30, quota: 100_000 },
    { planCode: 'business_plus', rate: 60, quota: 500_000 },
    { planCode: 'premium', rate: 100, quota: null },
    { planCode: 'premium_plus', rate: 200, quota: null },
    { planCode: 'scale', rate: 500, quota: null },
  ])('$planCode: limit $rate/s, monthly quota $quota', async ({ planCode, addons, rate, quota }) => {
    const t = await tenant(app, partner.partnerKey, { planCode, addons: addons ?? [] });
    const res = await call(app, 'GET', '/account', { key: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBe(String(rate));
    expect(res.headers['x-ratelimit-remaining']).toBe(String(rate - 1));
    expect(res.body.limits).toMatchObject({ requestsPerSecond: rate, monthlyQuota: quota });
    if (quota === null) {
      expect(res.headers['x-quota-limit']).toBeUndefined();
      expect(res.headers['x-quota-remaining']).toBeUndefined();
      expect(res.body.usage.remaining).toBeNull();
    } else {
      expect(res.headers['x-quota-limit']).toBe(String(quota));
      expect(res.headers['x-quota-remaining']).toBe(String(quota - 1));
      expect(res.body.usage).toMatchObject({ calls: 1, remaining: quota - 1 });
    }
  });

  it('on error responses of authenticated calls too', async () => {
    const t = await tenant(app, partner.partnerKey, PRO_API);
    // A validation failure: admitted (and counted), then refused by the route.
    const invalid = await call(app, 'GET', '/account/usage', { key: t.apiKey, query: { from: 'yesterday' } });
    expect(invalid.status).toBe(400);
    expect(invalid.headers['x-ratelimit-limit']).toBe('10');
    expect(invalid.headers['x-ratelimit-remaining']).toBe('9');
    expectResetNearNow(invalid);
    expect(invalid.headers['x-quota-limit']).toBe('10000');
    expect(invalid.headers['x-quota-remaining']).toBe('9999');

    // A 429: the rate-limit headers, Retry-After, and the quota as it stands (refused calls are not counted).
    const replies = await burst(12, () => ({ key: t.apiKey }));
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(3);
    for (const r of refused) {
      expectRateLimited(r, 10);
      expect(r.headers['x-quota-limit']).toBe('10000');
      // Read while the admitted calls of the same burst are being counted: 1 to 10 calls used.
      const remaining = Number(r.headers['x-quota-remaining']);
      expect(remaining).toBeGreaterThanOrEqual(9990);
      expect(remaining).toBeLessThanOrEqual(9999);
    }
    const settled = await call(app, 'GET', '/account', { key: t.apiKey });
    expectRateLimited(settled, 10);
    expect(settled.headers['x-quota-remaining']).toBe('9990');

    // A partner endpoint's 404: the partner's own limit, no quota.
    const missing = await call(app, 'GET', '/partner/accounts/acc_01jh0000000000000000000000', {
      key: partner.partnerKey,
    });
    expect(missing.status).toBe(404);
    expect(missing.headers['x-ratelimit-limit']).toBe('100000');
    expect(missing.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expectResetNearNow(missing);
    expect(missing.headers['x-quota-limit']).toBeUndefined();
  });

  it('no limit headers where nothing was authenticated', async () => {
    const anonymous = await call(app, 'GET', '/account');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined();
    const health = await call(app, 'GET', '/healthz');
    expect(health.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('monthly quota', () => {
  let quotaApp: App;

  beforeAll(async () => {
    quotaApp = await createTestApp(tdb.db, { config: { monthlyQuotaOverride: 5 } });
  });

  afterAll(async () => {
    await quotaApp.close();
  });

  function expectQuotaExceeded(res: Reply) {
    expectError(res, 429, 'QUOTA_EXCEEDED');
    expect(res.headers['x-quota-limit']).toBe('5');
    expect(res.headers['x-quota-remaining']).toBe('0');
    // Retry-After: whole seconds until the next calendar month (UTC) begins.
    const now = new Date();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    const retryAfter = String(res.headers['retry-after']);
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Math.abs(Number(retryAfter) - (nextMonth - now.getTime()) / 1000)).toBeLessThan(5);
  }

  it('stops at exactly its count', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(quotaApp, 'GET', '/account', { key: t.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers['x-quota-limit']).toBe('5');
      expect(res.body.limits.monthlyQuota).toBe(5);
      expect(res.body.usage).toMatchObject({ calls: i + 1, remaining: 4 - i });
      remaining.push(String(res.headers['x-quota-remaining']));
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    for (let i = 0; i < 3; i++)
      expectQuotaExceeded(await call(quotaApp, 'GET', '/account', { key: t.apiKey }));
    expectQuotaExceeded(await call(quotaApp, 'GET', '/account/wallet', { key: t.apiKey }));

    // Refused calls are not counted: the partner (not counted itself) sees 5.
    expect(await countedCalls(t.accountId, quotaApp)).toBe(5);
    // An app without the override holds the same account to its plan's 100,000; the call counts itself.
    const self = await call(app, 'GET', '/account', { key: t.apiKey });
    expect(self.status).toBe(200);
    expect(self.body.usage).toMatchObject({ calls: 6, remaining: 100_000 - 6 });
    await quotaApp.ctx.usage.flush();
    const usage = await call(app, 'GET', '/account/usage', { key: t.apiKey });
    expect(usage.body.totalCalls).toBe(7);
  });

  it('admits exactly the quota among concurrent requests', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    const replies = await burst(
      12,
      () => ({ key: t.apiKey }),
      () => quotaApp,
    );
    expect(statuses(replies)).toEqual({ 200: 5, 429: 7 });
    for (const r of replies.filter((x) => x.status === 429)) expectQuotaExceeded(r);
    // Each admitted call took its own place in the count.
    const remaining = replies.filter((r) => r.status === 200).map((r) => r.headers['x-quota-remaining']);
    expect(remaining.sort()).toEqual(['0', '1', '2', '3', '4']);
    expect(await countedCalls(t.accountId, quotaApp)).toBe(5);
  });

  it("a partner key acting on a sub-account counts against the sub-account's quota", async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    for (let i = 0; i < 3; i++) {
      expect((await call(quotaApp, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    }
    for (let i = 0; i < 2; i++) {
      const res = await call(quotaApp, 'GET', '/account', {
        key: partner.partnerKey,
        accountId: t.accountId,
      });
      expect(res.status).toBe(200);
      expect(res.body.keyScope).toBe('partner');
      expect(res.headers['x-quota-remaining']).toBe(String(1 - i));
    }
    expectQuotaExceeded(
      await call(quotaApp, 'GET', '/account', { key: partner.partnerKey, accountId: t.accountId }),
    );
    expectQuotaExceeded(await call(quotaApp, 'GET', '/account', { key: t.apiKey }));
    // The partner's own endpoints are not counted against any account.
    const own = await call(quotaApp, 'GET', '/partner/keys', { key: partner.partnerKey });
    expect(own.status).toBe(200);
    expect(own.headers['x-quota-limit']).toBeUndefined();
    expect(await countedCalls(t.accountId, quotaApp)).toBe(5);
  });

  it('a call counts once admitted, whatever its outcome', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    const bad = await call(quotaApp, 'GET', '/account/usage', {
      key: t.apiKey,
      query: { from: '2026-13-45' },
    });
    expect(bad.status).toBe(400);
    expect(bad.headers['x-quota-remaining']).toBe('4');
    const wrongAccount = await call(quotaApp, 'GET', '/account', { key: t.apiKey, accountId: 'acc_other' });
    expect(wrongAccount.status).toBe(403);
    const anonymous = await call(quotaApp, 'GET', '/account', { accountId: t.accountId });
    expect(anonymous.status).toBe(401);
    // Only the admitted 400 counted: refused before the limiter, the 403 and 401 did not.
    expect(await countedCalls(t.accountId, quotaApp)).toBe(1);
  });

  it('unlimited plans ignore the override', async () => {
    const t = await tenant(app, partner.partnerKey, { planCode: 'premium' });
    const replies: Reply[] = [];
    for (let i = 0; i < 7; i++) replies.push(await call(quotaApp, 'GET', '/account', { key: t.apiKey }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    expect(replies[6].headers['x-quota-limit']).toBeUndefined();
    expect(replies[6].body.limits.monthlyQuota).toBeNull();
  });
});

describe.skipIf(!redisUrl)('per-second limit shared through Redis', () => {
  const connections: Redis[] = [];
  const apps: App[] = [];

  async function redisApp(): Promise<App> {
    const redis = connectRedis();
    connections.push(redis);
    const a = await createTestApp(tdb.db, { redis });
    apps.push(a);
    return a;
  }

  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const r of connections) await r.quit();
  });

  it('pro with api_access admits exactly 10 of 30 concurrent requests', async () => {
    const shared = await redisApp();
    const t = await tenant(app, partner.partnerKey, PRO_API);
    expectAdmitted(
      await burst(
        30,
        () => ({ key: t.apiKey }),
        () => shared,
      ),
      10,
    );
    expect(await countedCalls(t.accountId, ...apps)).toBe(10);
  });

  it('business admits exactly 30 of 90 concurrent requests', async () => {
    const shared = await redisApp();
    const t = await tenant(app, partner.partnerKey, { planCode: 'business' });
    expectAdmitted(
      await burst(
        90,
        () => ({ key: t.apiKey }),
        () => shared,
      ),
      30,
    );
  });

  it('keys of one account share, accounts do not', async () => {
    const shared = await redisApp();
    const a = await tenant(app, partner.partnerKey, PRO_API);
    const second = await createAccountKey(app, partner.partnerKey, a.accountId, { name: 'second' });
    const b = await tenant(app, partner.partnerKey, PRO_API);
    const replies = await burst(
      60,
      (i) => (i % 2 === 1 ? { key: b.apiKey } : { key: i % 4 === 0 ? a.apiKey : second.apiKey }),
      () => shared,
    );
    expectEachHalfAdmitted(replies, 10);
  });

  it('two apps on one database, each with its own Redis connection, share one budget', async () => {
    const first = await redisApp();
    const second = await redisApp();
    const t = await tenant(app, partner.partnerKey, PRO_API);
    const replies = await burst(
      30,
      () => ({ key: t.apiKey }),
      (i) => (i % 2 === 0 ? first : second),
    );
    expectAdmitted(replies, 10);
    expect(await countedCalls(t.accountId, ...apps)).toBe(10);
    await sleep(1100);
    const again = await burst(
      30,
      () => ({ key: t.apiKey }),
      (i) => (i % 2 === 0 ? second : first),
    );
    expectAdmitted(again, 10);
    expect(await countedCalls(t.accountId, ...apps)).toBe(20);
  });
});
