// GET /events and /events/{id}: the account's events as a resource, each the envelope its webhooks
// receive (byte for byte the same JSON), newest first in cursor pages, filtered by type (exact or
// family) and time; another tenant's events are not found.
import { describe, expect, it } from 'vitest';
import { call, listAll, tenant } from '../helpers/client.ts';
import { Receiver } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ config: { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50 } });

let phones = 3000;
async function contact(key: string): Promise<string> {
  const res = await call(env.app, 'POST', '/contacts', { key, body: { phone: `+1415555${phones++}` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe('GET /events', () => {
  it('lists the account’s events newest first, in cursor pages, as the envelopes webhooks get', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const receiver = await Receiver.start();
    try {
      await env.app.ctx.dispatcher.start();
      const hook = await call(env.app, 'POST', '/webhooks', {
        key: t.apiKey,
        body: { url: receiver.url(), events: ['contact.*'] },
      });
      expect(hook.status).toBe(201);
      const ids = [await contact(t.apiKey), await contact(t.apiKey), await contact(t.apiKey)];
      const received = await receiver.waitFor(3);

      const first = await call(env.app, 'GET', '/events', { key: t.apiKey, query: { limit: '2' } });
      expect(first.status).toBe(200);
      expect(first.body.data.map((e: any) => e.data.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await call(env.app, 'GET', '/events', {
        key: t.apiKey,
        query: { limit: '2', cursor: first.body.nextCursor },
      });
      expect(second.body.data.map((e: any) => e.data.id)).toEqual([ids[0]]);
      expect(second.body.nextCursor).toBeNull();

      // Each item is the delivered body, parsed; GET /events/{id} shows the same.
      const listed = [...first.body.data, ...second.body.data];
      for (const r of received) {
        const item = listed.find((e: any) => e.id === r.headers['webhook-id']);
        expect(item).toEqual(r.json);
        const one = await call(env.app, 'GET', `/events/${item.id}`, { key: t.apiKey });
        expect(one.status).toBe(200);
        expect(one.body).toEqual(r.json);
      }
      expect(listed[0]).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: 'contact.created',
        createdAt: expect.any(String),
        accountId: t.accountId,
        data: expect.objectContaining({ id: ids[2] }),
      });
    } finally {
      await receiver.close();
    }
  });

  it('filters by exact type, by family, and by time', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const start = new Date();
    const kept = await contact(t.apiKey);
    const gone = await contact(t.apiKey);
    expect((await call(env.app, 'DELETE', `/contacts/${gone}`, { key: t.apiKey })).status).toBe(204);
    const types = async (query: Record<string, string>) => {
      const res = await call(env.app, 'GET', '/events', { key: t.apiKey, query });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((e: any) => `${e.type} ${e.data.id}`);
    };
    expect(await types({ type: 'contact.deleted' })).toEqual([`contact.deleted ${gone}`]);
    expect(await types({ type: 'contact.*' })).toEqual([
      `contact.deleted ${gone}`,
      `contact.created ${gone}`,
      `contact.created ${kept}`,
    ]);
    expect(await types({ type: 'message.*' })).toEqual([]);
    expect(await types({ type: '*' })).toHaveLength(3);
    expect(await types({ since: start.toISOString() })).toHaveLength(3);
    expect(await types({ since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await types({ until: start.toISOString() })).toEqual([]);
    const deleted = (
      await call(env.app, 'GET', '/events', { key: t.apiKey, query: { type: 'contact.deleted' } })
    ).body.data[0];
    expect(await types({ type: 'contact.created', until: deleted.createdAt })).toHaveLength(2);
  });

  it('refuses a filter that is not an event type or family, naming the field', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const type of ['contact', 'nope.*', 'contact.nope']) {
      const res = await call(env.app, 'GET', '/events', { key: t.apiKey, query: { type } });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'type' })]);
    }
    const badTime = await call(env.app, 'GET', '/events', { key: t.apiKey, query: { since: 'today' } });
    expectError(badTime, 400, 'INVALID_REQUEST');
  });

  it('shows only the account’s own events: another tenant’s event is not found', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    await contact(a.apiKey);
    await contact(b.apiKey);
    const ofA = await listAll(env.app, a.apiKey, '/events');
    const ofB = await listAll(env.app, b.apiKey, '/events');
    expect(ofA.map((e) => e.accountId)).toEqual([a.accountId]);
    expect(ofB.map((e) => e.accountId)).toEqual([b.accountId]);
    expectError(
      await call(env.app, 'GET', `/events/${ofB[0].id}`, { key: a.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', '/events/evt_01jv0000000000000000000000', { key: a.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    // A partner key reads the account it names.
    const viaPartner = await call(env.app, 'GET', '/events', {
      key: env.partner.partnerKey,
      accountId: b.accountId,
    });
    expect(viaPartner.body.data).toEqual(ofB);
  });

  it('documents the retention the service keeps', async () => {
    const doc = await call(env.app, 'GET', '/openapi.json');
    const op = doc.body.paths['/api/v1/public/events'].get;
    expect(op.description).toContain(`kept ${env.app.ctx.config.eventRetentionDays} days`);
    const stream = doc.body.paths['/api/v1/public/events/stream'].get;
    expect(Object.keys(stream.responses['200'].content)).toEqual(['text/event-stream']);
  });
});
