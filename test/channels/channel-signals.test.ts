// What Meta says about the business outside any one message, through signed webhooks from the fake
// Graph API: a customer stopping marketing messages (user_preferences) and the 422 that follows, the
// number's quality and messaging limit (phone_number_quality_update, then a read of the number for
// its rating), account updates, errors, and `played` statuses. Each shows on GET /account/channel
// or the message and is told as an event, once.
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  balanceOf,
  credit,
  customerWrote,
  eventually,
  type MessagingTenant,
  messageWhen,
  sandboxTenant,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import type { Receiver } from '../helpers/receiver.ts';
import { expectError } from '../helpers/setup.ts';

let base: string;
const env = useMessagingApp({ autoApprove: true, config: { logLevel: 'silent' } });
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Business = ReturnType<FakeWhatsAppCloud['createBusiness']>;
type Tenant = MessagingTenant & { business: Business };

const callbackUrl = (t: Tenant) => `${base}/api/v1/callbacks/whatsapp/${t.accountId}`;

async function liveTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '10.00');
  return t;
}

async function subscribe(t: MessagingTenant, events: string[]): Promise<Receiver> {
  return (await env.subscribe(t.apiKey, events)).receiver;
}

async function post(t: Tenant, payload: unknown) {
  const res = await env.fake.postCallback(callbackUrl(t), t.business, payload);
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body) as { applied: number; dropped: number };
}

const channel = async (t: MessagingTenant) =>
  (await call(env.app, 'GET', '/account/channel', { key: t.apiKey })).body.whatsapp;

async function contactByPhone(t: MessagingTenant, phone: string) {
  const res = await call(env.app, 'GET', `/contacts?phone=${encodeURIComponent(phone)}`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data[0];
}

const sendTemplate = (t: MessagingTenant, to: string, templateName: string) =>
  call(env.app, 'POST', '/messages', {
    key: t.apiKey,
    body: { to, templateName, templateLanguage: 'en_US', parameters: ['Ann', 'Monday'] },
  });

describe('user_preferences', () => {
  it('a stop marks the contact opted out, a MARKETING template to them is a 422 and a UTILITY one goes', async () => {
    const t = await liveTenant();
    const hook = await subscribe(t, ['contact.updated']);
    const to = '+14155552101';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 60_000));
    await approvedTemplate(env.app, t.apiKey, { name: 'spring_sale', category: 'MARKETING' });
    await approvedTemplate(env.app, t.apiKey, { name: 'order_ready', category: 'UTILITY' });
    const stoppedAt = Math.floor(Date.now() / 1000);

    const stop = await post(
      t,
      env.fake.userPreferencesPayload(t.business, {
        waId: '14155552101',
        value: 'stop',
        timestamp: stoppedAt,
      }),
    );
    expect(stop).toEqual({ applied: 1, dropped: 0 });
    expect((await contactByPhone(t, to)).marketingOptOut).toBe(true);
    const [updated] = await hook.waitFor(1);
    expect(updated!.json.type).toBe('contact.updated');
    expect(updated!.json.data).toMatchObject({
      phone: to,
      marketingOptOut: true,
      previous: { marketingOptOut: false },
    });
    // The same webhook again changes nothing.
    expect(
      await post(
        t,
        env.fake.userPreferencesPayload(t.business, {
          waId: '14155552101',
          value: 'stop',
          timestamp: stoppedAt,
        }),
      ),
    ).toEqual({ applied: 0, dropped: 0 });

    const balance = await balanceOf(env.app, t.apiKey);
    const refused = await sendTemplate(t, to, 'spring_sale');
    expectError(refused, 422, 'CONTACT_OPTED_OUT');
    expect(refused.body.error.details[0].field).toBe('templateName');
    expect(await balanceOf(env.app, t.apiKey)).toBe(balance);
    const utility = await sendTemplate(t, to, 'order_ready');
    expect(utility.status, JSON.stringify(utility.body)).toBe(202);

    // An older resume (Meta delivers out of order) does not undo the stop; a newer one does.
    expect(
      await post(
        t,
        env.fake.userPreferencesPayload(t.business, {
          waId: '14155552101',
          value: 'resume',
          timestamp: stoppedAt - 60,
        }),
      ),
    ).toEqual({ applied: 0, dropped: 0 });
    expect((await contactByPhone(t, to)).marketingOptOut).toBe(true);
    expect(
      await post(
        t,
        env.fake.userPreferencesPayload(t.business, {
          waId: '14155552101',
          value: 'resume',
          timestamp: stoppedAt + 1,
        }),
      ),
    ).toEqual({ applied: 1, dropped: 0 });
    expect((await contactByPhone(t, to)).marketingOptOut).toBe(false);
    const marketing = await sendTemplate(t, to, 'spring_sale');
    expect(marketing.status, JSON.stringify(marketing.body)).toBe(202);
  });

  it('a stop from a number with no contact yet makes the contact, opted out', async () => {
    const t = await liveTenant();
    expect(
      await post(t, env.fake.userPreferencesPayload(t.business, { waId: '14155552102', value: 'stop' })),
    ).toEqual({ applied: 1, dropped: 0 });
    expect(await contactByPhone(t, '+14155552102')).toMatchObject({ marketingOptOut: true });
  });

  it('in the sandbox, a contact marked opted out by the API is refused MARKETING templates too', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '10.00');
    await approvedTemplate(env.app, t.apiKey, { name: 'sandbox_sale', category: 'MARKETING' });
    const created = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155552103', marketingOptOut: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectError(await sendTemplate(t, '+14155552103', 'sandbox_sale'), 422, 'CONTACT_OPTED_OUT');
  });
});

describe('the number and the account', () => {
  it('a quality update sets the tier at once, then the rating read from Meta; both are events', async () => {
    const t = await liveTenant();
    const hook = await subscribe(t, ['channel.quality_changed']);
    expect(await channel(t)).toMatchObject({
      qualityRating: 'GREEN',
      messagingLimitTier: 'TIER_1K',
      lastQualityEvent: null,
    });
    // Meta lowers the number's rating and its limit, then says so.
    t.business.qualityRating = 'RED';
    t.business.messagingLimitTier = 'TIER_250';
    const time = Math.floor(Date.now() / 1000);
    const payload = env.fake.qualityUpdatePayload(t.business, {
      event: 'FLAGGED',
      currentLimit: 'TIER_250',
      oldLimit: 'TIER_1K',
      time,
    });
    expect(await post(t, payload)).toEqual({ applied: 1, dropped: 0 });
    const events = await hook.waitFor(2);
    expect(events.map((e) => e.json.data.event)).toEqual(['FLAGGED', 'QUALITY_RATING']);
    expect(events[0]!.json.data).toMatchObject({
      whatsapp: {
        phoneNumberId: t.business.phoneNumberId,
        messagingLimitTier: 'TIER_250',
        qualityRating: 'GREEN',
      },
      previousMessagingLimitTier: 'TIER_1K',
    });
    expect(events[1]!.json.data).toMatchObject({
      whatsapp: { qualityRating: 'RED' },
      previousQualityRating: 'GREEN',
    });
    expect(await channel(t)).toMatchObject({
      qualityRating: 'RED',
      messagingLimitTier: 'TIER_250',
      lastQualityEvent: {
        event: 'FLAGGED',
        currentLimit: 'TIER_250',
        previousLimit: 'TIER_1K',
        at: new Date(time * 1000).toISOString(),
      },
    });
    // Sent again, it changes nothing and tells nothing.
    expect(await post(t, payload)).toEqual({ applied: 0, dropped: 0 });
    const other = structuredClone(payload) as any;
    other.entry[0]!.changes[0]!.value.display_phone_number = '15550009999';
    other.entry[0]!.time = time + 5;
    // Another number of the same business account: not this channel's.
    expect(await post(t, other)).toEqual({ applied: 0, dropped: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hook.received).toHaveLength(2);
  });

  it('account updates and errors show on the channel and are events', async () => {
    const t = await liveTenant();
    const hook = await subscribe(t, ['channel.account_updated', 'channel.error']);
    const restriction = {
      restriction_info: [{ restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration: 1767225600 }],
    };
    expect(
      await post(
        t,
        env.fake.accountUpdatePayload(t.business, { event: 'ACCOUNT_RESTRICTION', details: restriction }),
      ),
    ).toEqual({ applied: 1, dropped: 0 });
    expect(
      await post(
        t,
        env.fake.errorsPayload(t.business, {
          code: 131042,
          title: 'Business eligibility payment issue',
          details: 'The payment method failed.',
        }),
      ),
    ).toEqual({ applied: 1, dropped: 0 });
    const events = await hook.waitFor(2);
    expect(events.map((e) => e.json.type)).toEqual(['channel.account_updated', 'channel.error']);
    expect(events[0]!.json.data).toMatchObject({ event: 'ACCOUNT_RESTRICTION', details: restriction });
    expect(events[1]!.json.data.error).toMatchObject({
      providerCode: 131042,
      title: 'Business eligibility payment issue',
      details: 'The payment method failed.',
    });
    const shown = await channel(t);
    expect(shown.lastAccountUpdate).toMatchObject({ event: 'ACCOUNT_RESTRICTION', details: restriction });
    expect(shown.lastError).toMatchObject({
      providerCode: 131042,
      message: 'Business eligibility payment issue',
    });
    expect(JSON.stringify(shown)).not.toContain(t.business.accessToken);
  });
});

describe('played', () => {
  it('is kept on the message, whose status stays read', async () => {
    const t = await liveTenant();
    const to = '+14155552104';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 60_000));
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to, type: 'media', media: { kind: 'audio', url: 'https://example.com/note.ogg' } },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await messageWhen(env.app, t.apiKey, sent.body.id, 'sent');
    const wamid = env.fake.sent.find((s) => s.to === to)!.wamid;
    const status = (s: 'read' | 'played', at: number) =>
      env.fake.postStatus(callbackUrl(t), t.business, { wamid, status: s, recipientId: to, timestamp: at });
    const now = Math.floor(Date.now() / 1000);
    expect(JSON.parse((await status('read', now)).body)).toEqual({ applied: 1, dropped: 0 });
    expect(JSON.parse((await status('played', now + 2)).body)).toEqual({ applied: 1, dropped: 0 });
    expect(JSON.parse((await status('played', now + 3)).body)).toEqual({ applied: 0, dropped: 0 });
    const message = await eventually(
      () => call(env.app, 'GET', `/messages/${sent.body.id}`, { key: t.apiKey }),
      (r) => r.body.playedAt !== null,
    );
    expect(message.body).toMatchObject({
      status: 'read',
      playedAt: new Date((now + 2) * 1000).toISOString(),
    });
  });
});
