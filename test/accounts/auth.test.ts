// Authentication and access: which keys get in (401), what each kind of key may do (400/403/404),
// what the plan allows (402), that key text is never stored, and that a revocation or suspension made
// by one process is in force in every other within a second.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { generateKey } from '../../src/kernel/access/key-text.ts';
import { call, createAccountKey, provision, type Reply, tenant } from '../helpers/client.ts';
import { createTestApp, FakeClock } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({
  // Test-only probes of the plan-gated feature groups.
  beforeReady: (a) => {
    a.get('/api/v1/public/test/voice', { config: { access: 'account', feature: 'voice' } }, async () => ({
      ok: true,
    }));
    a.get(
      '/api/v1/public/test/automation',
      { config: { access: 'account', feature: 'automation' } },
      async () => ({
        ok: true,
      }),
    );
  },
});

const expectInvalidKey = (res: Reply) => expectError(res, 401, 'INVALID_API_KEY');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The same key with its last character changed: right shape, wrong checksum. */
function corrupt(key: string): string {
  const last = key.at(-1);
  return key.slice(0, -1) + (last === 'a' ? 'b' : 'a');
}

describe('keys that do not get in → 401 INVALID_API_KEY', () => {
  it('a missing key', async () => {
    expectInvalidKey(await call(env.app, 'GET', '/account'));
    expectInvalidKey(await call(env.app, 'GET', '/partner/accounts'));
    expectInvalidKey(await call(env.app, 'GET', '/account', { headers: { 'x-api-key': '' } }));
  });

  it('garbage and malformed keys', async () => {
    for (const key of [
      'hello',
      'tdg_live_',
      'tdg_live_short',
      'Bearer tdg_live_x',
      `tdg_admin_${'a'.repeat(38)}`,
    ]) {
      expectInvalidKey(await call(env.app, 'GET', '/account', { key }));
    }
  });

  it('a key with a valid prefix but a bad checksum, or a foreign prefix', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: corrupt(t.apiKey) }));
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: t.apiKey.replace(/^tdg_/, 'xyz_') }));
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: `${t.apiKey}0` }));
    expectInvalidKey(
      await call(env.app, 'GET', '/partner/accounts', { key: corrupt(env.partner.partnerKey) }),
    );
    // The real key still works.
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
  });

  it('a well-formed key (valid checksum) that was never issued', async () => {
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: generateKey('tdg_', 'live') }));
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: generateKey('tdg_', 'sandbox') }));
    expectInvalidKey(
      await call(env.app, 'GET', '/partner/accounts', { key: generateKey('tdg_', 'partner') }),
    );
  });

  it('a revoked key', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    const revoked = await call(env.app, 'DELETE', `/partner/accounts/${t.accountId}/keys/${t.keyId}`, {
      key: env.partner.partnerKey,
    });
    expect(revoked.status).toBe(204);
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: t.apiKey }));
    // Revoking twice is harmless and the key stays dead.
    expect(
      (
        await call(env.app, 'DELETE', `/partner/accounts/${t.accountId}/keys/${t.keyId}`, {
          key: env.partner.partnerKey,
        })
      ).status,
    ).toBe(204);
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: t.apiKey }));
  });

  it('an expired key (account and partner keys), on a clock the test moves', async () => {
    const clock = new FakeClock();
    const clockApp = await createTestApp(env.tdb.db, { now: clock.now });
    try {
      const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
      const t = await tenant(clockApp, env.partner.partnerKey, {}, { expiresAt });
      const partnerKey = await call(clockApp, 'POST', '/partner/keys', {
        key: env.partner.partnerKey,
        body: { name: 'temporary', expiresAt },
      });
      expect(partnerKey.status).toBe(201);
      expect(partnerKey.body.expiresAt).toBe(expiresAt);

      expect((await call(clockApp, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
      expect((await call(clockApp, 'GET', '/partner/keys', { key: partnerKey.body.apiKey })).status).toBe(
        200,
      );
      clock.advance(59_000);
      expect((await call(clockApp, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
      clock.advance(1_000); // exactly at expiresAt: no longer valid
      expectInvalidKey(await call(clockApp, 'GET', '/account', { key: t.apiKey }));
      expectInvalidKey(await call(clockApp, 'GET', '/partner/keys', { key: partnerKey.body.apiKey }));

      // A key cannot be made already expired.
      const past = await call(clockApp, 'POST', `/partner/accounts/${t.accountId}/keys`, {
        key: env.partner.partnerKey,
        body: { name: 'stale', expiresAt: new Date(clock.now().getTime() - 1).toISOString() },
      });
      expectError(past, 400, 'INVALID_REQUEST');
      expect(past.body.error.details).toEqual([{ field: 'expiresAt', issue: expect.any(String) }]);
    } finally {
      await clockApp.close();
    }
  });

  it('an expired key in real time', async () => {
    const expiresAt = new Date(Date.now() + 400).toISOString();
    const t = await tenant(env.app, env.partner.partnerKey, {}, { expiresAt });
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    await sleep(Date.parse(expiresAt) - Date.now() + 50);
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: t.apiKey }));
  });
});

describe('what each kind of key may do', () => {
  it('a standard key (live or sandbox) on /partner/* → 403 FORBIDDEN', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    for (const key of [t.apiKey, sandbox.apiKey]) {
      expectError(await call(env.app, 'GET', '/partner/accounts', { key }), 403, 'FORBIDDEN');
      expectError(await call(env.app, 'GET', '/partner/keys', { key }), 403, 'FORBIDDEN');
      expectError(await call(env.app, 'GET', `/partner/accounts/${t.accountId}`, { key }), 403, 'FORBIDDEN');
      expectError(
        await call(env.app, 'POST', `/partner/accounts/${t.accountId}/keys`, {
          key,
          body: { name: 'escalate' },
        }),
        403,
        'FORBIDDEN',
      );
    }
    // Nothing was created by those attempts.
    const keys = await call(env.app, 'GET', `/partner/accounts/${t.accountId}/keys`, {
      key: env.partner.partnerKey,
    });
    expect(keys.body.data).toHaveLength(2);
  });

  it('a partner key on GET /account without X-Account-Id → 400 naming X-Account-Id', async () => {
    const res = await call(env.app, 'GET', '/account', { key: env.partner.partnerKey });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field: 'X-Account-Id', issue: expect.any(String) }]);
  });

  it('a partner key with its own sub-account’s id → 200 and that account', async () => {
    const account = await provision(env.app, env.partner.partnerKey, {
      accountName: 'Acted on',
      planCode: 'business',
    });
    const res = await call(env.app, 'GET', '/account', {
      key: env.partner.partnerKey,
      accountId: account.accountId,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      accountId: account.accountId,
      accountName: 'Acted on',
      plan: { code: 'business' },
      keyScope: 'partner',
    });
    // An unknown account id is not found.
    expectError(
      await call(env.app, 'GET', '/account', {
        key: env.partner.partnerKey,
        accountId: 'acc_01jh0000000000000000000000',
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('a standard key with another account’s id → 403 FORBIDDEN; with its own → 200', async () => {
    const mine = await tenant(env.app, env.partner.partnerKey);
    const theirs = await tenant(env.app, env.partner.partnerKey);
    expectError(
      await call(env.app, 'GET', '/account', { key: mine.apiKey, accountId: theirs.accountId }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call(env.app, 'GET', '/account/wallet', { key: mine.apiKey, accountId: theirs.accountId }),
      403,
      'FORBIDDEN',
    );
    const own = await call(env.app, 'GET', '/account', { key: mine.apiKey, accountId: mine.accountId });
    expect(own.status).toBe(200);
    expect(own.body.accountId).toBe(mine.accountId);
    const plain = await call(env.app, 'GET', '/account', { key: mine.apiKey });
    expect(plain.body.accountId).toBe(mine.accountId);
  });
});

describe('plans and API access', () => {
  const keysOf = (accountId: string) => `/partner/accounts/${accountId}/keys`;

  it('free and starter accounts cannot get a key (402), and a partner key cannot act on them (402)', async () => {
    for (const planCode of ['free', 'starter']) {
      const account = await provision(env.app, env.partner.partnerKey, { planCode });
      const res = await call(env.app, 'POST', keysOf(account.accountId), {
        key: env.partner.partnerKey,
        body: { name: 'k' },
      });
      expectError(res, 402, 'PLAN_UPGRADE_REQUIRED');
      const listed = await call(env.app, 'GET', keysOf(account.accountId), { key: env.partner.partnerKey });
      expect(listed.body.data).toEqual([]);
      // A partner key acting on the sub-account is held to the sub-account's plan.
      expectError(
        await call(env.app, 'GET', '/account', { key: env.partner.partnerKey, accountId: account.accountId }),
        402,
        'PLAN_UPGRADE_REQUIRED',
      );
    }
  });

  it('pro needs the api_access add-on', async () => {
    const bare = await provision(env.app, env.partner.partnerKey, { planCode: 'pro' });
    expectError(
      await call(env.app, 'POST', keysOf(bare.accountId), {
        key: env.partner.partnerKey,
        body: { name: 'k' },
      }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );

    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'pro', addons: ['api_access'] });
    const self = await call(env.app, 'GET', '/account', { key: t.apiKey });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({
      plan: { code: 'pro' },
      addons: ['api_access'],
      features: ['api_access', 'automation'],
      limits: { requestsPerSecond: 10, monthlyQuota: 10_000, maxApiKeys: 2 },
    });

    // Taking the add-on away shuts the existing key out at once.
    const patched = await call(env.app, 'PATCH', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
      body: { addons: [] },
    });
    expect(patched.status).toBe(200);
    expectError(await call(env.app, 'GET', '/account', { key: t.apiKey }), 402, 'PLAN_UPGRADE_REQUIRED');
  });

  it('a downgrade from business to starter turns the existing key away with 402; an upgrade lets it back', async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    const down = await call(env.app, 'PATCH', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
      body: { planCode: 'starter' },
    });
    expect(down.status).toBe(200);
    expectError(await call(env.app, 'GET', '/account', { key: t.apiKey }), 402, 'PLAN_UPGRADE_REQUIRED');
    expectError(
      await call(env.app, 'GET', '/account/wallet', { key: t.apiKey }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );

    const up = await call(env.app, 'PATCH', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
      body: { planCode: 'business' },
    });
    expect(up.status).toBe(200);
    const self = await call(env.app, 'GET', '/account', { key: t.apiKey });
    expect(self.status).toBe(200);
    expect(self.body.plan.code).toBe('business');
  });

  it('pro with api_access allows 2 active keys; the third → 402 until one is revoked', async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'pro', addons: ['api_access'] });
    const second = await call(env.app, 'POST', keysOf(t.accountId), {
      key: env.partner.partnerKey,
      body: { name: 'second', scope: 'sandbox' },
    });
    expect(second.status).toBe(201);
    const third = await call(env.app, 'POST', keysOf(t.accountId), {
      key: env.partner.partnerKey,
      body: { name: 'third' },
    });
    expectError(third, 402, 'PLAN_UPGRADE_REQUIRED');
    expect(
      (await call(env.app, 'GET', keysOf(t.accountId), { key: env.partner.partnerKey })).body.data,
    ).toHaveLength(2);

    const revoked = await call(env.app, 'DELETE', `${keysOf(t.accountId)}/${t.keyId}`, {
      key: env.partner.partnerKey,
    });
    expect(revoked.status).toBe(204);
    const replacement = await call(env.app, 'POST', keysOf(t.accountId), {
      key: env.partner.partnerKey,
      body: { name: 'new' },
    });
    expect(replacement.status).toBe(201);
    expect((await call(env.app, 'GET', '/account', { key: replacement.body.apiKey })).status).toBe(200);
    expectError(
      await call(env.app, 'POST', keysOf(t.accountId), {
        key: env.partner.partnerKey,
        body: { name: 'fourth' },
      }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
  });

  it('feature groups: pro+api_access has automation but not voice; business has both', async () => {
    const pro = await tenant(env.app, env.partner.partnerKey, { planCode: 'pro', addons: ['api_access'] });
    expectError(await call(env.app, 'GET', '/test/voice', { key: pro.apiKey }), 402, 'PLAN_UPGRADE_REQUIRED');
    const proAutomation = await call(env.app, 'GET', '/test/automation', { key: pro.apiKey });
    expect(proAutomation.status).toBe(200);
    expect(proAutomation.body).toEqual({ ok: true });

    const business = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    for (const path of ['/test/voice', '/test/automation']) {
      const res = await call(env.app, 'GET', path, { key: business.apiKey });
      expect(res.status, path).toBe(200);
      expect(res.body).toEqual({ ok: true });
    }
  });
});

describe('key storage', () => {
  it('stores only a SHA-256 of the key text and its last four characters', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    const partnerKey = await call(env.app, 'POST', '/partner/keys', {
      key: env.partner.partnerKey,
      body: { name: 'stored' },
    });
    expect(partnerKey.status).toBe(201);
    const issued = [t.apiKey, sandbox.apiKey, partnerKey.body.apiKey, env.partner.partnerKey];

    const { rows } = await env.tdb.db.query<Record<string, unknown>>('SELECT * FROM api_keys');
    expect(rows.length).toBeGreaterThanOrEqual(issued.length);
    const stored = rows.map((row) =>
      Object.values(row).map((v) => (v instanceof Date ? v.toISOString() : String(v))),
    );
    for (const key of issued) {
      const secret = key.replace(/^tdg_(live|test|partner)_/, '');
      for (const values of stored) {
        for (const value of values) {
          expect(value).not.toContain(key);
          expect(value).not.toContain(secret);
          expect(value).not.toContain(secret.slice(0, 16));
        }
      }
      const hash = createHash('sha256').update(key).digest('hex');
      const row = rows.find((r) => r.key_hash === hash);
      expect(row, 'a row with the key’s SHA-256').toBeDefined();
      expect(row?.last_four).toBe(key.slice(-4));
    }
  });
});

// Each env.app caches keys and accounts for up to a second (auth.ts). Two apps on one database stand for
// two server processes: the one that makes a change forgets its cache at once, the other must
// follow within the second.
describe('changes made by another process take effect within a second', () => {
  let appB: App;

  beforeAll(async () => {
    appB = await createTestApp(env.tdb.db);
  });

  afterAll(async () => {
    await appB.close();
  });

  /** Calls GET /account on `target` until it answers `status`; returns the reply and the time taken. */
  async function pollUntil(target: App, key: string, status: number, since: number) {
    for (;;) {
      const res = await call(target, 'GET', '/account', { key });
      const elapsed = Date.now() - since;
      if (res.status === status || elapsed > 3000) return { res, elapsed };
      await sleep(5);
    }
  }

  it('a key revoked through env.app A is refused by env.app B within 1.1 s', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    // Both apps have the key cached.
    expect((await call(appB, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);

    const start = Date.now();
    const revoked = await call(env.app, 'DELETE', `/partner/accounts/${t.accountId}/keys/${t.keyId}`, {
      key: env.partner.partnerKey,
    });
    expect(revoked.status).toBe(204);
    expectInvalidKey(await call(env.app, 'GET', '/account', { key: t.apiKey }));

    const { res, elapsed } = await pollUntil(appB, t.apiKey, 401, start);
    expectInvalidKey(res);
    expect(elapsed).toBeLessThanOrEqual(1100);
  });

  it('a partner key revoked through env.app A is refused by env.app B within 1.1 s', async () => {
    const extra = await call(env.app, 'POST', '/partner/keys', {
      key: env.partner.partnerKey,
      body: { name: 'short-lived' },
    });
    expect(extra.status).toBe(201);
    expect((await call(appB, 'GET', '/partner/keys', { key: extra.body.apiKey })).status).toBe(200);

    const start = Date.now();
    expect(
      (await call(env.app, 'DELETE', `/partner/keys/${extra.body.id}`, { key: env.partner.partnerKey }))
        .status,
    ).toBe(204);
    let res: Reply;
    for (;;) {
      res = await call(appB, 'GET', '/partner/keys', { key: extra.body.apiKey });
      if (res.status === 401 || Date.now() - start > 3000) break;
      await sleep(5);
    }
    expectInvalidKey(res);
    expect(Date.now() - start).toBeLessThanOrEqual(1100);
  });

  it('an account suspended through env.app A is refused by env.app B within 1.1 s, and let back in after reactivation', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expect((await call(appB, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);

    const start = Date.now();
    const suspended = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/suspend`, {
      key: env.partner.partnerKey,
    });
    expect(suspended.status).toBe(200);
    expectError(await call(env.app, 'GET', '/account', { key: t.apiKey }), 403, 'ACCOUNT_SUSPENDED');

    const blocked = await pollUntil(appB, t.apiKey, 403, start);
    expectError(blocked.res, 403, 'ACCOUNT_SUSPENDED');
    expect(blocked.elapsed).toBeLessThanOrEqual(1100);

    const back = Date.now();
    const reactivated = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/reactivate`, {
      key: env.partner.partnerKey,
    });
    expect(reactivated.status).toBe(200);
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    const allowed = await pollUntil(appB, t.apiKey, 200, back);
    expect(allowed.res.status).toBe(200);
    expect(allowed.elapsed).toBeLessThanOrEqual(1100);
  });
});
