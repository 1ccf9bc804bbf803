// Connecting a number through the console, in real Chromium: the account admin's WhatsApp page
// loads Meta's JavaScript SDK (served here by a stand-in at Meta's address, which plays the popup
// at the SDK's message boundary: the WA_EMBEDDED_SIGNUP event from facebook.com and FB.login's
// code), the page hands the result to the API, the fake Graph API plays Meta's side, and the
// number then sends and receives. A message from another origin is ignored; the CSP lets Meta's
// SDK in and nothing else; the business profile is edited from the page.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FakeApp, FakeSignup } from '../fakes/meta-onboarding.ts';
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { type BrowserEnv, describeBrowser, expectAccessible, useBrowser } from '../helpers/browser.ts';
import { call, tenant } from '../helpers/client.ts';
import { memberSession, partnerAdminSession } from '../helpers/console.ts';
import { signedInPage } from '../helpers/console-page.ts';
import { credit } from '../helpers/messaging.ts';

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** Meta's SDK as the page sees it: FB.init, and FB.login playing a finished popup for `signup`. */
function standInSdk(signup: FakeSignup): string {
  const finished = {
    type: 'WA_EMBEDDED_SIGNUP',
    event: 'FINISH',
    data: { phone_number_id: signup.phoneNumberId, waba_id: signup.wabaId, business_id: '2729063490586005' },
    version: 3,
  };
  const decoy = { ...finished, data: { phone_number_id: '1', waba_id: '2' } };
  return `
    window.FB = {
      init: function (options) { window.__fbInit = options; },
      login: function (callback, options) {
        window.__fbLogin = options;
        setTimeout(function () {
          window.dispatchEvent(new MessageEvent('message', { origin: 'https://evilfacebook.com', data: ${JSON.stringify(JSON.stringify(decoy))} }));
          window.dispatchEvent(new MessageEvent('message', { origin: 'https://www.facebook.com', data: 'not json: the SDK talks too' }));
          window.dispatchEvent(new MessageEvent('message', { origin: 'https://www.facebook.com', data: ${JSON.stringify(JSON.stringify(finished))} }));
          callback({ authResponse: { code: ${JSON.stringify(signup.code)} }, status: 'connected' });
        }, 30);
      },
    };
    if (window.fbAsyncInit) window.fbAsyncInit();
  `;
}

describeBrowser('connecting WhatsApp from the console', () => {
  let fake: FakeWhatsAppCloud;
  beforeAll(async () => {
    fake = await FakeWhatsAppCloud.start();
  });
  const env: BrowserEnv = useBrowser({
    workers: true,
    config: () => ({ whatsappGraphUrl: fake.graphUrl, providerTimeoutMs: 2000 }),
  });
  afterAll(async () => {
    await fake?.close();
  });

  let app: FakeApp;
  beforeAll(async () => {
    app = fake.onboarding.createApp();
    const put = await call(env.app, 'PUT', '/partner/whatsapp-app', {
      key: env.partner.partnerKey,
      body: {
        appId: app.appId,
        appSecret: app.appSecret,
        verifyToken: 'a-verify-token',
      },
    });
    expect(put.status).toBe(200);
  });

  it("the partner admin sets the app's Embedded Signup configuration from the console", async () => {
    const session = await partnerAdminSession(env.app, env.partner.partnerKey);
    const { context, page, problems } = await signedInPage(env, session, '/partner/meta-app');
    await page.getByRole('heading', { name: 'Partner admin: Meta app', level: 1 }).waitFor();
    await page.getByLabel('Embedded Signup configuration ID').fill(app.configurationId);
    await page.getByRole('button', { name: 'Save the app' }).click();
    await page.getByText('Saved.').waitFor();
    const stored = await call(env.app, 'GET', '/partner/whatsapp-app', { key: env.partner.partnerKey });
    expect(stored.body).toMatchObject({ appId: app.appId, configurationId: app.configurationId });
    await expectAccessible(page, 'the Meta app page');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('runs Embedded Signup, connects the number, and the number sends and receives', async () => {
    const account = await tenant(env.app, env.partner.partnerKey, { accountName: 'Bakery' });
    const session = await memberSession(env.app, account.apiKey, 'admin');
    const signup = fake.onboarding.signup(app);
    const { context, page, problems } = await signedInPage(env, session, '/portal/whatsapp');
    let sdkLoads = 0;
    await context.route('https://connect.facebook.net/en_US/sdk.js', (route) => {
      sdkLoads++;
      return route.fulfill({ status: 200, contentType: 'text/javascript', body: standInSdk(signup) });
    });
    await page.getByRole('heading', { name: 'WhatsApp', level: 1 }).waitFor();
    await page.getByText('No number yet').waitFor();
    await expectAccessible(page, 'the WhatsApp page, no number yet');
    // Not `same-origin`: Meta's popup must be able to answer this window.
    const answer = await context.request.get(`${env.base}/console/portal/whatsapp`);
    expect(answer.headers()['cross-origin-opener-policy']).toBe('same-origin-allow-popups');
    // Meta's SDK is not loaded until it is asked for.
    expect(sdkLoads).toBe(0);

    await page.getByRole('button', { name: 'Connect WhatsApp', exact: true }).click();
    await page.getByRole('heading', { name: 'Connected' }).waitFor();
    await page.getByText(signup.business.displayPhoneNumber).waitFor();
    expect(sdkLoads).toBe(1);
    expect(await page.evaluate('window.__fbLogin')).toMatchObject({
      config_id: app.configurationId,
      response_type: 'code',
      override_default_response_type: true,
    });
    expect(await page.evaluate('window.__fbInit')).toMatchObject({ appId: app.appId, version: 'v21.0' });
    expect(
      fake.onboarding.registrations.filter((r) => r.phoneNumberId === signup.phoneNumberId),
    ).toHaveLength(1);

    // The number works: a customer writes (to the partner app's one URL), the business answers.
    const inbound = fake.inboundPayload(signup.business, { from: '+14155550180', text: 'Are you open?' });
    const posted = await fake.postCallback(`${env.base}/api/v1/callbacks/whatsapp`, signup.business, inbound);
    expect(JSON.parse(posted.body)).toEqual({ applied: 1, dropped: 0 });
    await credit(env.app, env.partner.partnerKey, account.accountId, '5.00');
    const before = fake.sent.length;
    const sent = await call(env.app, 'POST', '/messages', {
      key: account.apiKey,
      body: { to: '+14155550180', type: 'text', text: 'Yes, until six.' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await fake.waitForSends(before + 1);
    expect(fake.sent.at(-1)).toMatchObject({
      businessPhoneNumberId: signup.phoneNumberId,
      to: '+14155550180',
    });

    // The profile, from the same page.
    await page.getByLabel('About').fill('Fresh bread every morning');
    await page.getByLabel('Photo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG });
    await page.getByRole('button', { name: 'Save the profile' }).click();
    await page.getByText('Saved.').waitFor();
    const atMeta = fake.profiles.profileOf(signup.business);
    expect(atMeta.about).toBe('Fresh bread every morning');
    expect(atMeta.profile_picture_url).toMatch(/^https:\/\/pps\.whatsapp\.net\//);
    expect(
      await page.getByRole('img', { name: 'The business, as customers see it' }).getAttribute('src'),
    ).toBe(atMeta.profile_picture_url);

    await expectAccessible(page, 'the WhatsApp page, connected');
    expect(problems).toEqual([]);
    await context.close();
  });
});
