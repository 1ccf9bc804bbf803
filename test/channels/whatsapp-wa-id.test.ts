// WhatsApp's id for a number (wa_id) is not always the number the business wrote to: Meta's send
// reference warns that wa_id "may not match" the input, and that "for Brazil and Mexico, the extra
// added prefix of the phone number may be modified by the Cloud API"
// (https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/send-messages).
// The customer's reply then comes from the wa_id. End to end, over HTTP with the fake Graph API:
// the business writes, Meta reports the wa_id, the customer answers from it, and the answer reaches
// the same contact and conversation and opens its window, so a free-form reply is accepted (202).
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  credit,
  eventually,
  type MessagingTenant,
  messageWhen,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';

let base: string;
const env = useMessagingApp({ autoApprove: true });
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: ReturnType<FakeWhatsAppCloud['createBusiness']> };
const callbackUrl = (t: Tenant) => `${base}/api/v1/callbacks/whatsapp/${t.accountId}`;

/** A WhatsApp tenant with money and an approved template `reminder` (Meta approves it at once). */
async function newTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
  await approvedTemplate(env.app, t.apiKey, {
    name: 'reminder',
    language: 'pt_BR',
    body: 'Olá {{1}}, sua consulta é amanhã.',
    examples: ['Ana'],
  });
  return t;
}

async function contacts(t: Tenant) {
  const res = await call(env.app, 'GET', '/contacts', { key: t.apiKey });
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

async function sendTemplate(t: Tenant, to: string) {
  const res = await call(env.app, 'POST', '/messages', {
    key: t.apiKey,
    body: { to, templateName: 'reminder', templateLanguage: 'pt_BR', parameters: ['Ana'] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  // Handed over, and Meta's answer recorded.
  await eventually(
    () => call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey }),
    (r) => r.body.acceptedAt !== null,
  );
  return res.body as { id: string; contactId: string };
}

/** The customer writes from `waId` (Meta's `from` and `contacts[].wa_id`). */
async function customerWrites(t: Tenant, waId: string, text: string) {
  const res = await env.fake.postInbound(callbackUrl(t), t.business, { from: waId, text, name: 'Ana' });
  expect(res.status, res.body).toBe(200);
  expect(JSON.parse(res.body)).toEqual({ applied: 1, dropped: 0 });
}

/** Send, Meta's wa_id, reply from it, free-form answer: one contact, one conversation, 202. */
async function conversationThroughWaId(number: string, waId: string) {
  const t = await newTenant();
  env.fake.waIds.set(number, waId);
  const template = await sendTemplate(t, number);
  // Meta's answer named the wa_id: the contact keeps it.
  const [contact] = await eventually(
    () => contacts(t),
    (list) => list[0]?.waId === waId,
  );
  expect(contact).toMatchObject({ id: template.contactId, phone: number, waId, lastInboundAt: null });

  await customerWrites(t, waId, 'Sim, confirmo');
  const after = await contacts(t);
  expect(after, 'no second contact for the wa_id').toHaveLength(1);
  expect(after[0].id).toBe(contact.id);
  expect(after[0].lastInboundAt).not.toBeNull();

  const inbound = await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { direction: 'inbound' } });
  expect(inbound.body.data).toHaveLength(1);
  expect(inbound.body.data[0]).toMatchObject({ from: number, contactId: contact.id, text: 'Sim, confirmo' });

  const conversations = await call(env.app, 'GET', '/conversations', {
    key: t.apiKey,
    query: { contactId: contact.id },
  });
  expect(conversations.body.data).toHaveLength(1);
  const conversation = conversations.body.data[0];
  expect(conversation).toMatchObject({ status: 'open', serviceWindowOpen: true });
  expect(inbound.body.data[0].conversationId).toBe(conversation.id);

  // The window is open: a free-form answer is accepted, by number and as a conversation reply.
  const direct = await call(env.app, 'POST', '/messages', {
    key: t.apiKey,
    body: { to: number, type: 'text', text: 'Até amanhã!' },
  });
  expect(direct.status, JSON.stringify(direct.body)).toBe(202);
  expect(direct.body).toMatchObject({ contactId: contact.id, conversationId: conversation.id });
  const reply = await call(env.app, 'POST', `/conversations/${conversation.id}/messages`, {
    key: t.apiKey,
    body: { type: 'text', text: 'Qualquer dúvida, escreva.' },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  await messageWhen(env.app, t.apiKey, reply.body.id, 'sent');
  const history = await call(env.app, 'GET', `/conversations/${conversation.id}/messages`, { key: t.apiKey });
  expect(history.body.data.map((m: any) => m.id).sort()).toEqual(
    [template.id, inbound.body.data[0].id, direct.body.id, reply.body.id].sort(),
  );
  return { t, contact };
}

describe("Meta's wa_id", () => {
  it('Brazil: sent to the number with its ninth digit, answered from the wa_id without it', async () => {
    await conversationThroughWaId('+5511987654321', '551187654321');
  });

  it('Mexico: sent to +52 55…, answered from the wa_id with the 1 after 52', async () => {
    await conversationThroughWaId('+525512345678', '5215512345678');
  });

  it("a status callback's recipient_id teaches the wa_id when the send's answer did not", async () => {
    const t = await newTenant();
    const number = '+5521998765432';
    // Meta's answer without `contacts` (its answer to a send whose recipient it does not report).
    env.fake.respond = (req) => {
      if (req.method !== 'POST' || !req.path.endsWith('/messages') || req.body?.to !== number)
        return undefined;
      env.fake.respond = undefined;
      return {
        status: 200,
        body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.no-contacts' }] },
      };
    };
    const sent = await sendTemplate(t, number);
    expect((await contacts(t))[0].waId).toBeNull();
    const status = await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid: 'wamid.no-contacts',
      status: 'delivered',
      recipientId: '552198765432',
    });
    expect(status.status).toBe(200);
    await messageWhen(env.app, t.apiKey, sent.id, 'delivered');
    expect((await contacts(t))[0]).toMatchObject({ phone: number, waId: '552198765432' });
    await customerWrites(t, '552198765432', 'Oi');
    expect(await contacts(t)).toHaveLength(1);
  });

  it('a new phone forgets the old wa_id; a customer writing first is found by phone and keeps its wa_id', async () => {
    const { t, contact } = await conversationThroughWaId('+5511912345678', '551112345678');
    const patched = await call(env.app, 'PATCH', `/contacts/${contact.id}`, {
      key: t.apiKey,
      body: { phone: '+5511998887777' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.waId).toBeNull();

    // A number that writes first: its contact is made with the wa_id Meta gave.
    await customerWrites(t, '14155550160', 'Hello');
    const made = (await contacts(t)).find((c) => c.phone === '+14155550160');
    expect(made).toMatchObject({ waId: '14155550160', name: 'Ana' });
  });
});
