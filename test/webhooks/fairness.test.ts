// One account's flood of events must not hold up another account's deliveries: the dispatcher
// serves endpoints round-robin and caps the slots one endpoint or owner may hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/kernel/values/ids.ts';
import { call, tenant } from '../helpers/client.ts';
import { Receiver } from '../helpers/receiver.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp({
  config: {
    webhookAllowedHosts: ['127.0.0.1'],
    webhookPollMs: 50,
    webhookConcurrency: 16,
    webhookEndpointConcurrency: 4,
  },
});
let flooded: Receiver;
let quiet: Receiver;

beforeAll(async () => {
  // Each delivery to the flooded receiver takes 100 ms: 600 of them through 4 slots is 15 s of work.
  flooded = await Receiver.start(() => ({ status: 200, delayMs: 100 }));
  quiet = await Receiver.start(() => ({ status: 200 }));
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await flooded.close();
  await quiet.close();
});

describe('fairness between accounts', () => {
  it("another account's event is delivered at once while a flood is being worked off", async () => {
    const big = await tenant(env.app, env.partner.partnerKey);
    const small = await tenant(env.app, env.partner.partnerKey);
    const bigHook = await call(env.app, 'POST', '/webhooks', {
      key: big.apiKey,
      body: { url: flooded.url() },
    });
    const smallHook = await call(env.app, 'POST', '/webhooks', {
      key: small.apiKey,
      body: { url: quiet.url() },
    });
    expect([bigHook.status, smallHook.status]).toEqual([201, 201]);

    await env.tdb.db.transaction(async (tx) => {
      for (let i = 0; i < 600; i++) {
        await env.app.ctx.events.emit(tx, { type: 'webhook.test', accountId: big.accountId, data: { n: i } });
      }
    });
    await flooded.waitFor(8);

    const started = Date.now();
    const test = await call(env.app, 'POST', `/webhooks/${smallHook.body.id}/test`, { key: small.apiKey });
    expect(test.status).toBe(202);
    const [got] = await quiet.waitFor(1, 5_000);
    expect(got!.headers['webhook-id']).toBe(test.body.eventId);
    expect(got!.at - started).toBeLessThan(1_000);
    // The flood is far from done: the quiet account did not wait for it.
    expect(flooded.received.length).toBeLessThan(300);
    // The flooded endpoint never had more than its 4 slots in flight at once: each request is
    // answered 100 ms after it arrives, so no 100 ms window holds more than 4 arrivals.
    const arrivals = flooded.received.map((r) => r.at).sort((a, b) => a - b);
    const busiest = Math.max(...arrivals.map((t, i) => arrivals.slice(i).filter((u) => u < t + 90).length));
    expect(busiest).toBeLessThanOrEqual(4);
    expect(busiest).toBeGreaterThanOrEqual(2);
    const pending = await call(env.app, 'GET', `/webhooks/${bigHook.body.id}/deliveries`, {
      key: big.apiKey,
      query: { status: 'pending', limit: '100' },
    });
    expect(pending.body.data).toHaveLength(100);
  }, 30_000);
});

describe('an endpoint with work among many without', () => {
  // A claim probes only the endpoints it knows have work: those the NOTIFY names, and those a
  // survey of every endpoint finds (a lease run out, a retry come due, a notification lost).
  it('is served when its delivery became due without a notification', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const receiver = await Receiver.start(() => ({ status: 200 }));
    const hook = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: receiver.url() } });
    expect(hook.status).toBe(201);
    const db = env.tdb.db;
    // 300 more webhooks of the account without work (past the API's limit of 20: made in SQL).
    await db.query(
      `INSERT INTO webhook_endpoints (id, account_id, url, event_filters, secret_sealed, created_at, updated_at)
       SELECT n.id, e.account_id, e.url, e.event_filters, e.secret_sealed, now(), now()
         FROM unnest($1::text[]) AS n (id), webhook_endpoints e WHERE e.id = $2`,
      [Array.from({ length: 300 }, () => newId('webhook')), hook.body.id],
    );
    // The event alone through the outbox (no webhook takes it), then its delivery in SQL: no NOTIFY.
    const event = await db.transaction((tx) =>
      env.app.ctx.events.emit(
        tx,
        { type: 'webhook.test', accountId: t.accountId, data: { n: 1 } },
        { to: { audiences: {} } },
      ),
    );
    await db.query(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, attempts_allowed, next_attempt_at,
         created_at, updated_at)
       VALUES ($1, $2, $3, 'webhook.test', 8, now(), now(), now())`,
      [newId('delivery'), hook.body.id, event.id],
    );
    const [got] = await receiver.waitFor(1, 5_000);
    expect(got!.headers['webhook-id']).toBe(event.id);
    await receiver.close();
  }, 30_000);
});
