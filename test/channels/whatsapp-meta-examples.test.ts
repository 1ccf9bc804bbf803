// Meta's own published webhook examples (test/fixtures/meta-examples.ts, each citing its page),
// posted signed to the real callback endpoint over HTTP: what Meta says beyond a message's text and
// status is kept and shown. A customer asking about a catalog product, one who came from a
// click-to-WhatsApp ad, forwarded messages, the legacy location and contact messages that carry no
// `type`, and the pricing and conversation of status callbacks.
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import {
  clickToWhatsAppExample,
  forwardedExample,
  referredProductExample,
  statusExamples,
  typelessContactsExample,
  typelessLocationExample,
} from '../fixtures/meta-examples.ts';
import { call } from '../helpers/client.ts';
import {
  credit,
  eventually,
  type MessagingTenant,
  messageWhen,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';

let base: string;
const env = useMessagingApp();
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: ReturnType<FakeWhatsAppCloud['createBusiness']> };

async function newTenant(): Promise<Tenant> {
  // Meta's statuses are the examples the tests post, not the fake's own.
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake, {}, { metaReportsSent: false });
  await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
  return t;
}

async function post(t: Tenant, payload: unknown) {
  const res = await env.fake.postCallback(
    `${base}/api/v1/callbacks/whatsapp/${t.accountId}`,
    t.business,
    payload,
  );
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body) as { applied: number; dropped: number };
}

/** The inbound message stored under Meta's wamid, as GET /messages/{id} shows it. */
async function inboundByWamid(t: Tenant, wamid: string) {
  const list = await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { direction: 'inbound' } });
  expect(list.status).toBe(200);
  const found = list.body.data.filter((m: any) => m.providerMessageId === wamid);
  expect(found, `one message ${wamid}`).toHaveLength(1);
  const one = await call(env.app, 'GET', `/messages/${found[0].id}`, { key: t.apiKey });
  expect(one.body).toEqual(found[0]);
  return one.body;
}

describe("customers' messages as Meta documents them", () => {
  it('a question about a catalog product keeps the product and the message it came from', async () => {
    const t = await newTenant();
    expect(await post(t, referredProductExample(t.business))).toEqual({ applied: 1, dropped: 0 });
    const m = await inboundByWamid(t, 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTA2NTUwRkNEMDdFQjJCRUU0NQA=');
    expect(m).toMatchObject({
      type: 'text',
      text: 'Is this still available?',
      from: '+16505551234',
      referral: null,
    });
    expect(m.context).toEqual({
      messageId: null,
      providerMessageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGA9wcm9kdWN0X2lucXVpcnkA',
      forwarded: false,
      frequentlyForwarded: false,
      referredProduct: { catalogId: '194836987003835', productRetailerId: 'di9ozbzfi4' },
    });
  });

  it('the first message after a click-to-WhatsApp ad keeps the ad it came from', async () => {
    const t = await newTenant();
    await post(t, clickToWhatsAppExample(t.business));
    const m = await inboundByWamid(t, 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUQ0N0VFMDA2MTQ0RkJFNkNDNAA=');
    expect(m).toMatchObject({ type: 'text', text: 'Can I get more info about this?', context: null });
    expect(m.referral).toEqual({
      sourceUrl: 'https://fb.me/3cr4Wqqkv',
      sourceId: '120226305854810726',
      sourceType: 'ad',
      headline: 'Chat with us',
      body: 'Summer Succulents are here!',
      mediaType: 'image',
      imageUrl: 'https://scontent.xx.fbcdn.net/v/t45.1...',
      videoUrl: null,
      thumbnailUrl: null,
      ctwaClid:
        'Aff-n8ZTODiE79d22KtAwQKj9e_mIEOOj27vDVwFjN80dp4_0NiNhEgpGo0AHemvuSoifXaytfTzcchptiErTKCqTrJ5nW1h7IHYeYymGb5K5J5iTROpBhWAGaIAeUzHL50',
      welcomeMessage: 'Hi there! Let us know how we can help!',
    });
  });

  it('a forwarded message, and one forwarded many times, say so', async () => {
    const t = await newTenant();
    await post(t, forwardedExample(t.business, false));
    await post(t, forwardedExample(t.business, true));
    const once = await inboundByWamid(t, 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUI1RkM4RkRENjgwODAxRjA0NAA=');
    expect(once.context).toEqual({
      messageId: null,
      providerMessageId: null,
      forwarded: true,
      frequentlyForwarded: false,
      referredProduct: null,
    });
    const often = await inboundByWamid(t, 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUM4NjI0REEwMkU1NTE5QTNDQgA=');
    expect(often).toMatchObject({
      type: 'media',
      media: { kind: 'image', caption: 'Massive dinner at the beach!' },
    });
    expect(often.context).toMatchObject({ forwarded: false, frequentlyForwarded: true });
  });

  it('a location and a contact card without `type` are read by the content they carry', async () => {
    const t = await newTenant();
    await post(t, typelessLocationExample(t.business, '14155550150'));
    await post(t, typelessContactsExample(t.business, '14155550150'));
    const location = await inboundByWamid(t, 'wamid.ID.location');
    expect(location).toMatchObject({
      type: 'location',
      location: {
        latitude: 37.483307,
        longitude: 122.148981,
        name: 'Pablo Morales',
        address: '1 Hacker Way, Menlo Park, CA 94025',
        url: null,
      },
      unsupported: null,
    });
    const card = await inboundByWamid(t, 'wamid.ID.contacts');
    expect(card.type).toBe('contacts');
    expect(card.contacts[0]).toMatchObject({
      name: { formatted_name: 'John Smith' },
      phones: [{ phone: '+1 (940) 555-1234', wa_id: '19405551234', type: 'WORK' }],
    });
  });
});

describe('status callbacks as Meta documents them', () => {
  async function sentMessage(t: Tenant, to: string) {
    const wrote = await env.fake.postInbound(`${base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
      from: to,
    });
    expect(wrote.status).toBe(200);
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to, type: 'text', text: 'Hi' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // Meta's examples carry no biz_opaque_callback_data: they find the message by the wamid, once
    // the hand-over's answer is recorded.
    const recorded = await eventually(
      () => call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey }),
      (r) => r.body.providerMessageId !== null,
    );
    return {
      id: res.body.id as string,
      wamid: recorded.body.providerMessageId as string,
      recipientId: to.slice(1),
    };
  }

  it('keep what Meta bills and the conversation it counted, the latest report that has them winning', async () => {
    const t = await newTenant();
    const m = await sentMessage(t, '+14155550151');
    await post(t, statusExamples.sent(t.business, m.wamid, m.recipientId));
    let message = await messageWhen(env.app, t.apiKey, m.id, 'sent');
    expect(message.providerPricing).toEqual({
      billable: true,
      model: 'PMP',
      category: 'marketing',
      type: 'regular',
    });
    expect(message.providerConversation).toEqual({
      id: '72b14d6bd5407799e66f64d1b338e567',
      origin: 'marketing',
      expiresAt: new Date(1750116480 * 1000).toISOString(),
    });
    // A v24.0 status carries neither: what was known stays.
    await post(t, statusExamples.sentV24(t.business, m.wamid, m.recipientId));
    expect((await call(env.app, 'GET', `/messages/${m.id}`, { key: t.apiKey })).body.providerPricing).toEqual(
      message.providerPricing,
    );
    await post(t, statusExamples.delivered(t.business, m.wamid, m.recipientId));
    message = await messageWhen(env.app, t.apiKey, m.id, 'delivered');
    expect(message.providerPricing).toEqual({
      billable: true,
      model: 'CBP',
      category: 'service',
      type: null,
    });
    expect(message.providerConversation).toEqual({
      id: '6ceb9d929c9bdc4f90e967a32f8639b4',
      origin: 'service',
      expiresAt: null,
    });
  });

  it("Meta's failed example fails the message with Meta's reason", async () => {
    const t = await newTenant();
    const m = await sentMessage(t, '+14155550152');
    expect(await post(t, statusExamples.failed(t.business, m.wamid, m.recipientId))).toEqual({
      applied: 1,
      dropped: 0,
    });
    const message = await messageWhen(env.app, t.apiKey, m.id, 'failed');
    expect(message.error).toEqual({
      code: 'RECIPIENT_UNREACHABLE',
      message:
        'This message was not delivered to maintain healthy ecosystem engagement.: In order to maintain a healthy ecosystem engagement, the message failed to be delivered.',
      providerCode: 131049,
    });
    expect(message.providerPricing).toBeNull();
  });
});
