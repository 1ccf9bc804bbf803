// Webhook delivery over real HTTP to loopback receivers: retries on the documented schedule,
// Retry-After, 410 Gone, redirects, timeouts, refused connections, manual retries, the five-day
// disable rule, the delivery log and the metrics. Due times follow the app clock, a FakeClock the
// tests move; everything else (requests, timeouts, latencies) is real.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.ts';
import { makeConfig } from '../../src/config.ts';
import { call, tenant } from '../helpers/client.ts';
import { FakeClock } from '../helpers/harness.ts';
import { type Answer, type Received, Receiver, verifySignature } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SCHEDULE_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
const LOOPBACK = { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50 };

// Most tests: the default 10 s timeout, and an app clock the tests move.
const clock = new FakeClock();
const env = useTestApp({ now: clock.now, config: LOOPBACK });

// Every test makes its own tenants, webhooks and receivers. Its webhooks are disabled after it, so
// that moving the clock in a later test does not retry its leftovers; receivers stay open to the
// end, so that no later receiver gets a port an old webhook still points to.
const receivers: Receiver[] = [];
const hooksOfTest: Hook[] = [];

beforeAll(async () => {
  await env.app.ctx.dispatcher.start();
});
afterEach(async () => {
  for (const h of hooksOfTest.splice(0)) {
    await call(h.app, 'PATCH', `/webhooks/${h.id}`, { key: h.key, body: { enabled: false } });
  }
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

interface Hook {
  app: App;
  id: string;
  key: string;
  accountId: string;
  secret: string;
}

interface Attempt {
  attemptedAt: string;
  statusCode: number | null;
  latencyMs: number;
  responseExcerpt: string | null;
  error: string | null;
}

interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  event: any;
  attempts: Attempt[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (iso: string | null) => Date.parse(iso!);

/** Retries fn (assertions included) until it passes; throws its last error after timeoutMs. */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(15);
    }
  }
}

async function receiver(respond: (request: Received, n: number) => Answer): Promise<Receiver> {
  const r = await Receiver.start(respond);
  receivers.push(r);
  return r;
}

/** A webhook to `url` of a fresh tenant (or of `owner`), on the main app unless `on` is given. */
async function subscribe(
  url: string,
  events = ['*'],
  owner?: { apiKey: string; accountId: string },
  on = env,
): Promise<Hook> {
  const t = owner ?? (await tenant(on.app, on.partner.partnerKey));
  const res = await call(on.app, 'POST', '/webhooks', { key: t.apiKey, body: { url, events } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const hook: Hook = {
    app: on.app,
    id: res.body.id,
    key: t.apiKey,
    accountId: t.accountId,
    secret: res.body.secret,
  };
  hooksOfTest.push(hook);
  return hook;
}

async function sendTest(h: Hook): Promise<Delivery> {
  const res = await call(h.app, 'POST', `/webhooks/${h.id}/test`, { key: h.key });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

async function deliveries(h: Hook, query: Record<string, string> = {}) {
  const res = await call<{ data: Delivery[]; nextCursor: string | null }>(
    h.app,
    'GET',
    `/webhooks/${h.id}/deliveries`,
    { key: h.key, query: { limit: '100', ...query } },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function deliveryOf(h: Hook, id: string): Promise<Delivery> {
  const found = (await deliveries(h)).data.find((d) => d.id === id);
  expect(found, `delivery ${id}`).toBeDefined();
  return found!;
}

/** The delivery once its n-th attempt is recorded (and no further one). */
async function afterAttempt(h: Hook, id: string, n: number, timeoutMs = 5000): Promise<Delivery> {
  return eventually(async () => {
    const d = await deliveryOf(h, id);
    expect(d.attemptCount).toBe(n);
    expect(d.attempts).toHaveLength(n);
    return d;
  }, timeoutMs);
}

async function webhook(h: Hook) {
  const res = await call(h.app, 'GET', `/webhooks/${h.id}`, { key: h.key });
  expect(res.status).toBe(200);
  return res.body;
}

/** Moves the app clock to just past `iso` and tells the dispatcher to look. */
function moveTo(iso: string | number, pastBy = 1): void {
  const target = (typeof iso === 'number' ? iso : Date.parse(iso)) + pastBy;
  const now = clock.now().getTime();
  expect(target, 'the clock only moves forward').toBeGreaterThanOrEqual(now);
  clock.advance(target - now);
  env.app.ctx.dispatcher.wake();
}

function advance(by: number): void {
  clock.advance(by);
  env.app.ctx.dispatcher.wake();
}

/**
 * Verifies a request with `standardwebhooks` as a receiver would when it arrived at `at` (the app
 * clock's time of the attempt; the package compares the signed timestamp with Date.now()).
 */
function verifyAt(secret: string, received: Received, at: number): unknown {
  vi.setSystemTime(at);
  try {
    return verifySignature(secret, received);
  } finally {
    vi.useRealTimers();
  }
}

/** Drives a delivery through its retries until it is no longer pending. */
async function driveToEnd(h: Hook, id: string): Promise<Delivery> {
  let d = await afterAttempt(h, id, (await deliveryOf(h, id)).attemptCount || 1);
  while (d.status === 'pending') {
    moveTo(d.nextAttemptAt!);
    d = await afterAttempt(h, id, d.attemptCount + 1);
  }
  return d;
}

describe('retries', () => {
  it('retries a failing receiver until it answers 2xx, with the same event id, body and valid signatures', async () => {
    const rx = await receiver((_req, n) =>
      n < 3 ? { status: 500, body: `down ${n + 1}` } : { status: 200, body: 'thanks' },
    );
    const h = await subscribe(rx.url(), ['webhook.test']);
    const queued = await sendTest(h);
    expect(queued).toMatchObject({
      status: 'pending',
      attemptCount: 0,
      attempts: [],
      eventType: 'webhook.test',
    });

    let d = await afterAttempt(h, queued.id, 1);
    for (let k = 1; k <= 3; k++) {
      expect(d).toMatchObject({ status: 'pending', attemptCount: k, lastStatusCode: 500 });
      expect(rx.received).toHaveLength(k);
      const wait = ms(d.nextAttemptAt) - ms(d.lastAttemptAt);
      expect(wait).toBeGreaterThanOrEqual(SCHEDULE_MS[k - 1]! * 0.9);
      expect(wait).toBeLessThanOrEqual(SCHEDULE_MS[k - 1]! * 1.1);
      moveTo(d.nextAttemptAt!);
      d = await afterAttempt(h, queued.id, k + 1);
    }
    await sleep(200);
    d = await deliveryOf(h, queued.id);
    expect(d).toMatchObject({
      status: 'succeeded',
      attemptCount: 4,
      nextAttemptAt: null,
      lastStatusCode: 200,
      lastError: null,
    });
    expect(d.attempts.map((a) => a.statusCode)).toEqual([500, 500, 500, 200]);
    expect(d.attempts.map((a) => a.responseExcerpt)).toEqual(['down 1', 'down 2', 'down 3', 'thanks']);
    for (const a of d.attempts) {
      expect(a.error).toBeNull();
      expect(Number.isInteger(a.latencyMs)).toBe(true);
      expect(a.latencyMs).toBeGreaterThanOrEqual(0);
      expect(a.latencyMs).toBeLessThan(10_000);
    }

    expect(rx.received).toHaveLength(4);
    const bodies = new Set(rx.received.map((r) => r.body));
    expect(bodies.size).toBe(1);
    expect(rx.received[0]!.json).toEqual(d.event);
    expect(d.event).toMatchObject({ id: queued.eventId, type: 'webhook.test', accountId: h.accountId });
    rx.received.forEach((r, i) => {
      expect(r.headers['webhook-id']).toBe(queued.eventId);
      const at = ms(d.attempts[i]!.attemptedAt);
      expect(Number(r.headers['webhook-timestamp'])).toBe(Math.floor(at / 1000));
      expect(verifyAt(h.secret, r, at)).toEqual(d.event);
    });
    // The first attempt was made at the real time too: it verifies as it arrived.
    expect(verifySignature(h.secret, rx.received[0]!)).toEqual(d.event);
  });

  it('follows the whole schedule to failed: 8 attempts, then no more', async () => {
    const rx = await receiver(() => ({ status: 503, body: 'unavailable' }));
    const h = await subscribe(rx.url(), ['webhook.test']);
    const queued = await sendTest(h);

    let d = await afterAttempt(h, queued.id, 1);
    for (let k = 1; k <= 7; k++) {
      expect(d.status).toBe('pending');
      // Not attempted before it is due.
      moveTo(d.nextAttemptAt!, -200);
      await sleep(120);
      expect(rx.received).toHaveLength(k);
      moveTo(d.nextAttemptAt!);
      d = await afterAttempt(h, queued.id, k + 1);
    }
    expect(d).toMatchObject({ status: 'failed', attemptCount: 8, nextAttemptAt: null, lastStatusCode: 503 });
    expect(d.attempts.map((a) => a.statusCode)).toEqual(Array(8).fill(503));

    const times = d.attempts.map((a) => ms(a.attemptedAt));
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    gaps.forEach((gap, i) => {
      const base = SCHEDULE_MS[i]!;
      expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual(base * 0.9);
      expect(gap, `gap ${i + 1}`).toBeLessThanOrEqual(base * 1.1 + 50);
    });
    // Jitter: the waits are not the bare schedule.
    expect(gaps.some((gap, i) => Math.abs(gap - SCHEDULE_MS[i]!) > 1000)).toBe(true);

    expect(rx.received).toHaveLength(8);
    advance(DAY);
    await sleep(300);
    advance(DAY);
    await sleep(300);
    expect(rx.received).toHaveLength(8);
    expect((await deliveryOf(h, queued.id)).attemptCount).toBe(8);
  });

  it('honours a longer Retry-After, in seconds or as an HTTP date, capped at 24 hours', async () => {
    const answers: Answer[] = [
      { status: 429, headers: { 'retry-after': '3600' } },
      { status: 503 }, // an HTTP date, set just before this attempt
      { status: 503, headers: { 'retry-after': String(10 * 24 * 3600) } },
      { status: 429, headers: { 'retry-after': '1' } },
    ];
    const rx = await receiver((_req, n) => answers[n] ?? { status: 200 });
    const h = await subscribe(rx.url(), ['webhook.test']);
    const queued = await sendTest(h);

    const wait = (d: Delivery) => ms(d.nextAttemptAt) - ms(d.lastAttemptAt);
    let d = await afterAttempt(h, queued.id, 1);
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: 429 });
    expect(wait(d)).toBe(3600 * SECOND);

    // The HTTP date was made before the attempt; the wait is the time left until it.
    answers[1] = { status: 503, headers: { 'retry-after': new Date(Date.now() + 2 * HOUR).toUTCString() } };
    moveTo(d.nextAttemptAt!);
    d = await afterAttempt(h, queued.id, 2);
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: 503 });
    expect(wait(d)).toBeGreaterThan(2 * HOUR - 5 * SECOND);
    expect(wait(d)).toBeLessThanOrEqual(2 * HOUR);

    moveTo(d.nextAttemptAt!);
    d = await afterAttempt(h, queued.id, 3);
    expect(wait(d)).toBe(24 * HOUR);

    // A Retry-After shorter than the schedule does not shorten it (the 4th wait is 2 h ± 10 %).
    moveTo(d.nextAttemptAt!);
    d = await afterAttempt(h, queued.id, 4);
    expect(d.lastStatusCode).toBe(429);
    expect(wait(d)).toBeGreaterThanOrEqual(2 * HOUR * 0.9);
    expect(wait(d)).toBeLessThanOrEqual(2 * HOUR * 1.1);

    moveTo(d.nextAttemptAt!);
    d = await afterAttempt(h, queued.id, 5);
    expect(d.status).toBe('succeeded');
    expect(rx.received).toHaveLength(5);
  });
});

describe('answers that end or stop delivery', () => {
  it('410 Gone fails the delivery at once, disables the webhook and fails its pending deliveries', async () => {
    let gone = false;
    const rx = await receiver(() => (gone ? { status: 410, body: 'gone' } : { status: 500 }));
    const h = await subscribe(rx.url());
    const first = await sendTest(h);
    const second = await sendTest(h);
    await afterAttempt(h, first.id, 1);
    await afterAttempt(h, second.id, 1);

    gone = true;
    const last = await sendTest(h);
    const d = await eventually(async () => {
      const found = await deliveryOf(h, last.id);
      expect(found.status).toBe('failed');
      return found;
    });
    expect(d).toMatchObject({ attemptCount: 1, nextAttemptAt: null, lastStatusCode: 410 });
    expect(d.attempts).toEqual([expect.objectContaining({ statusCode: 410, responseExcerpt: 'gone' })]);

    const wh = await webhook(h);
    expect(wh.enabled).toBe(false);
    expect(wh.disabledReason).toMatch(/410/);
    for (const id of [first.id, second.id]) {
      const other = await deliveryOf(h, id);
      expect(other).toMatchObject({ status: 'failed', attemptCount: 1, nextAttemptAt: null });
      expect(other.lastError).toMatch(/disabled/);
    }

    // Their retries would have been due now; nothing more is sent.
    advance(HOUR);
    await sleep(300);
    expect(rx.received).toHaveLength(3);

    // A new event of the account reaches its other webhook, not the disabled one.
    const otherRx = await receiver(() => ({ status: 200 }));
    const other = await subscribe(otherRx.url(), ['wallet.*'], { apiKey: h.key, accountId: h.accountId });
    const before = (await deliveries(h)).data.length;
    const credit = await call(env.app, 'POST', `/partner/accounts/${h.accountId}/wallet/credits`, {
      key: env.partner.partnerKey,
      body: { amount: '1.00' },
    });
    expect(credit.status).toBe(201);
    const [got] = await otherRx.waitFor(1);
    expect(got!.json).toMatchObject({ type: 'wallet.credited', accountId: h.accountId });
    expect((await deliveries(other)).data).toHaveLength(1);
    expect((await deliveries(h)).data).toHaveLength(before);
    await sleep(200);
    expect(rx.received).toHaveLength(3);

    expectError(await call(env.app, 'POST', `/webhooks/${h.id}/test`, { key: h.key }), 409, 'CONFLICT');
  });

  it('does not follow redirects', async () => {
    const target = await receiver(() => ({ status: 200 }));
    const rx = await receiver(() => ({ status: 302, headers: { location: target.url() }, body: 'moved' }));
    const h = await subscribe(rx.url());
    const queued = await sendTest(h);
    const d = await afterAttempt(h, queued.id, 1);
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: 302 });
    expect(d.attempts[0]).toMatchObject({ statusCode: 302, error: null });
    const wait = ms(d.nextAttemptAt) - ms(d.lastAttemptAt);
    expect(wait).toBeGreaterThanOrEqual(4.5 * SECOND);
    expect(wait).toBeLessThanOrEqual(5.5 * SECOND);
    await sleep(200);
    expect(rx.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it('records a refused connection and retries it 5 s later', async () => {
    const gone = await Receiver.start();
    const url = gone.url();
    await gone.close();
    const h = await subscribe(url);
    const queued = await sendTest(h);
    const d = await afterAttempt(h, queued.id, 1);
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: null });
    expect(d.attempts[0]).toMatchObject({ statusCode: null, responseExcerpt: null });
    expect(d.attempts[0]!.error).toMatch(/ECONNREFUSED|refused/i);
    expect(d.lastError).toBe(d.attempts[0]!.error);
    const wait = ms(d.nextAttemptAt) - ms(d.lastAttemptAt);
    expect(wait).toBeGreaterThanOrEqual(4.5 * SECOND);
    expect(wait).toBeLessThanOrEqual(5.5 * SECOND);
  });
});

describe('timeouts', () => {
  // Its own app (and database) with a short timeout, and a clock that stays put so that nothing
  // is retried while the test looks at first attempts.
  const TIMEOUT_MS = 1000;
  const quick = useTestApp({
    now: new FakeClock().now,
    config: { ...LOOPBACK, webhookTimeoutMs: TIMEOUT_MS },
  });
  beforeAll(() => quick.app.ctx.dispatcher.start());

  it('a slow receiver times out without holding up another tenant', async () => {
    expect(makeConfig().webhookTimeoutMs).toBe(10_000);
    expect(quick.app.ctx.config.webhookTimeoutMs).toBe(TIMEOUT_MS);

    const slowRx = await receiver(() => ({ status: 200, body: 'late', delayMs: 3000 }));
    const fastRx = await receiver(() => ({ status: 200, body: 'ok' }));
    const slow = await subscribe(slowRx.url(), ['*'], undefined, quick);
    const fast = await subscribe(fastRx.url(), ['*'], undefined, quick);

    const slowIds: string[] = [];
    for (let i = 0; i < 10; i++) slowIds.push((await sendTest(slow)).id);
    await slowRx.waitFor(1);
    const triggeredAt = Date.now();
    const fastDelivery = await sendTest(fast);
    const [got] = await fastRx.waitFor(1, 2000);
    expect(got!.at - triggeredAt).toBeLessThan(500);
    const done = await eventually(async () => {
      const d = await deliveryOf(fast, fastDelivery.id);
      expect(d.status).toBe('succeeded');
      return d;
    });
    expect(done.attempts[0]!.latencyMs).toBeLessThan(500);

    const timedOut = await eventually(async () => {
      const list = (await deliveries(slow)).data;
      expect(list).toHaveLength(10);
      for (const d of list) expect(d.attemptCount).toBe(1);
      return list;
    }, 8000);
    for (const d of timedOut) {
      expect(d).toMatchObject({ status: 'pending', lastStatusCode: null });
      expect(d.lastError).toMatch(/timed out/);
      const [a] = d.attempts;
      expect(a!.statusCode).toBeNull();
      expect(a!.responseExcerpt).toBeNull();
      expect(a!.error).toMatch(/timed out/);
      expect(a!.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(a!.latencyMs).toBeLessThan(2500);
      expect(ms(d.nextAttemptAt) - ms(d.lastAttemptAt)).toBeLessThanOrEqual(5.5 * SECOND);
    }
    expect(new Set(timedOut.map((d) => d.id))).toEqual(new Set(slowIds));
    expect(slowRx.received.length).toBeGreaterThanOrEqual(10);
  });
});

describe('manual retry', () => {
  it('gives a failed delivery one more attempt, replays a succeeded one, and refuses a disabled webhook', async () => {
    let status = 503;
    const rx = await receiver(() => ({ status }));
    const h = await subscribe(rx.url(), ['webhook.test']);
    const queued = await sendTest(h);
    let d = await driveToEnd(h, queued.id);
    expect(d).toMatchObject({ status: 'failed', attemptCount: 8 });
    expect(rx.received).toHaveLength(8);

    const retry = () =>
      call(env.app, 'POST', `/webhooks/${h.id}/deliveries/${queued.id}/retry`, { key: h.key });

    // Still failing: exactly one more attempt, then failed again (no new schedule).
    let res = await retry();
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ id: queued.id, status: 'pending', attemptCount: 8 });
    d = await afterAttempt(h, queued.id, 9);
    expect(d).toMatchObject({ status: 'failed', nextAttemptAt: null, lastStatusCode: 503 });
    advance(DAY);
    await sleep(300);
    expect(rx.received).toHaveLength(9);

    status = 200;
    res = await retry();
    expect(res.status).toBe(202);
    d = await afterAttempt(h, queued.id, 10);
    expect(d).toMatchObject({ status: 'succeeded', lastStatusCode: 200, nextAttemptAt: null });
    await sleep(200);
    expect(rx.received).toHaveLength(10);

    // A replay of a succeeded delivery: sent again, with the same webhook-id.
    res = await retry();
    expect(res.status).toBe(202);
    d = await afterAttempt(h, queued.id, 11);
    expect(d.status).toBe('succeeded');
    await sleep(200);
    expect(rx.received).toHaveLength(11);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([queued.eventId]));
    expect(new Set(rx.received.map((r) => r.body)).size).toBe(1);

    expectError(
      await call(env.app, 'POST', `/webhooks/${h.id}/deliveries/dlv_01h2xcejqtf2nbrexx3vqjhp41/retry`, {
        key: h.key,
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    // Another tenant cannot retry it.
    const stranger = await tenant(env.app, env.partner.partnerKey);
    expectError(
      await call(env.app, 'POST', `/webhooks/${h.id}/deliveries/${queued.id}/retry`, {
        key: stranger.apiKey,
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );

    // A delivery that failed early (its webhook was disabled after its first attempt) also gets
    // exactly one more attempt, not the rest of its schedule.
    status = 503;
    const early = await sendTest(h);
    await afterAttempt(h, early.id, 1);
    const off = await call(env.app, 'PATCH', `/webhooks/${h.id}`, { key: h.key, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(await deliveryOf(h, early.id)).toMatchObject({ status: 'failed', attemptCount: 1 });
    expectError(await retry(), 409, 'CONFLICT');
    const retryEarly = () =>
      call(env.app, 'POST', `/webhooks/${h.id}/deliveries/${early.id}/retry`, { key: h.key });
    expectError(await retryEarly(), 409, 'CONFLICT');
    await sleep(200);
    expect(rx.received).toHaveLength(12);

    const on = await call(env.app, 'PATCH', `/webhooks/${h.id}`, { key: h.key, body: { enabled: true } });
    expect(on.status).toBe(200);
    expect((await retryEarly()).status).toBe(202);
    d = await afterAttempt(h, early.id, 2);
    expect(d).toMatchObject({ status: 'failed', nextAttemptAt: null, lastStatusCode: 503 });
    advance(DAY);
    await sleep(300);
    expect(rx.received).toHaveLength(13);
    expect((await deliveryOf(h, early.id)).attemptCount).toBe(2);
  });
});

describe('five days of failures', () => {
  /**
   * Runs the app clock from now to `until`: a test event at the start of each simulated day, every
   * retry when it is due. Stops early when the webhook is disabled; answers when that was seen.
   */
  async function simulate(h: Hook, start: number, until: number): Promise<number | null> {
    const dayStarts = Array.from({ length: Math.ceil((until - start) / DAY) }, (_, i) => start + i * DAY);
    dayStarts[0] = clock.now().getTime();
    for (;;) {
      const now = clock.now().getTime();
      if (dayStarts.length > 0 && dayStarts[0]! <= now) {
        dayStarts.shift();
        await sendTest(h);
        env.app.ctx.dispatcher.wake();
      }
      // Everything due has been attempted and recorded.
      const pending = await eventually(async () => {
        const list = (await deliveries(h, { status: 'pending' })).data;
        for (const d of list) expect(ms(d.nextAttemptAt)).toBeGreaterThan(now);
        return list;
      });
      if (!(await webhook(h)).enabled) return now;
      const next = Math.min(dayStarts[0] ?? Infinity, ...pending.map((d) => ms(d.nextAttemptAt)));
      if (next > until) return null;
      moveTo(next, next === dayStarts[0] ? 0 : 1);
    }
  }

  it('disables a webhook whose every attempt failed for 5 days', async () => {
    const rx = await receiver(() => ({ status: 500 }));
    const h = await subscribe(rx.url(), ['webhook.test']);
    const start = clock.now().getTime();
    const disabledAt = await simulate(h, start, start + 7 * DAY);
    expect(disabledAt).not.toBeNull();
    expect(disabledAt!).toBeGreaterThanOrEqual(start + 5 * DAY);
    expect(disabledAt!).toBeLessThan(start + 5 * DAY + HOUR);

    const wh = await webhook(h);
    expect(wh.enabled).toBe(false);
    expect(wh.disabledReason).toMatch(/5 days/);
    // Attempts went on the whole time until then, every one failing.
    const all = (await deliveries(h)).data.flatMap((d) => d.attempts);
    expect(all.length).toBe(rx.received.length);
    expect(all.every((a) => a.statusCode === 500)).toBe(true);
    const times = all.map((a) => ms(a.attemptedAt)).sort((a, b) => a - b);
    expect(times[0]).toBe(start);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThan(DAY);
    expect((await deliveries(h, { status: 'pending' })).data).toEqual([]);

    const seen = rx.received.length;
    advance(DAY);
    await sleep(300);
    expect(rx.received).toHaveLength(seen);
  });

  it('a success in between starts the count again', async () => {
    const start = clock.now().getTime();
    // Success for the event of day 3 only (its createdAt is on the app clock).
    const rx = await receiver((req) => {
      const created = Date.parse(req.json?.createdAt);
      return created >= start + 3 * DAY && created < start + 4 * DAY ? { status: 200 } : { status: 500 };
    });
    const h = await subscribe(rx.url(), ['webhook.test']);
    const disabledAt = await simulate(h, start, start + 6 * DAY + HOUR);
    expect(disabledAt).toBeNull();

    const wh = await webhook(h);
    expect(wh).toMatchObject({ enabled: true, disabledReason: null });
    const attempts = (await deliveries(h)).data
      .flatMap((d) => d.attempts)
      .sort((a, b) => ms(a.attemptedAt) - ms(b.attemptedAt));
    const successes = attempts.filter((a) => a.statusCode === 200);
    expect(successes).toHaveLength(1);
    const successAt = ms(successes[0]!.attemptedAt);
    expect(successAt).toBeGreaterThanOrEqual(start + 3 * DAY);
    expect(successAt).toBeLessThan(start + 4 * DAY);
    // Failures before it and failures after it up to 6 days from the first.
    expect(ms(attempts[0]!.attemptedAt)).toBe(start);
    expect(attempts[0]!.statusCode).toBe(500);
    expect(ms(attempts.at(-1)!.attemptedAt)).toBeGreaterThanOrEqual(start + 6 * DAY);
    expect(attempts.at(-1)!.statusCode).toBe(500);
  });
});

describe('the delivery log', () => {
  it('lists deliveries newest first, filters by status and pages with a cursor', async () => {
    let status = 200;
    const rx = await receiver(() => ({ status }));
    const h = await subscribe(rx.url(), ['webhook.test']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await sendTest(h);
      ids.push(d.id);
      await afterAttempt(h, d.id, 1);
    }
    status = 500;
    for (let i = 0; i < 2; i++) {
      const d = await sendTest(h);
      ids.push(d.id);
      await afterAttempt(h, d.id, 1);
    }
    const newestFirst = [...ids].reverse();

    const all = await deliveries(h);
    expect(all.data.map((d) => d.id)).toEqual(newestFirst);
    expect(all.nextCursor).toBeNull();
    expect((await deliveries(h, { status: 'succeeded' })).data.map((d) => d.id)).toEqual(
      newestFirst.slice(2),
    );
    expect((await deliveries(h, { status: 'pending' })).data.map((d) => d.id)).toEqual(
      newestFirst.slice(0, 2),
    );
    expect((await deliveries(h, { status: 'failed' })).data).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { data: Delivery[]; nextCursor: string | null } = await deliveries(h, {
        limit: '2',
        ...(cursor ? { cursor } : {}),
      });
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((d) => d.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst);

    const first = await deliveries(h, { status: 'succeeded', limit: '2' });
    expect(first.data.map((d) => d.id)).toEqual(newestFirst.slice(2, 4));
    const second = await deliveries(h, { status: 'succeeded', limit: '2', cursor: first.nextCursor! });
    expect(second.data.map((d) => d.id)).toEqual(newestFirst.slice(4));
    expect(second.nextCursor).toBeNull();

    const bad = await call(env.app, 'GET', `/webhooks/${h.id}/deliveries`, {
      key: h.key,
      query: { status: 'lost' },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
  });
});

describe('metrics', () => {
  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  };

  it('counts attempts by outcome and times them', async () => {
    const metrics = async () => {
      const res = await call(env.app, 'GET', '/metrics');
      expect(res.status).toBe(200);
      return res.raw.body;
    };
    const before = await metrics();
    const rx = await receiver(() => ({ status: 204 }));
    const h = await subscribe(rx.url(), ['webhook.test']);
    const d = await sendTest(h);
    await afterAttempt(h, d.id, 1);

    const after = await metrics();
    const succeeded = 'tidings_webhook_attempts_total{outcome="succeeded"}';
    const timed = 'tidings_webhook_attempt_duration_seconds_count{outcome="succeeded"}';
    expect(after).toContain('# TYPE tidings_webhook_attempts_total counter');
    expect(after).toContain('# TYPE tidings_webhook_attempt_duration_seconds histogram');
    expect(sample(after, succeeded)).toBe(sample(before, succeeded) + 1);
    expect(sample(after, timed)).toBe(sample(before, timed) + 1);
    expect(after).toMatch(
      /^tidings_webhook_attempt_duration_seconds_bucket\{le="[\d.]+",outcome="succeeded"\} \d+$/m,
    );
    // Earlier tests retried and failed deliveries.
    expect(sample(after, 'tidings_webhook_attempts_total{outcome="retrying"}')).toBeGreaterThan(0);
    expect(sample(after, 'tidings_webhook_attempts_total{outcome="failed"}')).toBeGreaterThan(0);
  });
});
