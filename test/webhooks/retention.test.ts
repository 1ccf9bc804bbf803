// Retention: events and finished deliveries older than TIDINGS_EVENT_RETENTION_DAYS are deleted;
// pending deliveries, the events they need, and everything recent stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { FakeClock } from '../helpers/harness.ts';
import { Receiver } from '../helpers/receiver.ts';
import { useTestApp } from '../helpers/setup.ts';

const DAY = 24 * 3600 * 1000;
const clock = new FakeClock();
const env = useTestApp({
  now: clock.now,
  config: { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50, eventRetentionDays: 30 },
});
let ok: Receiver;
let failing: Receiver;

beforeAll(async () => {
  ok = await Receiver.start(() => ({ status: 204 }));
  failing = await Receiver.start(() => ({ status: 500 }));
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await ok.close();
  await failing.close();
});

async function deliveries(key: string, webhookId: string) {
  const res = await call(env.app, 'GET', `/webhooks/${webhookId}/deliveries`, {
    key,
    query: { limit: '100' },
  });
  return res.body.data as { eventId: string; status: string }[];
}

async function eventExists(id: string): Promise<boolean> {
  return (await env.tdb.db.query('SELECT 1 FROM events WHERE id = $1', [id])).rows.length > 0;
}

describe('retention', () => {
  it('deletes what is older than the retention period, except pending deliveries and their events', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const good = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: ok.url() } });
    const bad = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: failing.url() } });
    const old = [];
    for (let i = 0; i < 3; i++) {
      old.push((await call(env.app, 'POST', `/webhooks/${good.body.id}/test`, { key: t.apiKey })).body);
    }
    const stuck = (await call(env.app, 'POST', `/webhooks/${bad.body.id}/test`, { key: t.apiKey })).body;
    await ok.waitFor(3);
    await failing.waitFor(1);
    for (
      let i = 0;
      i < 50 && (await deliveries(t.apiKey, good.body.id)).some((d) => d.status !== 'succeeded');
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Nothing more is attempted while time jumps: the failing delivery stays pending.
    await env.app.ctx.dispatcher.stop();

    clock.advance(31 * DAY);
    const recent = (await call(env.app, 'POST', `/webhooks/${good.body.id}/test`, { key: t.apiKey })).body;

    const pruned = await env.app.ctx.dispatcher.prune();
    expect(pruned).toEqual({ deliveries: 3, events: 3 });

    expect((await deliveries(t.apiKey, good.body.id)).map((d) => d.eventId)).toEqual([recent.eventId]);
    expect(await deliveries(t.apiKey, bad.body.id)).toMatchObject([
      { eventId: stuck.eventId, status: 'pending' },
    ]);
    for (const d of old) expect(await eventExists(d.eventId)).toBe(false);
    expect(await eventExists(stuck.eventId)).toBe(true);
    expect(await eventExists(recent.eventId)).toBe(true);
    // Their attempts went with them.
    const attempts = await env.tdb.db.query(
      'SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY($1::text[])',
      [old.map((d) => d.id)],
    );
    expect(attempts.rows[0]).toEqual({ n: 0 });

    // A second run finds nothing more.
    expect(await env.app.ctx.dispatcher.prune()).toEqual({ deliveries: 0, events: 0 });
  });
});
