// Property: under any arrival schedule of requests within one window, an account's per-second limit
// admits exactly min(requests, limit), whichever of its keys (or its partner, acting on it) sends
// them and whichever process answers, and says so truthfully: each admitted reply's
// X-RateLimit-Remaining is a distinct count down from limit - 1, each refusal a documented 429 with
// Retry-After and Remaining 0. Through HTTP, on the in-process limiter, and on Redis with two apps
// sharing one budget when TEST_REDIS_URL is set. What happens across windows, which real time
// cannot place exactly, is proved on a controlled clock in test/properties/rate-window.test.ts.
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { call, createAccountKey, type Reply, tenant } from '../helpers/client.ts';
import { connectRedis, createTestApp, redisUrl } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { sleep } from '../helpers/wait.ts';

const env = useTestApp();

/** pro with api_access: 10 requests a second (docs/decisions.md § Limits, docs/api.md). */
const PRO_API = { planCode: 'pro', addons: ['api_access'] };
const LIMIT = 10;

/** Who sends a request: the account's first or second key, its partner acting on it, or account B. */
type Sender = 'key' | 'second' | 'partner' | 'other';

interface Arrival {
  atMs: number;
  sender: Sender;
  /** Which of the apps answers it (they share one budget only through Redis). */
  app: number;
}

const scheduleArb = (apps: number) =>
  fc.array(
    fc.record({
      atMs: fc.integer({ min: 0, max: 300 }),
      sender: fc.constantFrom<Sender>('key', 'second', 'partner', 'other'),
      app: fc.integer({ min: 0, max: apps - 1 }),
    }),
    { minLength: 1, maxLength: 36 },
  );

interface Outcome {
  arrival: Arrival;
  reply: Reply;
  sentAt: number;
  answeredAt: number;
}

async function play(apps: App[], schedule: Arrival[]): Promise<Outcome[]> {
  const a = await tenant(env.app, env.partner.partnerKey, PRO_API);
  const second = await createAccountKey(env.app, env.partner.partnerKey, a.accountId, { name: 'second' });
  const b = await tenant(env.app, env.partner.partnerKey, PRO_API);
  const options = {
    key: { key: a.apiKey },
    second: { key: second.apiKey },
    partner: { key: env.partner.partnerKey, accountId: a.accountId },
    other: { key: b.apiKey },
  };
  return Promise.all(
    schedule.map(async (arrival) => {
      await sleep(arrival.atMs);
      const sentAt = Date.now();
      const reply = await call(apps[arrival.app]!, 'GET', '/account', options[arrival.sender]);
      return { arrival, reply, sentAt, answeredAt: Date.now() };
    }),
  );
}

/** One account's replies, all consumed inside one window: exactly the limit's worth admitted. */
function expectExactlyLimited(outcomes: Outcome[]): void {
  const admitted = outcomes.filter((o) => o.reply.status === 200);
  const refused = outcomes.filter((o) => o.reply.status !== 200);
  expect(admitted).toHaveLength(Math.min(outcomes.length, LIMIT));
  // Each admitted request took its own place in the budget: LIMIT-1, LIMIT-2, … in some order.
  const remaining = admitted
    .map((o) => Number(o.reply.headers['x-ratelimit-remaining']))
    .sort((x, y) => y - x);
  expect(remaining).toEqual(Array.from({ length: admitted.length }, (_, i) => LIMIT - 1 - i));
  for (const { reply } of refused) {
    expectError(reply, 429, 'RATE_LIMITED');
    expect(reply.headers['x-ratelimit-remaining']).toBe('0');
    // The window is at most a second long, so a refusal is told to come back in one second.
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.body.error.message).toBe('Rate limit exceeded. Retry after 1 second(s).');
  }
  for (const { reply, sentAt, answeredAt } of outcomes) {
    expect(reply.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    // Epoch seconds at which the window ends: after the request, at most a second (rounded up) on.
    const reset = Number(reply.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(sentAt / 1000));
    expect(reset).toBeLessThanOrEqual(Math.ceil((answeredAt + 1000) / 1000));
  }
  // One window, one end (to the second; reading the clock twice may round it either way).
  const resets = outcomes.map((o) => Number(o.reply.headers['x-ratelimit-reset']));
  expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
}

async function checkSchedules(apps: () => App[]): Promise<void> {
  await fc.assert(
    fc.asyncProperty(scheduleArb(apps().length), async (schedule) => {
      const outcomes = await play(apps(), schedule);
      // Each account's budget opens with its first request (a fresh account each run): if the
      // whole schedule was answered within a second of its first request, every request fell in
      // that one window. Otherwise (a machine too loaded to keep the schedule) the run proves
      // nothing exact, and fast-check draws another.
      const span =
        Math.max(...outcomes.map((o) => o.answeredAt)) - Math.min(...outcomes.map((o) => o.sentAt));
      fc.pre(span < 1000);
      expectExactlyLimited(outcomes.filter((o) => o.arrival.sender !== 'other'));
      expectExactlyLimited(outcomes.filter((o) => o.arrival.sender === 'other'));
    }),
    { numRuns: 25 },
  );
}

describe('the per-second limit under random arrival schedules, in-process', () => {
  beforeAll(async () => {
    // Warm the request path, so that the first schedule is not slowed by first-call work.
    const warm = await tenant(env.app, env.partner.partnerKey, { planCode: 'scale' });
    await Promise.all(
      Array.from({ length: 20 }, () => call(env.app, 'GET', '/account', { key: warm.apiKey })),
    );
  });

  it('admits exactly the limit in a window, with truthful headers', {
    timeout: 60_000,
  }, async () => {
    await checkSchedules(() => [env.app]);
  });
});

describe.skipIf(!redisUrl)('the per-second limit under random arrival schedules, through Redis', () => {
  const connections: Redis[] = [];
  const apps: App[] = [];

  beforeAll(async () => {
    // Two processes' worth of apps on one database, each with its own Redis connection.
    for (let i = 0; i < 2; i++) {
      const redis = connectRedis();
      connections.push(redis);
      apps.push(await createTestApp(env.tdb.db, { redis }));
    }
  });

  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const r of connections) await r.quit();
  });

  it('two apps sharing one budget admit exactly the limit between them', { timeout: 60_000 }, async () => {
    await checkSchedules(() => apps);
  });
});
