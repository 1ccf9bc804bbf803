// GET and PUT /account/channel: the sandbox by default, its simulation settings, and a WhatsApp Cloud
// API number whose credentials are checked with Meta (a fake Graph API here), stored encrypted and
// never shown again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeWhatsAppCloud, graphError } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

let fake: FakeWhatsAppCloud;
// Registered first, so the fake listens before the app is built with its address.
beforeAll(async () => {
  fake = await FakeWhatsAppCloud.start();
});
const env = useTestApp({ config: () => ({ whatsappGraphUrl: fake.graphUrl, providerTimeoutMs: 1500 }) });

afterAll(async () => {
  await fake.close();
});

function whatsappBody(
  business: ReturnType<FakeWhatsAppCloud['createBusiness']>,
  extra: Record<string, unknown> = {},
) {
  return {
    provider: 'whatsapp_cloud',
    whatsapp: { ...FakeWhatsAppCloud.channelSettings(business), ...extra },
  };
}

describe('the channel', () => {
  it('is the sandbox with default delays until configured; GET /account says so too', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'GET', '/account/channel', { key: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      provider: 'sandbox',
      state: 'sandbox',
      nextStep: expect.stringContaining('Connect a WhatsApp number'),
      sandbox: { deliveredAfterMs: 1000, readAfterMs: 2000, reviewAfterMs: 2000 },
      whatsapp: null,
      updatedAt: null,
    });
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).body.channel).toEqual({
      provider: 'sandbox',
    });
  });

  it('keeps sandbox settings; fields left out take their defaults; null read delay means never read', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: { provider: 'sandbox', sandbox: { deliveredAfterMs: 0, readAfterMs: null } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.sandbox).toEqual({ deliveredAfterMs: 0, readAfterMs: null, reviewAfterMs: 2000 });
    const again = await call(env.app, 'GET', '/account/channel', { key: t.apiKey });
    expect(again.body.sandbox).toEqual(res.body.sandbox);
    expect(again.body.updatedAt).toBe(res.body.updatedAt);
  });

  it('refuses bad settings with the field named', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const cases: [unknown, string][] = [
      [{ provider: 'telegram' }, 'provider'],
      [{ provider: 'sandbox', sandbox: { deliveredAfterMs: -1 } }, 'sandbox.deliveredAfterMs'],
      [{ provider: 'sandbox', sandbox: { surprise: 1 } }, 'sandbox.surprise'],
      [{ provider: 'whatsapp_cloud' }, 'whatsapp'],
      [{ provider: 'sandbox', whatsapp: { phoneNumberId: '1', businessAccountId: '2' } }, 'whatsapp'],
      [
        { provider: 'whatsapp_cloud', whatsapp: { phoneNumberId: 'abc', businessAccountId: '2' } },
        'whatsapp.phoneNumberId',
      ],
      [
        {
          provider: 'whatsapp_cloud',
          whatsapp: { phoneNumberId: '1', businessAccountId: '2', accessToken: 'x' },
        },
        'whatsapp.appSecret',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await call(env.app, 'PUT', '/account/channel', { key: t.apiKey, body });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(
        res.body.error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    expect((await call(env.app, 'GET', '/account/channel', { key: t.apiKey })).body.updatedAt).toBeNull();
  });

  it('connects a WhatsApp number after Meta accepts its credentials, and never shows them again', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const business = fake.createBusiness({ throughputLevel: 'HIGH', messagingLimitTier: 'TIER_10K' });
    const res = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: whatsappBody(business),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.provider).toBe('whatsapp_cloud');
    expect(res.body.whatsapp).toEqual({
      phoneNumberId: business.phoneNumberId,
      businessAccountId: business.businessAccountId,
      displayPhoneNumber: business.displayPhoneNumber,
      verifiedName: business.verifiedName,
      throughputPerSecond: 1000,
      messagingLimitTier: 'TIER_10K',
      qualityRating: 'GREEN',
      lastQualityEvent: null,
      lastAccountUpdate: null,
      lastError: null,
      appId: null,
      needsReconnect: null,
      syncs: null,
      onboarding: null,
      callbackUrl: `http://tidings.test/api/v1/callbacks/whatsapp/${t.accountId}`,
    });
    const check = fake.requests.at(-1)!;
    expect(check.method).toBe('GET');
    expect(check.path).toContain(`/${business.phoneNumberId}`);
    expect(check.headers.authorization).toBe(`Bearer ${business.accessToken}`);
    const shown = await call(env.app, 'GET', '/account/channel', { key: t.apiKey });
    const text = JSON.stringify(shown.body);
    for (const secret of [business.accessToken, business.appSecret, business.verifyToken]) {
      expect(text).not.toContain(secret);
      expect(JSON.stringify(res.body)).not.toContain(secret);
    }
    const stored = await env.tdb.db.query<{ secrets_sealed: string }>(
      'SELECT secrets_sealed FROM account_channels WHERE account_id = $1',
      [t.accountId],
    );
    expect(stored.rows[0]!.secrets_sealed).toMatch(/^v1\./);
    expect(stored.rows[0]!.secrets_sealed).not.toContain(business.accessToken);
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).body.channel).toEqual({
      provider: 'whatsapp_cloud',
    });
  });

  it('keeps the stored credentials when the same number is saved again without them', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const business = fake.createBusiness();
    expect(
      (await call(env.app, 'PUT', '/account/channel', { key: t.apiKey, body: whatsappBody(business) }))
        .status,
    ).toBe(200);
    const again = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: {
        provider: 'whatsapp_cloud',
        whatsapp: { phoneNumberId: business.phoneNumberId, businessAccountId: business.businessAccountId },
        sandbox: { reviewAfterMs: 0 },
      },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.sandbox.reviewAfterMs).toBe(0);
    // The kept token still works: Meta was asked with it.
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${business.accessToken}`);
    const other = fake.createBusiness();
    const without = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: {
        provider: 'whatsapp_cloud',
        whatsapp: { phoneNumberId: other.phoneNumberId, businessAccountId: other.businessAccountId },
      },
    });
    expectError(without, 400, 'INVALID_REQUEST');
    expect(without.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'whatsapp.accessToken',
      'whatsapp.appSecret',
      'whatsapp.verifyToken',
    ]);
  });

  it('refuses credentials Meta refuses (400) and says when Meta cannot be reached (503); nothing is saved', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const business = fake.createBusiness();
    const wrong = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: whatsappBody(business, { accessToken: 'EAAG-not-the-token' }),
    });
    expectError(wrong, 400, 'INVALID_REQUEST');
    expect(wrong.body.error.details[0].issue).toContain('CHANNEL_UNAUTHORIZED');
    expect(JSON.stringify(wrong.body)).not.toContain('EAAG-not-the-token');
    fake.respond = () => graphError(2);
    try {
      const down = await call(env.app, 'PUT', '/account/channel', {
        key: t.apiKey,
        body: whatsappBody(business),
      });
      expectError(down, 503, 'SERVICE_UNAVAILABLE');
      expect(down.headers['retry-after']).toBe('5');
    } finally {
      fake.respond = undefined;
    }
    const shown = await call(env.app, 'GET', '/account/channel', { key: t.apiKey });
    expect(shown.body.provider).toBe('sandbox');
    expect(shown.body.updatedAt).toBeNull();
  });

  it('may not be changed with a sandbox key (403), but may be read', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const sandboxKey = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    const res = await call(env.app, 'PUT', '/account/channel', {
      key: sandboxKey.apiKey,
      body: { provider: 'sandbox' },
    });
    expectError(res, 403, 'FORBIDDEN');
    expect((await call(env.app, 'GET', '/account/channel', { key: sandboxKey.apiKey })).status).toBe(200);
  });

  it('switches back to the sandbox, dropping the WhatsApp credentials', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const business = fake.createBusiness();
    await call(env.app, 'PUT', '/account/channel', { key: t.apiKey, body: whatsappBody(business) });
    const back = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: { provider: 'sandbox' },
    });
    expect(back.status).toBe(200);
    expect(back.body.whatsapp).toBeNull();
    const stored = await env.tdb.db.query(
      'SELECT secrets_sealed FROM account_channels WHERE account_id = $1',
      [t.accountId],
    );
    expect(stored.rows[0]).toEqual({ secrets_sealed: null });
  });
});
