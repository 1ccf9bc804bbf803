// A connected number's life: disconnected (released at Meta only where Tidings took it, history
// kept), connected again with the same PIN, moved between a partner's accounts (its webhooks follow
// it), and marked for reconnection when Meta refuses its token, told once with what to do.
import { describe, expect, it } from 'vitest';
import type { FakeSignup } from '../fakes/meta-onboarding.ts';
import { FakeWhatsAppCloud, graphError } from '../fakes/whatsapp-cloud.ts';
import { call, otherPartner, provision, tenant } from '../helpers/client.ts';
import { credit, type MessagingTenant, useMessagingApp, whatsappTenant } from '../helpers/messaging.ts';
import { usePartnerMetaApp } from '../helpers/meta-app.ts';
import { expectError } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useMessagingApp({ config: { providerTimeoutMs: 1000 } });

const meta = usePartnerMetaApp(env);
/** A tenant whose number came through Embedded Signup (a new one, or `signup`'s). */
const signedUp = (signup?: FakeSignup) => meta.signedUp(signup ? { signup } : {});
const channelOf = async (t: MessagingTenant) =>
  (await call(env.app, 'GET', '/account/channel', { key: t.apiKey })).body;
const eventsOf = async (t: MessagingTenant, type: string) =>
  (await call(env.app, 'GET', `/events?type=${type}`, { key: t.apiKey })).body.data as any[];

/** A customer writes to the number, through the partner app's one callback URL. */
async function customerWrites(signup: FakeSignup, from: string, text: string) {
  const res = await env.fake.postCallback(
    `${meta.base}/api/v1/callbacks/whatsapp`,
    signup.business,
    env.fake.inboundPayload(signup.business, { from, text }),
  );
  return JSON.parse(res.body);
}

describe('disconnecting', () => {
  it('deregisters a number Tidings registered, unsubscribes the app, keeps the history; the same PIN on return', async () => {
    const t = await signedUp();
    const { signup } = t;
    expect(await customerWrites(signup, '+14155550101', 'hello')).toEqual({ applied: 1, dropped: 0 });
    expect((await channelOf(t)).state).toBe('connected');

    const res = await call(env.app, 'DELETE', '/account/channel', { key: t.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.release).toEqual({
      phoneNumberId: signup.phoneNumberId,
      deregistered: true,
      unsubscribed: true,
      metaError: null,
    });
    expect(res.body.channel).toMatchObject({ provider: 'sandbox', state: 'sandbox', whatsapp: null });
    expect(res.body.channel.nextStep).toContain('Embedded Signup');
    expect(signup.business.platformType).toBe('NOT_APPLICABLE');
    expect(env.fake.onboarding.subscribedApps(signup.wabaId)).toEqual([]);
    const [event] = await eventsOf(t, 'channel.disconnected');
    expect(event.data).toMatchObject({
      reason: 'disconnected',
      deregistered: true,
      whatsapp: { phoneNumberId: signup.phoneNumberId },
    });
    // The history stays.
    const messages = await call(env.app, 'GET', '/messages', { key: t.apiKey });
    expect(messages.body.data.map((m: any) => m.text)).toEqual(['hello']);
    // A second disconnect has nothing to release.
    expectError(await call(env.app, 'DELETE', '/account/channel', { key: t.apiKey }), 409, 'CONFLICT');

    // Connected again through a new signup: registered again with the PIN kept for it.
    const again = env.fake.onboarding.signup(meta.app, { business: signup.business });
    const back = await call(env.app, 'POST', '/account/channel/embedded-signup', {
      key: t.apiKey,
      body: { code: again.code, wabaId: again.wabaId, phoneNumberId: again.phoneNumberId },
    });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    const registrations = env.fake.onboarding.registrations.filter(
      (r) => r.phoneNumberId === signup.phoneNumberId,
    );
    expect(registrations).toHaveLength(2);
    expect(registrations[1]!.pin).toBe(registrations[0]!.pin);
  });

  it('only forgets a number connected with a token: Meta is asked nothing', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    const before = env.fake.requests.length;
    const res = await call(env.app, 'DELETE', '/account/channel', { key: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.release).toEqual({
      phoneNumberId: t.business.phoneNumberId,
      deregistered: false,
      unsubscribed: false,
      metaError: null,
    });
    expect(env.fake.requests.length).toBe(before);
    expect(t.business.platformType ?? 'CLOUD_API').toBe('CLOUD_API');
  });

  it('PUT tells the same story: connected with a token, disconnected back to the sandbox', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    const [connected] = await eventsOf(t, 'channel.connected');
    expect(connected.data).toMatchObject({
      via: 'token',
      whatsapp: { phoneNumberId: t.business.phoneNumberId },
    });
    const put = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: { provider: 'sandbox' },
    });
    expect(put.body.state).toBe('sandbox');
    const [disconnected] = await eventsOf(t, 'channel.disconnected');
    expect(disconnected.data).toMatchObject({ reason: 'disconnected', deregistered: false });
  });

  it('Meta unreachable: 503 and nothing changed; Meta refusing: forgotten all the same, with what Meta said', async () => {
    const t = await signedUp();
    const deregister = `/${t.signup.phoneNumberId}/deregister`;
    env.fake.respond = (req) => (req.path.endsWith(deregister) ? graphError(2) : undefined);
    const down = await call(env.app, 'DELETE', '/account/channel', { key: t.apiKey });
    expectError(down, 503, 'SERVICE_UNAVAILABLE');
    expect((await channelOf(t)).state).toBe('connected');

    env.fake.respond = (req) => (req.path.endsWith(deregister) ? graphError(190) : undefined);
    const refused = await call(env.app, 'DELETE', '/account/channel', { key: t.apiKey });
    env.fake.respond = undefined;
    expect(refused.status).toBe(200);
    expect(refused.body.release).toMatchObject({
      deregistered: false,
      unsubscribed: true,
      metaError: { step: 'deregister_number', providerCode: 190 },
    });
    expect((await channelOf(t)).provider).toBe('sandbox');
  });

  it('a sandbox key may not disconnect (403)', async () => {
    const t = await signedUp();
    const key = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/keys`, {
      key: env.partner.partnerKey,
      body: { name: 'sandbox', scope: 'sandbox' },
    });
    expectError(
      await call(env.app, 'DELETE', '/account/channel', { key: key.body.apiKey }),
      403,
      'FORBIDDEN',
    );
  });
});

describe("moving a number between a partner's accounts", () => {
  it('moves the channel and its webhooks; the history stays where it happened', async () => {
    const from = await signedUp();
    const to = await tenant(env.app, env.partner.partnerKey);
    expect(await customerWrites(from.signup, '+14155550102', 'before the move')).toEqual({
      applied: 1,
      dropped: 0,
    });

    const res = await call(env.app, 'POST', `/partner/accounts/${from.accountId}/channel/move`, {
      key: env.partner.partnerKey,
      body: { toAccountId: to.accountId },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'whatsapp_cloud',
      state: 'connected',
      whatsapp: { phoneNumberId: from.signup.phoneNumberId, onboarding: { via: 'embedded_signup' } },
    });
    expect((await channelOf(from)).provider).toBe('sandbox');
    expect((await eventsOf(from, 'channel.disconnected'))[0].data).toMatchObject({
      reason: 'moved',
      toAccountId: to.accountId,
    });
    expect((await eventsOf(to, 'channel.connected'))[0].data).toMatchObject({
      via: 'moved',
      fromAccountId: from.accountId,
    });

    expect(await customerWrites(from.signup, '+14155550102', 'after the move')).toEqual({
      applied: 1,
      dropped: 0,
    });
    const texts = async (t: MessagingTenant) =>
      (await call(env.app, 'GET', '/messages', { key: t.apiKey })).body.data.map((m: any) => m.text);
    expect(await texts(from)).toEqual(['before the move']);
    expect(await texts(to)).toEqual(['after the move']);
    // The token went with it: the new account answers the customer.
    await credit(env.app, env.partner.partnerKey, to.accountId, '5.00');
    const sends = env.fake.sent.length;
    const sent = await call(env.app, 'POST', '/messages', {
      key: to.apiKey,
      body: { to: '+14155550102', type: 'text', text: 'thanks!' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await env.fake.waitForSends(sends + 1);
  });

  it('refuses what cannot be moved', async () => {
    const from = await signedUp();
    const taken = await signedUp();
    const sandbox = await tenant(env.app, env.partner.partnerKey);
    const move = (accountId: string, toAccountId: string, key = env.partner.partnerKey) =>
      call(env.app, 'POST', `/partner/accounts/${accountId}/channel/move`, { key, body: { toAccountId } });
    const intoNumber = await move(from.accountId, taken.accountId);
    expectError(intoNumber, 409, 'CONFLICT');
    expect(intoNumber.body.error.details).toEqual([
      { field: 'toAccountId', issue: 'has a WhatsApp number connected' },
    ]);
    expectError(await move(sandbox.accountId, from.accountId), 409, 'CONFLICT');
    expectError(await move(from.accountId, from.accountId), 400, 'INVALID_REQUEST');
    const stranger = await otherPartner(env.tdb.db);
    const theirs = await provision(env.app, stranger.partnerKey);
    expectError(await move(from.accountId, theirs.accountId), 404, 'RESOURCE_NOT_FOUND');
    expectError(
      await move(from.accountId, sandbox.accountId, stranger.partnerKey),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect((await channelOf(from)).whatsapp.phoneNumberId).toBe(from.signup.phoneNumberId);
  });
});

describe('a token Meta refuses', () => {
  it("the business removing the partner's app (PARTNER_APP_UNINSTALLED) asks for a reconnection too", async () => {
    const t = await signedUp();
    const res = await env.fake.postCallback(
      `${meta.base}/api/v1/callbacks/whatsapp`,
      t.signup.business,
      env.fake.accountUpdatePayload(t.signup.business, { event: 'PARTNER_APP_UNINSTALLED' }),
    );
    expect(JSON.parse(res.body)).toEqual({ applied: 1, dropped: 0 });
    const channel = await channelOf(t);
    expect(channel).toMatchObject({
      state: 'needs_reconnect',
      whatsapp: { needsReconnect: { providerCode: null } },
    });
    const [update] = await eventsOf(t, 'channel.account_updated');
    expect(update.data).toMatchObject({
      event: 'PARTNER_APP_UNINSTALLED',
      nextStep: expect.stringContaining('connect the number again'),
    });
    // A fresh signup of the same number reconnects it.
    const again = env.fake.onboarding.signup(meta.app, { business: t.signup.business });
    const back = await call(env.app, 'POST', '/account/channel/embedded-signup', {
      key: t.apiKey,
      body: { code: again.code, wabaId: again.wabaId, phoneNumberId: again.phoneNumberId },
    });
    expect(back.body).toMatchObject({ state: 'connected', whatsapp: { needsReconnect: null } });
  });

  it('marks the channel needs_reconnect, told once with what to do; a new token clears it', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    env.fake.failNext(
      graphError(190, { message: 'Error validating access token: Session has expired', subcode: 463 }),
      2,
    );
    // A customer writes (the window opens), then two answers meet Meta's refusal of the token.
    await env.fake.postCallback(
      `${meta.base}/api/v1/callbacks/whatsapp/${t.accountId}`,
      t.business,
      env.fake.inboundPayload(t.business, { from: '+14155550103', text: 'hi' }),
    );
    const ids: string[] = [];
    for (const text of ['one', 'two']) {
      const res = await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { to: '+14155550103', type: 'text', text },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      ids.push(res.body.id);
    }
    const failed = await eventually(
      () =>
        Promise.all(
          ids.map(async (id) => (await call(env.app, 'GET', `/messages/${id}`, { key: t.apiKey })).body),
        ),
      (ms) => ms.every((m) => m.status === 'failed'),
    );
    expect(failed.map((m) => m.error?.providerCode)).toEqual([190, 190]);

    const channel = await channelOf(t);
    expect(channel.state).toBe('needs_reconnect');
    expect(channel.nextStep).toContain('connect the number again');
    expect(channel.whatsapp.needsReconnect).toMatchObject({ providerCode: 190 });
    const errors = await eventsOf(t, 'channel.error');
    expect(errors).toHaveLength(1);
    expect(errors[0].data.nextStep).toContain('POST /account/channel/embedded-signup');

    // Reconnected with a new token: the mark is gone.
    t.business.accessToken = `EAA${'x'.repeat(40)}${Date.now()}`;
    const put = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: { provider: 'whatsapp_cloud', whatsapp: FakeWhatsAppCloud.channelSettings(t.business) },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({
      state: 'connected',
      nextStep: null,
      whatsapp: { needsReconnect: null },
    });
  });
});
