// A number that stays on the WhatsApp Business app (coexistence): connected without registering,
// its two syncs asked of Meta once each, in Meta's order, after the channel is saved; what the
// business sends from the app stored as its outbound messages (source business_app: never sent
// again, never charged, the customer's window unmoved); the app's address book filling contacts.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { credit, type MessagingTenant, useMessagingApp } from '../helpers/messaging.ts';
import { type SignedUp, usePartnerMetaApp } from '../helpers/meta-app.ts';
import { eventually } from '../helpers/wait.ts';

const env = useMessagingApp({ config: { providerTimeoutMs: 1000 } });

const meta = usePartnerMetaApp(env);
type Coexisting = SignedUp;
const coexisting = () => meta.signedUp({ coexistence: true });
const post = meta.post;
const channelOf = async (t: MessagingTenant) =>
  (await call(env.app, 'GET', '/account/channel', { key: t.apiKey })).body;
const messagesOf = async (t: MessagingTenant) =>
  (await call(env.app, 'GET', '/messages', { key: t.apiKey })).body.data as any[];
const syncsOf = (t: Coexisting) =>
  env.fake.onboarding.syncRequests
    .filter((r) => r.phoneNumberId === t.signup.phoneNumberId)
    .map((r) => r.syncType);

describe('coexistence', () => {
  it("asks for the app's contacts, then its history, once each, after the channel is saved", async () => {
    const t = await coexisting();
    const channel = await eventually(
      () => channelOf(t),
      (c) => c.whatsapp.syncs?.history?.status === 'requested',
    );
    expect(syncsOf(t)).toEqual(['smb_app_state_sync', 'history']);
    expect(channel.whatsapp.syncs).toMatchObject({
      contacts: { status: 'requested', requestId: expect.any(String) },
      history: { status: 'requested', requestId: expect.any(String) },
    });
    expect(channel.whatsapp.throughputPerSecond).toBe(20);
  });

  it('a sync whose answer was lost is not asked again', async () => {
    env.fake.loseAnswer = (req) => req.path.endsWith('/smb_app_data') && req.body?.sync_type === 'history';
    const t = await coexisting();
    const channel = await eventually(
      () => channelOf(t),
      (c) => c.whatsapp.syncs?.history?.status === 'unknown',
      15_000,
    );
    env.fake.loseAnswer = undefined;
    expect(channel.whatsapp.syncs.contacts.status).toBe('requested');
    expect(channel.whatsapp.syncs.history.status).toBe('unknown');
    expect(syncsOf(t)).toEqual(['smb_app_state_sync', 'history']);
  });

  it('stores what the business sent from the app: never sent again, never charged, the window unmoved, a reply', async () => {
    const t = await coexisting();
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const sla = { name: 'Standard', firstResponseMinutes: 60 };
    expect((await call(env.app, 'POST', '/sla-policies', { key: t.apiKey, body: sla })).status).toBe(201);
    const customer = '+14155550111';
    expect(
      await post(t, env.fake.inboundPayload(t.signup.business, { from: customer, text: 'is it open?' })),
    ).toEqual({
      applied: 1,
      dropped: 0,
    });
    const [inbound] = await messagesOf(t);
    const contactBefore = (await call(env.app, 'GET', `/contacts/${inbound.contactId}`, { key: t.apiKey }))
      .body;
    const walletBefore = (await call(env.app, 'GET', '/account/wallet', { key: t.apiKey })).body;
    const sendsBefore = env.fake.sent.length;

    const echo = env.fake.echoPayload(t.signup.business, [{ to: customer, text: 'Yes, until 6!' }]);
    expect(await post(t, echo)).toEqual({ applied: 1, dropped: 0 });
    expect(await post(t, echo)).toEqual({ applied: 0, dropped: 0 });

    const messages = await messagesOf(t);
    const sent = messages.find((m) => m.direction === 'outbound');
    expect(messages).toHaveLength(2);
    expect(sent).toMatchObject({
      source: 'business_app',
      status: 'sent',
      text: 'Yes, until 6!',
      to: customer,
      contactId: inbound.contactId,
      conversationId: inbound.conversationId,
      pricing: null,
      channel: 'whatsapp_cloud',
      sandbox: false,
    });
    expect(inbound.source).toBeNull();
    expect(env.fake.sent.length).toBe(sendsBefore);
    expect((await call(env.app, 'GET', '/account/wallet', { key: t.apiKey })).body.balance).toEqual(
      walletBefore.balance,
    );
    const contactAfter = (await call(env.app, 'GET', `/contacts/${inbound.contactId}`, { key: t.apiKey }))
      .body;
    expect(contactAfter.lastInboundAt).toBe(contactBefore.lastInboundAt);
    const conversation = (
      await call(env.app, 'GET', `/conversations/${inbound.conversationId}`, { key: t.apiKey })
    ).body;
    expect(conversation).toMatchObject({ unreadCount: 0 });
    // Answered from the phone: the conversation's first response, its target met.
    expect(conversation.sla).toMatchObject({ firstResponseAt: sent.createdAt, nextDueAt: null });
    const events = await call(env.app, 'GET', '/events?type=message.sent', { key: t.apiKey });
    expect(events.body.data.map((e: any) => e.data.source)).toEqual(['business_app']);
  });

  it("an echo to a new customer makes the contact, and the customer's answer opens the conversation around it", async () => {
    const t = await coexisting();
    const customer = '+14155550112';
    expect(
      await post(t, env.fake.echoPayload(t.signup.business, [{ to: customer, text: 'Your order is ready' }])),
    ).toEqual({ applied: 1, dropped: 0 });
    const [echoed] = await messagesOf(t);
    expect(echoed).toMatchObject({ source: 'business_app', to: customer, conversationId: null });
    await post(t, env.fake.inboundPayload(t.signup.business, { from: customer, text: 'Thanks' }));
    const messages = await messagesOf(t);
    expect(new Set(messages.map((m) => m.conversationId)).size).toBe(1);
    expect(messages[0].conversationId).not.toBeNull();
  });

  it("fills contacts from the app's address book, and keeps those removed there", async () => {
    const t = await coexisting();
    const named = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155550121', name: 'Named here' },
    });
    const unnamed = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155550122' },
    });
    expect([named.status, unnamed.status]).toEqual([201, 201]);
    const sync = env.fake.appContactsPayload(t.signup.business, [
      { phone: '+14155550120', fullName: 'Pablo Morales' },
      { phone: '+14155550121', fullName: 'Named in the app' },
      { phone: '+14155550122', fullName: 'Ann Lee' },
      { phone: '+14155550123', action: 'remove' },
    ]);
    expect((await post(t, sync)).dropped).toBe(0);
    const contacts = (await call(env.app, 'GET', '/contacts', { key: t.apiKey })).body.data as any[];
    const byPhone = Object.fromEntries(contacts.map((c) => [c.phone, c.name]));
    expect(byPhone).toEqual({
      '+14155550120': 'Pablo Morales',
      '+14155550121': 'Named here',
      '+14155550122': 'Ann Lee',
    });
    const created = await call(env.app, 'GET', '/events?type=contact.created', { key: t.apiKey });
    expect(created.body.data.map((e: any) => e.data.phone).sort()).toEqual([
      '+14155550120',
      '+14155550121',
      '+14155550122',
    ]);
  });
});
