// POST /webhooks/{id}/replay: after the receiver was down, the past events it should have had are
// delivered again as new deliveries, with the original webhook-id (so a receiver that drops
// duplicates stays correct), the stored bytes and valid signatures; only what the webhook's filters
// (and `types`) take, within [since, until); at most MAX_REPLAY_EVENTS per call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/kernel/values/ids.ts';
import { MAX_REPLAY_EVENTS } from '../../src/modules/webhooks/replay.ts';
import { call, tenant } from '../helpers/client.ts';
import { Receiver, verifySignature } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({ config: { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50 } });
const receivers: Receiver[] = [];

beforeAll(async () => {
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

let phones = 4000;
async function contact(key: string, accountId?: string): Promise<string> {
  const res = await call(env.app, 'POST', '/contacts', {
    key,
    accountId,
    body: { phone: `+1415555${phones++}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function webhook(key: string, url: string, events: string[], partner = false) {
  const res = await call(env.app, 'POST', partner ? '/partner/webhooks' : '/webhooks', {
    key,
    body: { url, events },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string };
}

describe('POST /webhooks/{id}/replay', () => {
  it('re-sends what a receiver that was down missed, with the original webhook-id, bytes and valid signatures', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    r.respond = () => ({ status: 503 });
    const hook = await webhook(t.apiKey, r.url(), ['contact.*']);
    const since = new Date().toISOString();
    await contact(t.apiKey);
    await contact(t.apiKey);
    const failed = await r.waitFor(2);
    const originalIds = failed.map((f) => String(f.headers['webhook-id'])).sort();

    r.respond = () => ({ status: 204 });
    const res = await call(env.app, 'POST', `/webhooks/${hook.id}/replay`, {
      key: t.apiKey,
      body: { since },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ replayed: 2, since, until: expect.any(String) });

    const got = (await r.waitFor(4)).slice(2);
    expect(got.map((g) => String(g.headers['webhook-id'])).sort()).toEqual(originalIds);
    for (const g of got) {
      const original = failed.find((f) => f.headers['webhook-id'] === g.headers['webhook-id'])!;
      expect(g.body).toBe(original.body);
      expect(verifySignature(hook.secret, g)).toEqual(original.json);
    }
    // The new deliveries are listed as replays, succeeded; the original ones are still there.
    const list = await eventually(
      () => call(env.app, 'GET', `/webhooks/${hook.id}/deliveries`, { key: t.apiKey }),
      (l) => l.body.data.filter((d: any) => d.replay && d.status === 'succeeded').length === 2,
    );
    expect(list.body.data).toHaveLength(4);
    expect(list.body.data.filter((d: any) => !d.replay)).toHaveLength(2);
  });

  it('replays only what the webhook’s filters and `types` take, within [since, until)', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const before = new Date().toISOString();
    const gone = await contact(t.apiKey);
    expect((await call(env.app, 'DELETE', `/contacts/${gone}`, { key: t.apiKey })).status).toBe(204);
    await contact(t.apiKey);
    // Subscribed after the events: a replay is how it gets them.
    const hook = await webhook(t.apiKey, r.url(), ['contact.created']);
    const replay = (body: object) =>
      call(env.app, 'POST', `/webhooks/${hook.id}/replay`, { key: t.apiKey, body });

    const created = await replay({ since: before });
    expect(created.body.replayed).toBe(2);
    const got = await r.waitFor(2);
    expect(got.map((g) => g.json.type)).toEqual(['contact.created', 'contact.created']);

    // An Idempotency-Key makes a retried call answer the first result instead of replaying again.
    const keyed = () =>
      call(env.app, 'POST', `/webhooks/${hook.id}/replay`, {
        key: t.apiKey,
        body: { since: before },
        headers: { 'idempotency-key': `replay-${hook.id}` },
      });
    const once = await keyed();
    const retried = await keyed();
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual(once.body);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    await r.waitFor(4);
    const all = await call(env.app, 'GET', `/webhooks/${hook.id}/deliveries`, { key: t.apiKey });
    expect(all.body.data).toHaveLength(4);

    expect((await replay({ since: before, types: ['contact.deleted'] })).body.replayed).toBe(0);
    expect((await replay({ since: before, types: ['message.*', 'contact.created'] })).body.replayed).toBe(2);
    expect((await replay({ since: before, until: before })).status).toBe(400);
    expect((await replay({ since: new Date(Date.now() + 60_000).toISOString() })).status).toBe(400);
    expect(
      (await replay({ since: '2000-01-01T00:00:00Z', until: '2000-01-02T00:00:00Z' })).body.replayed,
    ).toBe(0);
  });

  it('replays every account’s events to a partner webhook', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const since = new Date().toISOString();
    await contact(a.apiKey);
    await contact(b.apiKey);
    const r = await receiver();
    const hook = await webhook(env.partner.partnerKey, r.url(), ['contact.created'], true);
    const res = await call(env.app, 'POST', `/partner/webhooks/${hook.id}/replay`, {
      key: env.partner.partnerKey,
      body: { since },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // Other tests' accounts of this partner made events since too: at least these two.
    expect(res.body.replayed).toBeGreaterThanOrEqual(2);
    const got = await r.waitFor(res.body.replayed);
    const accounts = new Set(got.map((g) => g.json.accountId));
    expect(accounts.has(a.accountId) && accounts.has(b.accountId)).toBe(true);
    for (const g of got) verifySignature(hook.secret, g);
  });

  it('refuses a disabled webhook (409), another tenant’s (404), bad filters (400) and too many events (400)', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await webhook(a.apiKey, r.url(), ['*']);
    const since = '2000-01-01T00:00:00Z';
    const replay = (key: string, body: object) =>
      call(env.app, 'POST', `/webhooks/${hook.id}/replay`, { key, body });

    expectError(await replay(b.apiKey, { since }), 404, 'RESOURCE_NOT_FOUND');
    const badType = await replay(a.apiKey, { since, types: ['contact.nope'] });
    expectError(badType, 400, 'INVALID_REQUEST');
    expect(badType.body.error.details).toEqual([expect.objectContaining({ field: 'types[0]' })]);
    expectError(await replay(a.apiKey, {}), 400, 'INVALID_REQUEST');

    // More events than one call may replay: written directly, as the outbox would.
    const now = new Date();
    const rows = Array.from({ length: MAX_REPLAY_EVENTS + 1 }, () => {
      const id = newId('event');
      const payload = JSON.stringify({
        id,
        type: 'contact.updated',
        createdAt: now,
        accountId: a.accountId,
        data: {},
      });
      return { id, payload };
    });
    await env.tdb.db.query(
      `INSERT INTO events (id, account_id, type, payload, created_at)
       SELECT e.id, $1, 'contact.updated', e.payload, $2 FROM jsonb_to_recordset($3::jsonb) AS e (id text, payload text)`,
      [a.accountId, now, JSON.stringify(rows)],
    );
    const tooMany = await replay(a.apiKey, { since });
    expectError(tooMany, 400, 'INVALID_REQUEST');
    expect(tooMany.body.error.details).toEqual([expect.objectContaining({ field: 'since' })]);

    const off = await call(env.app, 'PATCH', `/webhooks/${hook.id}`, {
      key: a.apiKey,
      body: { enabled: false },
    });
    expect(off.status).toBe(200);
    expectError(await replay(a.apiKey, { since }), 409, 'CONFLICT');
    expect(r.received).toHaveLength(0);
  });
});
