// Embedded Signup completed by the server (POST /account/channel/embedded-signup), against the fake
// Graph API speaking Meta's onboarding endpoints: the code exchanged for the client's business
// token with the partner's app, the app subscribed to the WABA, the number registered once with a
// PIN Tidings made, the channel saved; then the number sends and receives. Each refusal Meta can
// give names its step with Meta's code; a lost answer, a crash's leftovers and two requests at once
// never register twice; nothing secret reaches an answer or a log.
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeApp } from '../fakes/meta-onboarding.ts';
import { graphError } from '../fakes/whatsapp-cloud.ts';
import { call, otherPartner, provision, tenant } from '../helpers/client.ts';
import { credit, type MessagingTenant, useMessagingApp } from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';
import { eventually, until } from '../helpers/wait.ts';

const logs: string[] = [];
const env = useMessagingApp({
  // Short Graph timeouts: a lost answer fails in a second, and the onboarding's lease (two
  // timeouts and a little) runs out in seconds, so the resume job comes within the test.
  config: { logLevel: 'info', providerTimeoutMs: 1000 },
  logStream: { write: (line) => logs.push(line) },
});

let app: FakeApp;

beforeAll(async () => {
  app = env.fake.onboarding.createApp();
  const put = await call(env.app, 'PUT', '/partner/whatsapp-app', {
    key: env.partner.partnerKey,
    body: {
      appId: app.appId,
      appSecret: app.appSecret,
      verifyToken: 'a-verify-token-of-the-app',
      configurationId: app.configurationId,
    },
  });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  expect(put.body.configurationId).toBe(app.configurationId);
});

const signupBody = (s: { code: string; wabaId: string; phoneNumberId: string }) => ({
  code: s.code,
  wabaId: s.wabaId,
  phoneNumberId: s.phoneNumberId,
});

const complete = (t: MessagingTenant, body: Record<string, unknown>) =>
  call(env.app, 'POST', '/account/channel/embedded-signup', { key: t.apiKey, body });

const onboardingOf = async (t: MessagingTenant) =>
  (await call(env.app, 'GET', '/account/channel/embedded-signup', { key: t.apiKey })).body.onboarding;

const exchangesOf = (code: string) =>
  env.fake.requests.filter(
    (r) => r.path.includes('/oauth/access_token') && r.path.includes(encodeURIComponent(code)),
  );

const registrationsOf = (phoneNumberId: string) =>
  env.fake.onboarding.registrations.filter((r) => r.phoneNumberId === phoneNumberId);

describe('Embedded Signup on the partner app', () => {
  it("tells the console what launching Meta's flow needs", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'GET', '/account/channel/embedded-signup', { key: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      available: true,
      appId: app.appId,
      configurationId: app.configurationId,
      graphApiVersion: 'v21.0',
      onboarding: null,
    });
  });

  it('connects the number in one request, then it sends and receives', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    const res = await complete(t, signupBody(signup));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'whatsapp_cloud',
      whatsapp: {
        phoneNumberId: signup.phoneNumberId,
        businessAccountId: signup.wabaId,
        verifiedName: signup.business.verifiedName,
        displayPhoneNumber: signup.business.displayPhoneNumber,
        qualityRating: 'GREEN',
        messagingLimitTier: 'TIER_1K',
        throughputPerSecond: 80,
        onboarding: { via: 'embedded_signup', mode: 'cloud_api' },
      },
    });

    // Meta's side: the code exchanged once with the app's secret, the app subscribed to the WABA,
    // the number registered once, with a six-digit PIN.
    const [exchange] = exchangesOf(signup.code);
    expect(exchangesOf(signup.code)).toHaveLength(1);
    const query = new URL(exchange!.path, 'http://x').searchParams;
    expect(query.get('client_id')).toBe(app.appId);
    expect(query.get('client_secret')).toBe(app.appSecret);
    expect(env.fake.onboarding.subscribedApps(signup.wabaId)).toEqual([app.appId]);
    const registrations = registrationsOf(signup.phoneNumberId);
    expect(registrations).toHaveLength(1);
    expect(registrations[0]!.pin).toMatch(/^\d{6}$/);
    expect(signup.business.platformType).toBe('CLOUD_API');

    const onboarding = await onboardingOf(t);
    expect(onboarding).toMatchObject({ status: 'connected', mode: 'cloud_api', error: null });
    expect(onboarding.steps.map((s: any) => s.step)).toEqual([
      'exchange_code',
      'subscribe_app',
      'register_number',
      'read_number',
      'save_channel',
    ]);
    expect(onboarding.steps.every((s: any) => typeof s.finishedAt === 'string')).toBe(true);
    const events = await call(env.app, 'GET', '/events?type=channel.connected', { key: t.apiKey });
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0].data).toMatchObject({
      via: 'embedded_signup',
      mode: 'cloud_api',
      whatsapp: { phoneNumberId: signup.phoneNumberId },
    });

    // A customer writes, through the partner app's one callback URL; the business answers.
    const inbound = env.fake.inboundPayload(signup.business, { from: '+14155550190', text: 'hello' });
    await env.app.listen({ port: 0, host: '127.0.0.1' }).catch(() => {});
    const base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
    const posted = await env.fake.postCallback(`${base}/api/v1/callbacks/whatsapp`, signup.business, inbound);
    expect(JSON.parse(posted.body)).toEqual({ applied: 1, dropped: 0 });
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const sendsBefore = env.fake.sent.length;
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: '+14155550190', type: 'text', text: 'hi, how can we help?' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await env.fake.waitForSends(sendsBefore + 1);
    expect(env.fake.sent.at(-1)).toMatchObject({
      businessPhoneNumberId: signup.phoneNumberId,
      to: '+14155550190',
    });

    // The same request again answers the channel, and asks Meta nothing.
    const requestsBefore = env.fake.requests.length;
    const again = await complete(t, signupBody(signup));
    expect(again.status).toBe(200);
    expect(again.body.whatsapp.phoneNumberId).toBe(signup.phoneNumberId);
    expect(env.fake.requests.length).toBe(requestsBefore);

    // Nothing secret in any answer or log line: the token, the PIN, the code, the app secret.
    const secrets = [signup.business.accessToken, registrations[0]!.pin, signup.code, app.appSecret];
    const shown = JSON.stringify([res.body, onboarding, events.body, again.body]);
    const logged = logs.join('\n');
    for (const secret of secrets) {
      expect(shown).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });

  it("connects a coexistence number from the WABA alone, as Meta's event names it", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app, { coexistence: true });
    const res = await complete(t, { code: signup.code, wabaId: signup.wabaId, mode: 'coexistence' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.whatsapp).toMatchObject({
      phoneNumberId: signup.phoneNumberId,
      onboarding: { mode: 'coexistence' },
    });
    const onboarding = await onboardingOf(t);
    expect(onboarding).toMatchObject({ phoneNumberId: signup.phoneNumberId, status: 'connected' });
    expect(onboarding.steps.map((s: any) => s.step)).toEqual([
      'exchange_code',
      'find_number',
      'subscribe_app',
      'read_number',
      'save_channel',
    ]);
    // Without the number and outside coexistence: the number is required.
    const other = await tenant(env.app, env.partner.partnerKey);
    const refused = await complete(other, { code: 'x', wabaId: signup.wabaId });
    expectError(refused, 400, 'INVALID_REQUEST');
    expect(refused.body.error.details[0].field).toBe('phoneNumberId');
  });

  it('connects a Business app number in coexistence without registering it', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app, { coexistence: true });
    const res = await complete(t, { ...signupBody(signup), mode: 'coexistence' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.whatsapp).toMatchObject({
      onboarding: { via: 'embedded_signup', mode: 'coexistence' },
      throughputPerSecond: 20,
    });
    expect(registrationsOf(signup.phoneNumberId)).toEqual([]);
    const onboarding = await onboardingOf(t);
    expect(onboarding.steps.map((s: any) => s.step)).not.toContain('register_number');
  });
});

describe("Meta's refusals, each naming its step", () => {
  it('an expired code: 400 on code, the channel unchanged, the onboarding failed at exchange_code', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app, { ttlMs: 0 });
    const res = await complete(t, signupBody(signup));
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field: 'code', issue: expect.stringContaining('100/36007') }]);
    expect(res.body.error.message).toContain('exchange_code');
    expect(res.body.error.message).toContain('This authorization code has expired');
    const channel = await call(env.app, 'GET', '/account/channel', { key: t.apiKey });
    expect(channel.body.provider).toBe('sandbox');
    expect(await onboardingOf(t)).toMatchObject({
      status: 'failed',
      error: { step: 'exchange_code', providerCode: 100, providerSubcode: 36007 },
    });
    expect(env.fake.onboarding.subscribedApps(signup.wabaId)).toEqual([]);
  });

  it("another app's code: the client's own partner app is the only one used, and Meta refuses", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const stranger = env.fake.onboarding.createApp();
    const signup = env.fake.onboarding.signup(stranger);
    const res = await complete(t, signupBody(signup));
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details[0]).toMatchObject({
      field: 'code',
      issue: expect.stringContaining('36008'),
    });
    const query = new URL(exchangesOf(signup.code)[0]!.path, 'http://x').searchParams;
    expect(query.get('client_id')).toBe(app.appId);
  });

  it('a code used already: 400, and a new code for the same number starts over', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const first = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    expect((await complete(first, signupBody(signup))).status).toBe(200);
    // Another account hands over the same (used) code for another number.
    const other = env.fake.onboarding.signup(app);
    const res = await complete(t, { ...signupBody(other), code: signup.code });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details[0].issue).toContain('100/36009');
    // The popup again: a fresh code for the same number completes.
    const fresh = await complete(t, signupBody(other));
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(await onboardingOf(t)).toMatchObject({ status: 'connected', error: null });
  });

  it('a WABA the token cannot reach: 400 on wabaId at subscribe_app', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    const elsewhere = env.fake.createBusiness();
    const res = await complete(t, { ...signupBody(signup), wabaId: elsewhere.businessAccountId });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'wabaId', issue: expect.stringContaining('subscribe_app (100/33)') },
    ]);
    expect(await onboardingOf(t)).toMatchObject({ status: 'failed', error: { step: 'subscribe_app' } });
  });

  it("a number registered with another provider's PIN: 409 at register_number", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const business = env.fake.createBusiness({
      platformType: 'NOT_APPLICABLE',
      registeredElsewhere: true,
      appSecret: app.appSecret,
    });
    const res = await complete(t, signupBody(env.fake.onboarding.signup(app, { business })));
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.message).toContain('register_number (133005)');
    expect(res.body.error.details).toEqual([
      { field: 'phoneNumberId', issue: expect.stringContaining('two-step verification') },
    ]);
    expect((await call(env.app, 'GET', '/account/channel', { key: t.apiKey })).body.provider).toBe('sandbox');
  });

  it("another account's number: 409 before Meta is asked anything", async () => {
    const owner = await tenant(env.app, env.partner.partnerKey);
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    expect((await complete(owner, signupBody(signup))).status).toBe(200);
    const again = env.fake.onboarding.signup(app, { business: signup.business });
    const res = await complete(t, signupBody(again));
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.details).toEqual([
      { field: 'phoneNumberId', issue: 'is the channel of another account' },
    ]);
    expect(exchangesOf(again.code)).toEqual([]);
  });

  it("a partner without a Meta app: 409, and GET says Embedded Signup isn't available", async () => {
    const partner = await otherPartner(env.tdb.db);
    const account = await provision(env.app, partner.partnerKey);
    const headers = { 'x-account-id': account.accountId };
    const settings = await call(env.app, 'GET', '/account/channel/embedded-signup', {
      key: partner.partnerKey,
      headers,
    });
    expect(settings.body).toMatchObject({ available: false, appId: null, configurationId: null });
    const res = await call(env.app, 'POST', '/account/channel/embedded-signup', {
      key: partner.partnerKey,
      headers,
      body: signupBody(env.fake.onboarding.signup(app)),
    });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.message).toContain('PUT /account/channel');
  });

  it('malformed input: 400 naming the field, nothing written', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const body of [
      {},
      { code: '', wabaId: '1', phoneNumberId: '2' },
      { code: 'x', wabaId: 'not digits', phoneNumberId: '2' },
      { code: 'x', wabaId: '1', phoneNumberId: '2', mode: 'other' },
      { code: 'x', wabaId: '1', phoneNumberId: '2', extra: true },
    ]) {
      expectError(await complete(t, body), 400, 'INVALID_REQUEST');
    }
    expect(await onboardingOf(t)).toBeNull();
  });
});

describe('resuming, never registering twice', () => {
  it('Meta unreachable at a step: 503, then the same request resumes there (the code is not asked again)', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    env.fake.respond = (req) =>
      req.path.includes(`/${signup.wabaId}/subscribed_apps`) ? graphError(2) : undefined;
    const res = await complete(t, signupBody(signup));
    env.fake.respond = undefined;
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.body.error.message).toContain('subscribe_app');
    expect(await onboardingOf(t)).toMatchObject({ status: 'in_progress', error: { step: 'subscribe_app' } });

    const again = await complete(t, signupBody(signup));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(exchangesOf(signup.code)).toHaveLength(1);
    expect(registrationsOf(signup.phoneNumberId)).toHaveLength(1);
  });

  it('a registration Meta took but whose answer was lost is not sent again', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    const registerPath = `/${signup.phoneNumberId}/register`;
    env.fake.loseAnswer = (req) => req.path.endsWith(registerPath);
    const res = await complete(t, signupBody(signup));
    env.fake.loseAnswer = undefined;
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(registrationsOf(signup.phoneNumberId)).toHaveLength(1);

    const again = await complete(t, signupBody(signup));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(registrationsOf(signup.phoneNumberId)).toHaveLength(1);
    expect(env.fake.requests.filter((r) => r.path.endsWith(registerPath))).toHaveLength(1);
  });

  it('two requests at once: one runs the steps, the other is told to wait', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    env.fake.hold = (req) => (req.path.includes(`/${signup.wabaId}/subscribed_apps`) ? held : undefined);
    const first = complete(t, signupBody(signup));
    await until(
      () => env.fake.requests.some((r) => r.path.includes(`/${signup.wabaId}/subscribed_apps`)),
      10_000,
      () => 'the first request never reached subscribe_app',
    );
    const second = await complete(t, signupBody(signup));
    expectError(second, 409, 'CONFLICT');
    expect(second.body.error.details).toEqual([
      { field: 'phoneNumberId', issue: 'has an Embedded Signup under way' },
    ]);
    release();
    env.fake.hold = undefined;
    expect((await first).status).toBe(200);
    expect(registrationsOf(signup.phoneNumberId)).toHaveLength(1);
  });

  it('left behind by its request, it is completed by the resume job', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(app);
    // The register call never reaches Meta's handling (held, never released): the request gives
    // up with a 503, and nobody asks again. The resume job finishes it once the lease is out.
    const registerPath = `/${signup.phoneNumberId}/register`;
    env.fake.hold = (req) => (req.path.endsWith(registerPath) ? new Promise<void>(() => {}) : undefined);
    expectError(await complete(t, signupBody(signup)), 503, 'SERVICE_UNAVAILABLE');
    env.fake.hold = undefined;
    const done = await eventually(
      () => onboardingOf(t),
      (o) => o?.status === 'connected',
      30_000,
    );
    expect(done.status).toBe('connected');
    expect(registrationsOf(signup.phoneNumberId)).toHaveLength(1);
    const channel = await call(env.app, 'GET', '/account/channel', { key: t.apiKey });
    expect(channel.body.whatsapp.phoneNumberId).toBe(signup.phoneNumberId);
  });
});
