// Callbacks reach only the account whose channel has the number they are for. One Meta app can
// serve several numbers (one secret signs them all): a payload for another number, posted to an
// account's URL with a valid signature, must store nothing there (logged, counted, answered 200 so
// that Meta does not retry it for days). A partner's Meta app sends all its clients' webhooks to
// one URL: each entry reaches the partner's account whose channel has its number.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type FakeBusiness, FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { call, tenant } from '../helpers/client.ts';
import { type MessagingTenant, useMessagingApp, whatsappTenant } from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

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

describe("a partner's Meta app: one callback URL for every client number", () => {
  const appUrl = () => `${base}/api/v1/callbacks/whatsapp`;
  let appSecret: string;
  let verifyToken: string;
  let a: Tenant;
  let b: Tenant;

  /** An account of the partner whose channel is a number of the partner's app (no secrets of its own). */
  async function client(): Promise<Tenant> {
    const t = await tenant(env.app, env.partner.partnerKey);
    const business = env.fake.createBusiness({ appSecret, verifyToken });
    const res = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: {
        provider: 'whatsapp_cloud',
        whatsapp: FakeWhatsAppCloud.partnerAppChannelSettings(business),
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { ...t, business };
  }

  beforeAll(async () => {
    appSecret = randomBytes(16).toString('hex');
    verifyToken = randomBytes(12).toString('hex');
    const put = await call(env.app, 'PUT', '/partner/whatsapp-app', {
      key: env.partner.partnerKey,
      body: { appId: '1234567890123456', appSecret, verifyToken },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    a = await client();
    b = await client();
  });

  it('is set once by the partner, its secrets never shown', async () => {
    const got = await call(env.app, 'GET', '/partner/whatsapp-app', { key: env.partner.partnerKey });
    expect(got.body).toEqual({
      configured: true,
      appId: '1234567890123456',
      configurationId: null,
      callbackUrl: 'http://tidings.test/api/v1/callbacks/whatsapp',
      updatedAt: expect.any(String),
    });
    expect(JSON.stringify(got.body)).not.toContain(appSecret);
    // The same app again without its secrets keeps them; a new app needs them.
    const same = await call(env.app, 'PUT', '/partner/whatsapp-app', {
      key: env.partner.partnerKey,
      body: { appId: '1234567890123456' },
    });
    expect(same.status).toBe(200);
    const other = await call(env.app, 'PUT', '/partner/whatsapp-app', {
      key: env.partner.partnerKey,
      body: { appId: '999' },
    });
    expectError(other, 400, 'INVALID_REQUEST');
    expect(other.body.error.details.map((d: any) => d.field)).toEqual(['appSecret', 'verifyToken']);
    // An account's key may not.
    expectError(await call(env.app, 'GET', '/partner/whatsapp-app', { key: a.apiKey }), 403, 'FORBIDDEN');
  });

  it("answers Meta's handshake with the app's verify token only", async () => {
    expect(await env.fake.handshake(appUrl(), { verifyToken, challenge: '4242' })).toEqual({
      status: 200,
      text: '4242',
    });
    expect(
      (await env.fake.handshake(appUrl(), { verifyToken: 'not-the-token', challenge: '1' })).status,
    ).toBe(403);
  });

  it("delivers each entry of one payload to its number's account, and only there", async () => {
    const forA = env.fake.inboundPayload(a.business, { from: '+14155550180', text: 'to A' });
    const forB = env.fake.inboundPayload(b.business, { from: '+14155550181', text: 'to B' });
    const res = await env.fake.postCallback(appUrl(), a.business, {
      ...forA,
      entry: [...forA.entry, ...forB.entry],
    });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ applied: 2, dropped: 0 });
    expect((await rows(a)).messages.map((m) => m.text)).toEqual(['to A']);
    expect((await rows(b)).messages.map((m) => m.text)).toEqual(['to B']);
  });

  it('a template update names its WABA: it reaches the account on it', async () => {
    const created = await call(env.app, 'POST', '/templates', {
      key: a.apiKey,
      body: {
        name: 'order_ready',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Hi {{1}}, it is ready.', example: { body_text: [['Ann']] } }],
      },
    });
    const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: a.apiKey });
    expect(submitted.body.status, JSON.stringify(submitted.body)).toBe('PENDING');
    const res = await env.fake.postTemplateStatus(appUrl(), a.business, {
      templateId: submitted.body.providerTemplateId,
      name: 'order_ready',
      language: 'en_US',
      event: 'APPROVED',
    });
    expect(JSON.parse(res.body)).toEqual({ applied: 1, dropped: 0 });
    expect((await call(env.app, 'GET', `/templates/${created.body.id}`, { key: a.apiKey })).body.status).toBe(
      'APPROVED',
    );
  });

  it('stores nothing for a number no account of the partner has, and refuses a bad signature', async () => {
    const stranger = env.fake.createBusiness({ appSecret });
    const before = await droppedCount('unknown_number');
    const res = await env.fake.postInbound(appUrl(), stranger, { from: '+14155550182', text: 'nobody' });
    expect(JSON.parse(res.body)).toEqual({ applied: 0, dropped: 1 });
    expect(await droppedCount('unknown_number')).toBe(before + 1);

    const forged = await env.fake.postInbound(
      appUrl(),
      a.business,
      { from: '+14155550183' },
      { signature: 'wrong' },
    );
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.body).error.code).toBe('INVALID_SIGNATURE');
    expect((await rows(a)).contacts.map((c) => c.phone)).not.toContain('+14155550183');
  });

  it("an account's own URL takes its partner's app secret when its channel has none", async () => {
    const res = await env.fake.postInbound(accountUrl(b), b.business, {
      from: '+14155550184',
      text: 'own URL',
    });
    expect(JSON.parse(res.body)).toEqual({ applied: 1, dropped: 0 });
    expect(await env.fake.handshake(accountUrl(b), { verifyToken, challenge: '7' })).toEqual({
      status: 200,
      text: '7',
    });
  });

  it("refuses a number that is another account's channel", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: {
        provider: 'whatsapp_cloud',
        whatsapp: FakeWhatsAppCloud.partnerAppChannelSettings(a.business),
      },
    });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.details).toEqual([
      { field: 'whatsapp.phoneNumberId', issue: 'is the channel of another account' },
    ]);
  });
});
