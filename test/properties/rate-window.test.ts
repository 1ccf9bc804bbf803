// Property: on a controlled clock, for any arrival schedule over many seconds, the per-second
// limiter (RateLimits in src/kernel/access/rate-limits.ts) admits at most its limit in ANY span of one second
// [t, t + 1000 ms), wherever it starts; refuses a request only when the second ending at it
// already holds the limit; and tells the truth about it: remaining is how many more it would admit
// right now, resetInMs when the oldest admission of the last second leaves it (after a refusal,
// when the next request will be admitted). Checked against a model (the list of admission times),
// in this process and, when TEST_REDIS_URL is set, in Redis with the clock given to its script.
// Real time cannot place requests on exact milliseconds (test/properties/rate-limit.test.ts checks a
// burst through HTTP); a fake clock can, so the schedules land just before, on and after the
// moment an admission turns a second old.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type RateDecision, RateLimits } from '../../src/kernel/access/rate-limits.ts';
import { connectRedis, redisUrl } from '../helpers/harness.ts';

// Each request comes some milliseconds after the previous one (0: at the same instant).
const gapArb = fc.oneof(
  fc.constantFrom(0, 1, 999, 1000, 1001),
  fc.integer({ min: 0, max: 400 }),
  fc.integer({ min: 0, max: 2500 }),
);
const scheduleArb = fc.record({
  perSecond: fc.constantFrom(1, 2, 3, 5, 10),
  arrivals: fc.array(fc.record({ gapMs: gapArb, key: fc.constantFrom('a', 'b') }), {
    minLength: 1,
    maxLength: 60,
  }),
});

/** Checks one decision against the key's admissions so far (`admitted`, updated here). */
function expectTruthful(admitted: number[], at: number, decision: RateDecision, perSecond: number): void {
  expect(decision.limit).toBe(perSecond);
  const recent = admitted.filter((t) => t > at - 1000);
  // Refused exactly when the second ending at this request is full.
  expect(decision.allowed).toBe(recent.length < perSecond);
  if (decision.allowed) {
    admitted.push(at);
    recent.push(at);
  }
  expect(decision.remaining).toBe(perSecond - recent.length);
  // The oldest admission of the last second leaves it then; a refusal's next admission comes then.
  expect(decision.resetInMs).toBe(recent[0]! + 1000 - at);
}

/** No span [t, t + 1000) holds more than the limit: any limit + 1 admissions span a second. */
function expectAnySecondHolds(admitted: number[], perSecond: number): void {
  for (let i = perSecond; i < admitted.length; i++) {
    expect(admitted[i]! - admitted[i - perSecond]!).toBeGreaterThanOrEqual(1000);
  }
}

async function checkSchedules(limiter: (clock: () => number) => RateLimits, runs: number): Promise<void> {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(scheduleArb, async ({ perSecond, arrivals }) => {
      let now = Date.UTC(2026, 0, 1);
      const limits = limiter(() => now);
      const prefix = `window:${process.pid}:${run++}:`;
      const admitted = new Map<string, number[]>();
      for (const { gapMs, key } of arrivals) {
        now += gapMs;
        const decision = await limits.consume(prefix + key, perSecond);
        const seen = admitted.get(key) ?? [];
        admitted.set(key, seen);
        expectTruthful(seen, now, decision, perSecond);
      }
      for (const seen of admitted.values()) expectAnySecondHolds(seen, perSecond);
    }),
    { numRuns: runs },
  );
}

describe('the per-second limiter on a controlled clock', () => {
  it('in this process: at most the limit in any second, refused only when it is full', async () => {
    await checkSchedules((clock) => new RateLimits(null, { clock }), 1000);
  });

  it('in this process: forgets keys idle for a second', () => {
    let now = 0;
    const limits = new RateLimits(null, { clock: () => now });
    for (let i = 0; i < 5000; i++) limits.consume(`idle:${i}`, 10);
    expect(limits.trackedKeys).toBe(5000);
    now += 1000;
    for (let i = 0; i < 5000; i++) limits.consume('busy', 10);
    expect(limits.trackedKeys).toBe(1);
  });
});

describe('the per-second limiter while Redis is unreachable', () => {
  it("falls back to this process's own log rather than refusing every request", async () => {
    // Nothing listens on port 1; as in the server, no offline queue: a command fails at once.
    const down = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on('error', () => {});
    const now = 0;
    const limits = new RateLimits(down, { clock: () => now });
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limits.consume('down', 3));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    down.disconnect();
  });
});

describe.skipIf(!redisUrl)('the per-second limiter in Redis on a controlled clock', () => {
  let redis: Redis;
  afterAll(async () => {
    await redis?.quit();
  });

  it('at most the limit in any second, refused only when it is full', { timeout: 60_000 }, async () => {
    redis = connectRedis();
    await redis.ping();
    // Two limiters (two processes' worth) on one Redis would share the log; one is enough here:
    // the script does the whole decision atomically, so which process asks does not matter.
    await checkSchedules((clock) => new RateLimits(redis, { clock }), 150);
    // The decisions came from Redis, not from the in-process fallback.
    expect((await redis.keys(`tidings:rl:window:${process.pid}:*`)).length).toBeGreaterThan(0);
  });
});
