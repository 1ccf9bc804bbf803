// The business profile customers see (GET|PATCH /account/channel/profile): changed at Meta and read
// back from it, the photo an upload handed to Meta's resumable upload on the Meta app's id; kept by
// Tidings on the sandbox; Meta's limits checked before Meta is asked, Meta's refusals answered
// with what it said.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import type { FakeApp } from '../fakes/meta-onboarding.ts';
import { FakeWhatsAppCloud, graphError } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, tenant } from '../helpers/client.ts';
import { type MessagingTenant, useMessagingApp, whatsappTenant } from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({ config: { providerTimeoutMs: 1000 } });

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

async function upload(app: App, key: string, bytes: Buffer, type: string, name: string): Promise<string> {
  const boundary = 'profile-boundary';
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/public/media',
    headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

const getProfile = (t: MessagingTenant) =>
  call(env.app, 'GET', '/account/channel/profile', { key: t.apiKey });
const patchProfile = (t: MessagingTenant, body: unknown) =>
  call(env.app, 'PATCH', '/account/channel/profile', { key: t.apiKey, body });

let metaApp: FakeApp;
beforeAll(() => {
  metaApp = env.fake.onboarding.createApp();
});

/** A number connected with a token of the Meta app `metaApp` (PUT with its appId). */
async function numberTenant() {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  const put = await call(env.app, 'PUT', '/account/channel', {
    key: t.apiKey,
    body: {
      provider: 'whatsapp_cloud',
      whatsapp: { ...FakeWhatsAppCloud.channelSettings(t.business), appId: metaApp.appId },
    },
  });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  expect(put.body.whatsapp.appId).toBe(metaApp.appId);
  return t;
}

describe("a number's profile, at Meta", () => {
  it('is changed at Meta and read back from it, the photo through the resumable upload', async () => {
    const t = await numberTenant();
    const empty = await getProfile(t);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      source: 'whatsapp_cloud',
      about: null,
      address: null,
      description: null,
      email: null,
      websites: [],
      vertical: 'UNDEFINED',
      profilePhotoUrl: null,
    });

    const photoId = await upload(env.app, t.apiKey, PNG, 'image/png', 'logo.png');
    const res = await patchProfile(t, {
      about: 'Succulent specialists! 🌵',
      address: '1 Hacker Way, Menlo Park, CA 94025',
      description: 'Plants delivered the same day.',
      email: 'hello@example.com',
      websites: ['https://www.example.com/', 'http://shop.example.com/'],
      vertical: 'RETAIL',
      profilePhotoMediaId: photoId,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      source: 'whatsapp_cloud',
      about: 'Succulent specialists! 🌵',
      websites: ['https://www.example.com/', 'http://shop.example.com/'],
      vertical: 'RETAIL',
      profilePhotoUrl: expect.stringMatching(/^https:\/\/pps\.whatsapp\.net\//),
    });
    // Meta holds it: the fake's own record, and the photo's bytes as uploaded.
    const atMeta = env.fake.profiles.profileOf(t.business);
    expect(atMeta).toMatchObject({
      about: 'Succulent specialists! 🌵',
      email: 'hello@example.com',
      vertical: 'RETAIL',
    });
    const files = [...env.fake.profiles.files.values()].filter((f) => f.business === t.business);
    expect(files).toHaveLength(1);
    expect(files[0]!.bytes.equals(PNG)).toBe(true);
    const session = env.fake.requests.find((r) => r.path.includes(`/${metaApp.appId}/uploads?`))!;
    const query = new URL(session.path, 'http://x').searchParams;
    expect([query.get('file_type'), query.get('file_length')]).toEqual(['image/png', String(PNG.length)]);
    const bytes = env.fake.requests.find((r) => /\/upload:/.test(r.path))!;
    expect(bytes.headers.authorization).toBe(`OAuth ${t.business.accessToken}`);
    expect(bytes.headers.file_offset).toBe('0');

    // One field changes; the others stay.
    const again = await patchProfile(t, { about: 'New about' });
    expect(again.body).toMatchObject({ about: 'New about', email: 'hello@example.com' });
    expect((await getProfile(t)).body).toEqual(again.body);
  });

  it("refuses what Meta would, before asking it, and leaves Meta's profile as it was", async () => {
    const t = await numberTenant();
    expect((await patchProfile(t, { about: 'Kept' })).status).toBe(200);
    const document = await upload(
      env.app,
      t.apiKey,
      Buffer.from('%PDF-1.4 tiny'),
      'application/pdf',
      'a.pdf',
    );
    const before = env.fake.requests.length;
    for (const body of [
      {},
      { about: '' },
      { about: 'x'.repeat(140) },
      { address: 'x'.repeat(257) },
      { description: 'x'.repeat(513) },
      { email: 'not an email' },
      { websites: ['https://a.example', 'https://b.example', 'https://c.example'] },
      { websites: ['www.example.com'] },
      { vertical: 'NOT_A_BIZ' },
      { vertical: 'UNDEFINED' },
      { profilePhotoMediaId: 'med_00000000000000000000000000' },
      { profilePhotoMediaId: document },
      { colour: 'green' },
    ]) {
      const res = await patchProfile(t, body);
      expectError(res, 400, 'INVALID_REQUEST');
    }
    expect(env.fake.requests.slice(before).filter((r) => r.method === 'POST')).toEqual([]);
    expect(env.fake.profiles.profileOf(t.business).about).toBe('Kept');
  });

  it("answers Meta's refusals with what Meta said; 503 when Meta cannot be reached", async () => {
    const t = await numberTenant();
    const path = `/${t.business.phoneNumberId}/whatsapp_business_profile`;
    env.fake.respond = (req) =>
      req.path.endsWith(path) && req.method === 'POST'
        ? graphError(100, { message: '(#100) Invalid parameter', details: 'about contains a link' })
        : undefined;
    const refused = await patchProfile(t, { about: 'see http://x.example' });
    expectError(refused, 400, 'INVALID_REQUEST');
    expect(refused.body.error.details[0].issue).toContain('about contains a link');
    env.fake.respond = (req) => (req.path.includes(path) ? graphError(2) : undefined);
    expectError(await getProfile(t), 503, 'SERVICE_UNAVAILABLE');
    env.fake.respond = undefined;
  });

  it('a photo needs the Meta app id: 409 without it', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    const photoId = await upload(env.app, t.apiKey, PNG, 'image/png', 'logo.png');
    const res = await patchProfile(t, { profilePhotoMediaId: photoId });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.message).toContain('whatsapp.appId');
  });

  it("a coexistence number's profile is the Business app's: 409", async () => {
    const put = await call(env.app, 'PUT', '/partner/whatsapp-app', {
      key: env.partner.partnerKey,
      body: {
        appId: metaApp.appId,
        appSecret: metaApp.appSecret,
        verifyToken: 'a-verify-token',
        configurationId: metaApp.configurationId,
      },
    });
    expect(put.status).toBe(200);
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = env.fake.onboarding.signup(metaApp, { coexistence: true });
    const done = await call(env.app, 'POST', '/account/channel/embedded-signup', {
      key: t.apiKey,
      body: {
        code: signup.code,
        wabaId: signup.wabaId,
        phoneNumberId: signup.phoneNumberId,
        mode: 'coexistence',
      },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const res = await patchProfile(t, { about: 'Hello' });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.message).toContain('WhatsApp Business app');
  });
});

describe("the sandbox's profile", () => {
  it('is kept by Tidings, field by field, the photo an upload', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expect((await getProfile(t)).body).toEqual({
      source: 'sandbox',
      about: null,
      address: null,
      description: null,
      email: null,
      websites: [],
      vertical: null,
      profilePhotoUrl: null,
    });
    const photoId = await upload(env.app, t.apiKey, PNG, 'image/png', 'logo.png');
    const res = await patchProfile(t, {
      about: 'Open 9 to 5',
      vertical: 'HEALTH',
      profilePhotoMediaId: photoId,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      source: 'sandbox',
      about: 'Open 9 to 5',
      vertical: 'HEALTH',
      profilePhotoUrl: `http://tidings.test/api/v1/public/media/${photoId}/content`,
    });
    await patchProfile(t, { email: 'desk@example.com' });
    expect((await getProfile(t)).body).toMatchObject({ about: 'Open 9 to 5', email: 'desk@example.com' });
  });

  it('a sandbox key may not change it (403)', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const key = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, { scope: 'sandbox' });
    expectError(
      await call(env.app, 'PATCH', '/account/channel/profile', { key: key.apiKey, body: { about: 'x' } }),
      403,
      'FORBIDDEN',
    );
  });
});
