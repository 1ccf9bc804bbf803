// Callbacks reach only the account whose channel has the number they are for. One Meta app can
// serve several numbers (one secret signs them all): a payload for another number, posted to an
// account's URL with a valid signature, must store nothing there (logged, counted, answered 200 so
// that Meta does not retry it for days).
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeBusiness } from './fakes/whatsapp-cloud.ts';
import { call } from './helpers/client.ts';
import { type MessagingTenant, useMessagingApp, whatsappTenant } from './helpers/messaging.ts';

let base: string;
const logs: string[] = [];
const env = useMessagingApp({
  config: { logLevel: 'warn' },
  logStream: { write: (line) => logs.push(line) },
});
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: FakeBusiness };
const accountUrl = (t: Tenant) => `${base}/api/v1/callbacks/whatsapp/${t.accountId}`;

async function rows(t: Tenant) {
  const [messages, contacts] = await Promise.all([
    call(env.app, 'GET', '/messages', { key: t.apiKey }),
    call(env.app, 'GET', '/contacts', { key: t.apiKey }),
  ]);
  return { messages: messages.body.data as any[], contacts: contacts.body.data as any[] };
}

async function droppedCount(reason: string): Promise<number> {
  const res = await call(env.app, 'GET', '/metrics');
  const line = String(res.body)
    .split('\n')
    .find((l) =>
      l.startsWith(`tidings_callback_entries_dropped_total{provider="whatsapp_cloud",reason="${reason}"}`),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe("an account's callback URL", () => {
  it("stores nothing of an entry for another number signed with the same app's secret", async () => {
    const a = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    // B's number is in the same Meta app (same secret), but belongs to another WABA and account.
    const other = env.fake.createBusiness({ appSecret: a.business.appSecret });
    const before = await droppedCount('other_number');

    const payload = env.fake.inboundPayload(other, { from: '+14155550170', text: 'for B' });
    const res = await env.fake.postCallback(accountUrl(a), a.business, payload);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ applied: 0, dropped: 1 });
    expect(await rows(a)).toEqual({ messages: [], contacts: [] });
    expect(await droppedCount('other_number')).toBe(before + 1);
    const warned = logs.map((l) => JSON.parse(l)).find((l) => l.phoneNumberId === other.phoneNumberId);
    expect(warned).toMatchObject({ level: 40, accountId: a.accountId, reason: 'other_number' });
  });

  it('applies the entries for its own number and drops the others of the same payload', async () => {
    const a = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    const other = env.fake.createBusiness({ appSecret: a.business.appSecret });
    const mine = env.fake.inboundPayload(a.business, { from: '+14155550171', text: 'for A' });
    const theirs = env.fake.inboundPayload(other, { from: '+14155550172', text: 'for B' });
    const both = { ...mine, entry: [...mine.entry, ...theirs.entry] };
    const res = await env.fake.postCallback(accountUrl(a), a.business, both);
    expect(JSON.parse(res.body)).toEqual({ applied: 1, dropped: 1 });
    const { messages, contacts } = await rows(a);
    expect(messages.map((m) => m.text)).toEqual(['for A']);
    expect(contacts.map((c) => c.phone)).toEqual(['+14155550171']);
  });

  it("drops a template update for another WABA, even one naming this account's template id", async () => {
    const a = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    const created = await call(env.app, 'POST', '/templates', {
      key: a.apiKey,
      body: {
        name: 'shipping_update',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Hi {{1}}, it shipped.', example: { body_text: [['Ann']] } }],
      },
    });
    const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: a.apiKey });
    expect(submitted.body.status).toBe('PENDING');
    const other = env.fake.createBusiness({ appSecret: a.business.appSecret });
    const update = {
      templateId: submitted.body.providerTemplateId,
      name: 'shipping_update',
      language: 'en_US',
      event: 'APPROVED',
    };
    const foreign = await env.fake.postCallback(
      accountUrl(a),
      a.business,
      env.fake.templateStatusPayload(other, update),
    );
    expect(JSON.parse(foreign.body)).toEqual({ applied: 0, dropped: 1 });
    const template = await call(env.app, 'GET', `/templates/${created.body.id}`, { key: a.apiKey });
    expect(template.body.status).toBe('PENDING');
    const own = await env.fake.postCallback(
      accountUrl(a),
      a.business,
      env.fake.templateStatusPayload(a.business, update),
    );
    expect(JSON.parse(own.body)).toEqual({ applied: 1, dropped: 0 });
  });
});
