// The partner API: bootstrap, provisioning, the sub-account lifecycle, partner and sub-account keys,
// wallet credits, usage, and the wall between two partners.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { call, createAccountKey, otherPartner, provision, type Reply, tenant } from '../helpers/client.ts';
import { BOOTSTRAP_TOKEN, createTestApp, createTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

function fieldsOf(res: Reply): string[] {
  return (res.body.error.details ?? []).map((d: { field: string }) => d.field);
}

const ref = (name: string) => `${name}-${randomUUID()}`;
const KEY_INFO_FIELDS = [
  'createdAt',
  'expiresAt',
  'id',
  'lastFour',
  'lastUsedAt',
  'name',
  'revokedAt',
  'scope',
];

async function accountsWithRef(key: string, externalRef: string) {
  const res = await call(env.app, 'GET', '/partner/accounts', { key, query: { externalRef } });
  expect(res.status).toBe(200);
  return res.body.data as { accountId: string }[];
}

// Bootstrap happens once per installation, so it gets a database of its own: the rest of the file
// needs an installation that is already bootstrapped.
describe('bootstrap', () => {
  let bdb: TestDatabase;
  let bapp: App;

  beforeAll(async () => {
    bdb = await createTestDatabase();
    bapp = await createTestApp(bdb.db);
  });

  afterAll(async () => {
    await bapp.close();
    await bdb.drop();
  });

  const bootstrap = (authorization?: string) =>
    call(bapp, 'POST', '/partner/bootstrap', { headers: authorization ? { authorization } : {} });

  it('refuses a missing or wrong bearer token with 401 INVALID_BOOTSTRAP_TOKEN', async () => {
    expectError(await bootstrap(), 401, 'INVALID_BOOTSTRAP_TOKEN');
    expectError(await bootstrap('Bearer not-the-token'), 401, 'INVALID_BOOTSTRAP_TOKEN');
    expectError(await bootstrap(`Bearer ${BOOTSTRAP_TOKEN}x`), 401, 'INVALID_BOOTSTRAP_TOKEN');
    expectError(await bootstrap(`Basic ${BOOTSTRAP_TOKEN}`), 401, 'INVALID_BOOTSTRAP_TOKEN');
    expectError(await bootstrap(BOOTSTRAP_TOKEN), 401, 'INVALID_BOOTSTRAP_TOKEN');
    // None of those attempts used up the one bootstrap.
    const { rows } = await bdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM partners');
    expect(rows[0].n).toBe(0);
  });

  it('creates a working partner key once (shown once), then answers 409 ALREADY_BOOTSTRAPPED', async () => {
    const first = await bootstrap(`Bearer ${BOOTSTRAP_TOKEN}`);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: expect.any(String),
      scope: 'partner',
      apiKey: expect.stringMatching(/^tdg_partner_[0-9A-Za-z]{38}$/),
      createdAt: expect.any(String),
      expiresAt: null,
      partnerId: expect.stringMatching(/^ptn_/),
    });
    const apiKey: string = first.body.apiKey;

    // The key works, and the listing shows its last four characters but never the key itself.
    const keys = await call(bapp, 'GET', '/partner/keys', { key: apiKey });
    expect(keys.status).toBe(200);
    expect(keys.body.data).toHaveLength(1);
    expect(Object.keys(keys.body.data[0]).sort()).toEqual(KEY_INFO_FIELDS);
    expect(keys.body.data[0]).toMatchObject({
      id: first.body.id,
      scope: 'partner',
      lastFour: apiKey.slice(-4),
    });
    expect(keys.raw.body).not.toContain(apiKey);
    expect(keys.raw.body).not.toContain(apiKey.slice('tdg_partner_'.length));

    const provisioned = await call(bapp, 'POST', '/partner/accounts', {
      key: apiKey,
      body: { accountName: 'First', countryCode: 'US', planCode: 'business' },
    });
    expect(provisioned.status).toBe(201);

    expectError(await bootstrap(`Bearer ${BOOTSTRAP_TOKEN}`), 409, 'ALREADY_BOOTSTRAPPED');
    // The second call made no second partner and no second key.
    const { rows } = await bdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM partners');
    expect(rows[0].n).toBe(1);
    const after = await call(bapp, 'GET', '/partner/keys', { key: apiKey });
    expect(after.body.data).toHaveLength(1);
  });
});

describe('provisioning', () => {
  it('takes the published provisioning body and answers 201 with an ACTIVE acc_ account', async () => {
    const externalRef = ref('crm');
    const res = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: { accountName: 'Acme Dental', countryCode: 'US', planCode: 'business', externalRef },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      accountId: expect.stringMatching(/^acc_[0-9a-z]{26}$/),
      accountName: 'Acme Dental',
      countryCode: 'US',
      planCode: 'business',
      addons: [],
      externalRef,
      status: 'ACTIVE',
      walletBalance: { amount: '0.0000', currency: 'USD' },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      closedAt: null,
    });
    const got = await call(env.app, 'GET', `/partner/accounts/${res.body.accountId}`, {
      key: env.partner.partnerKey,
    });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('rejects countries that are not ISO 3166-1 codes, naming countryCode, and creates nothing', async () => {
    for (const countryCode of ['XX', 'ZZ', 'USA', '1A', '']) {
      const externalRef = ref('bad-country');
      const res = await call(env.app, 'POST', '/partner/accounts', {
        key: env.partner.partnerKey,
        body: { accountName: 'Nowhere', countryCode, planCode: 'pro', externalRef },
      });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(fieldsOf(res)).toEqual(['countryCode']);
      expect(await accountsWithRef(env.partner.partnerKey, externalRef)).toEqual([]);
    }
  });

  it('normalises a lowercase country code to upper case', async () => {
    const account = await provision(env.app, env.partner.partnerKey, { countryCode: 'us' });
    const got = await call(env.app, 'GET', `/partner/accounts/${account.accountId}`, {
      key: env.partner.partnerKey,
    });
    expect(got.body.countryCode).toBe('US');
  });

  it('rejects an unknown plan, naming planCode', async () => {
    const res = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: { accountName: 'Gold', countryCode: 'US', planCode: 'gold', externalRef: ref('gold') },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['planCode']);
  });

  it('lists every missing required field', async () => {
    const res = await call(env.app, 'POST', '/partner/accounts', { key: env.partner.partnerKey, body: {} });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'accountName', issue: 'is required' },
        { field: 'countryCode', issue: 'is required' },
        { field: 'planCode', issue: 'is required' },
      ]),
    );
    const noBody = await call(env.app, 'POST', '/partner/accounts', { key: env.partner.partnerKey });
    expectError(noBody, 400, 'INVALID_REQUEST');
  });

  it('rejects a duplicate externalRef with 409 CONFLICT and creates nothing', async () => {
    const externalRef = ref('dup');
    const first = await provision(env.app, env.partner.partnerKey, { externalRef });
    const again = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: { accountName: 'Twin', countryCode: 'GB', planCode: 'pro', externalRef },
    });
    expectError(again, 409, 'CONFLICT');
    expect(fieldsOf(again)).toEqual(['externalRef']);
    const listed = await accountsWithRef(env.partner.partnerKey, externalRef);
    expect(listed.map((a) => a.accountId)).toEqual([first.accountId]);
  });

  it('allows the same externalRef for a different partner', async () => {
    const externalRef = ref('shared');
    const other = await otherPartner(env.tdb.db);
    const mine = await provision(env.app, env.partner.partnerKey, { externalRef });
    const theirs = await provision(env.app, other.partnerKey, { externalRef });
    expect(theirs.accountId).not.toBe(mine.accountId);
    expect((await accountsWithRef(env.partner.partnerKey, externalRef)).map((a) => a.accountId)).toEqual([
      mine.accountId,
    ]);
    expect((await accountsWithRef(other.partnerKey, externalRef)).map((a) => a.accountId)).toEqual([
      theirs.accountId,
    ]);
  });
});

describe('listing accounts', () => {
  it('pages newest first without repeating or skipping while accounts are added between pages', async () => {
    // A partner of its own, so the list holds exactly what this test made.
    const p = await otherPartner(env.tdb.db);
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push((await provision(env.app, p.partnerKey)).accountId);
    const expected = [...made].reverse();

    const seen: string[] = [];
    const added: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query: Record<string, string> = { limit: '2', ...(cursor ? { cursor } : {}) };
      const res = await call(env.app, 'GET', '/partner/accounts', { key: p.partnerKey, query });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((a: { accountId: string }) => a.accountId));
      cursor = res.body.nextCursor ?? undefined;
      pages++;
      // Someone provisions while we page.
      added.push((await provision(env.app, p.partnerKey)).accountId);
    } while (cursor && pages < 10);

    expect(pages).toBe(3); // 6 rows at 2 a page, and no empty trailing page
    expect(seen).toEqual(expected);
    for (const id of added) expect(seen).not.toContain(id);

    // A fresh first page starts with what was added meanwhile.
    const fresh = await call(env.app, 'GET', '/partner/accounts', {
      key: p.partnerKey,
      query: { limit: '3' },
    });
    expect(fresh.body.data.map((a: { accountId: string }) => a.accountId)).toEqual([...added].reverse());
  });

  it('filters by status and externalRef', async () => {
    const p = await otherPartner(env.tdb.db);
    const active = await provision(env.app, p.partnerKey, { externalRef: 'filter-a' });
    const suspended = await provision(env.app, p.partnerKey, { externalRef: 'filter-b' });
    const closed = await provision(env.app, p.partnerKey, { externalRef: 'filter-c' });
    expect(
      (await call(env.app, 'POST', `/partner/accounts/${suspended.accountId}/suspend`, { key: p.partnerKey }))
        .status,
    ).toBe(200);
    expect(
      (await call(env.app, 'DELETE', `/partner/accounts/${closed.accountId}`, { key: p.partnerKey })).status,
    ).toBe(204);

    const ids = async (query: Record<string, string>) => {
      const res = await call(env.app, 'GET', '/partner/accounts', { key: p.partnerKey, query });
      expect(res.status).toBe(200);
      return res.body.data.map((a: { accountId: string }) => a.accountId);
    };
    expect(await ids({ status: 'ACTIVE' })).toEqual([active.accountId]);
    expect(await ids({ status: 'SUSPENDED' })).toEqual([suspended.accountId]);
    expect(await ids({ status: 'CLOSED' })).toEqual([closed.accountId]);
    expect(await ids({ externalRef: 'filter-a' })).toEqual([active.accountId]);
    expect(await ids({ externalRef: 'filter-b', status: 'ACTIVE' })).toEqual([]);
    expect(await ids({ externalRef: 'no-such-ref' })).toEqual([]);
    expect(await ids({})).toHaveLength(3);

    const bad = await call(env.app, 'GET', '/partner/accounts', {
      key: p.partnerKey,
      query: { status: 'DELETED' },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(fieldsOf(bad)).toEqual(['status']);
  });
});

describe('reading and changing an account', () => {
  it('GET of an unknown account → 404 RESOURCE_NOT_FOUND', async () => {
    const res = await call(env.app, 'GET', '/partner/accounts/acc_01jh0000000000000000000000', {
      key: env.partner.partnerKey,
    });
    expectError(res, 404, 'RESOURCE_NOT_FOUND');
  });

  it('PATCH changes name, plan, add-ons and externalRef, and the account itself sees the change', async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    const externalRef = ref('renamed');
    const res = await call(env.app, 'PATCH', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
      body: { accountName: 'Renamed', planCode: 'pro', addons: ['api_access'], externalRef },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      accountId: t.accountId,
      accountName: 'Renamed',
      planCode: 'pro',
      addons: ['api_access'],
      externalRef,
      status: 'ACTIVE',
    });
    expect(
      await call(env.app, 'GET', `/partner/accounts/${t.accountId}`, { key: env.partner.partnerKey }),
    ).toMatchObject({
      body: res.body,
    });
    const self = await call(env.app, 'GET', '/account', { key: t.apiKey });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({
      accountName: 'Renamed',
      plan: { code: 'pro' },
      addons: ['api_access'],
    });

    // A partial PATCH leaves the other fields alone; externalRef can be cleared with null.
    const partial = await call(env.app, 'PATCH', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
      body: { externalRef: null },
    });
    expect(partial.status).toBe(200);
    expect(partial.body).toMatchObject({ accountName: 'Renamed', planCode: 'pro', externalRef: null });
  });

  it('PATCH refuses an empty body, bad values and another account’s externalRef', async () => {
    const a = await provision(env.app, env.partner.partnerKey);
    const taken = ref('taken');
    await provision(env.app, env.partner.partnerKey, { externalRef: taken });
    const patch = (body: unknown) =>
      call(env.app, 'PATCH', `/partner/accounts/${a.accountId}`, { key: env.partner.partnerKey, body });

    expectError(await patch({}), 400, 'INVALID_REQUEST');
    const badPlan = await patch({ planCode: 'gold' });
    expectError(badPlan, 400, 'INVALID_REQUEST');
    expect(fieldsOf(badPlan)).toEqual(['planCode']);
    expectError(await patch({ addons: ['teleport'] }), 400, 'INVALID_REQUEST');
    expectError(await patch({ status: 'CLOSED' }), 400, 'INVALID_REQUEST');
    const dup = await patch({ externalRef: taken });
    expectError(dup, 409, 'CONFLICT');
    expect(fieldsOf(dup)).toEqual(['externalRef']);

    const got = await call(env.app, 'GET', `/partner/accounts/${a.accountId}`, {
      key: env.partner.partnerKey,
    });
    expect(got.body).toMatchObject({ planCode: 'scale', accountName: 'Test account', status: 'ACTIVE' });
  });
});

describe('account status', () => {
  it('suspend: the account’s keys get 403 ACCOUNT_SUSPENDED; reactivate lets them in again', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);

    const suspended = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/suspend`, {
      key: env.partner.partnerKey,
    });
    expect(suspended.status).toBe(200);
    expect(suspended.body).toMatchObject({ accountId: t.accountId, status: 'SUSPENDED', closedAt: null });
    // This env.app made the change, so it enforces it at once, for every key of the account.
    expectError(await call(env.app, 'GET', '/account', { key: t.apiKey }), 403, 'ACCOUNT_SUSPENDED');
    expectError(await call(env.app, 'GET', '/account', { key: sandbox.apiKey }), 403, 'ACCOUNT_SUSPENDED');
    expectError(
      await call(env.app, 'GET', '/account', { key: env.partner.partnerKey, accountId: t.accountId }),
      403,
      'ACCOUNT_SUSPENDED',
    );
    // Suspending again changes nothing.
    const again = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/suspend`, {
      key: env.partner.partnerKey,
    });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('SUSPENDED');

    const reactivated = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/reactivate`, {
      key: env.partner.partnerKey,
    });
    expect(reactivated.status).toBe(200);
    expect(reactivated.body.status).toBe('ACTIVE');
    const self = await call(env.app, 'GET', '/account', { key: t.apiKey });
    expect(self.status).toBe(200);
    expect(self.body.status).toBe('ACTIVE');
  });

  it('DELETE closes for good: 204, CLOSED with closedAt, keys get 403, no way back', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const path = `/partner/accounts/${t.accountId}`;
    const closed = await call(env.app, 'DELETE', path, { key: env.partner.partnerKey });
    expect(closed.status).toBe(204);
    expect(closed.raw.body).toBe('');

    const got = await call(env.app, 'GET', path, { key: env.partner.partnerKey });
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('CLOSED');
    expect(Date.parse(got.body.closedAt)).not.toBeNaN();
    expectError(await call(env.app, 'GET', '/account', { key: t.apiKey }), 403, 'ACCOUNT_SUSPENDED');

    const key = env.partner.partnerKey;
    expectError(await call(env.app, 'POST', `${path}/reactivate`, { key }), 409, 'CONFLICT');
    expectError(await call(env.app, 'POST', `${path}/suspend`, { key }), 409, 'CONFLICT');
    expectError(await call(env.app, 'PATCH', path, { key, body: { accountName: 'Back' } }), 409, 'CONFLICT');
    expectError(
      await call(env.app, 'POST', `${path}/keys`, { key, body: { name: 'late' } }),
      409,
      'CONFLICT',
    );
    expect((await call(env.app, 'GET', path, { key })).body).toMatchObject({
      status: 'CLOSED',
      accountName: 'Test account',
    });
    expectError(await call(env.app, 'GET', '/account', { key: t.apiKey }), 403, 'ACCOUNT_SUSPENDED');
  });
});

describe('partner keys', () => {
  it('creates a key shown once, lists keys by last four, and a revoked key gets 401', async () => {
    const created = await call(env.app, 'POST', '/partner/keys', {
      key: env.partner.partnerKey,
      body: { name: 'ci' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'ci',
      scope: 'partner',
      apiKey: expect.stringMatching(/^tdg_partner_[0-9A-Za-z]{38}$/),
      createdAt: expect.any(String),
      expiresAt: null,
    });
    const newKey: string = created.body.apiKey;
    expect(newKey).not.toBe(env.partner.partnerKey);

    // The new key works on its own.
    const listed = await call(env.app, 'GET', '/partner/keys', { key: newKey });
    expect(listed.status).toBe(200);
    const entry = listed.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(entry).toMatchObject({
      name: 'ci',
      scope: 'partner',
      lastFour: newKey.slice(-4),
      revokedAt: null,
    });
    for (const k of listed.body.data) expect(Object.keys(k).sort()).toEqual(KEY_INFO_FIELDS);
    expect(listed.raw.body).not.toContain(newKey);
    expect(listed.raw.body).not.toContain(env.partner.partnerKey);

    const revoked = await call(env.app, 'DELETE', `/partner/keys/${created.body.id}`, {
      key: env.partner.partnerKey,
    });
    expect(revoked.status).toBe(204);
    expectError(await call(env.app, 'GET', '/partner/keys', { key: newKey }), 401, 'INVALID_API_KEY');
    const after = await call(env.app, 'GET', '/partner/keys', { key: env.partner.partnerKey });
    const gone = after.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(Date.parse(gone.revokedAt)).not.toBeNaN();

    expectError(
      await call(env.app, 'DELETE', '/partner/keys/key_01jh0000000000000000000000', {
        key: env.partner.partnerKey,
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('refuses to revoke the last active partner key (409), and a key may revoke itself when another exists', async () => {
    const p = await otherPartner(env.tdb.db);
    const own = await call(env.app, 'GET', '/partner/keys', { key: p.partnerKey });
    expect(own.body.data).toHaveLength(1);
    const onlyId = own.body.data[0].id;

    expectError(
      await call(env.app, 'DELETE', `/partner/keys/${onlyId}`, { key: p.partnerKey }),
      409,
      'CONFLICT',
    );
    expect((await call(env.app, 'GET', '/partner/keys', { key: p.partnerKey })).status).toBe(200);

    const second = await call(env.app, 'POST', '/partner/keys', {
      key: p.partnerKey,
      body: { name: 'second' },
    });
    expect(second.status).toBe(201);
    expect((await call(env.app, 'DELETE', `/partner/keys/${onlyId}`, { key: p.partnerKey })).status).toBe(
      204,
    );
    expectError(await call(env.app, 'GET', '/partner/keys', { key: p.partnerKey }), 401, 'INVALID_API_KEY');
    // Now the second key is the last one.
    expectError(
      await call(env.app, 'DELETE', `/partner/keys/${second.body.id}`, { key: second.body.apiKey }),
      409,
      'CONFLICT',
    );
    expect((await call(env.app, 'GET', '/partner/keys', { key: second.body.apiKey })).status).toBe(200);
  });
});

describe('sub-account keys', () => {
  it('creates live and sandbox keys, lists them by last four, and revokes one', async () => {
    const account = await provision(env.app, env.partner.partnerKey);
    const keysPath = `/partner/accounts/${account.accountId}/keys`;
    const live = await call(env.app, 'POST', keysPath, {
      key: env.partner.partnerKey,
      body: { name: 'server', scope: 'live' },
    });
    const sandbox = await call(env.app, 'POST', keysPath, {
      key: env.partner.partnerKey,
      body: { name: 'dev', scope: 'sandbox' },
    });
    const byDefault = await call(env.app, 'POST', keysPath, {
      key: env.partner.partnerKey,
      body: { name: 'default' },
    });
    expect(live.status).toBe(201);
    expect(sandbox.status).toBe(201);
    expect(byDefault.status).toBe(201);
    expect(live.body).toMatchObject({
      scope: 'live',
      name: 'server',
      apiKey: expect.stringMatching(/^tdg_live_/),
    });
    expect(sandbox.body).toMatchObject({
      scope: 'sandbox',
      name: 'dev',
      apiKey: expect.stringMatching(/^tdg_sandbox_/),
    });
    expect(byDefault.body).toMatchObject({ scope: 'live', apiKey: expect.stringMatching(/^tdg_live_/) });

    for (const [key, scope] of [
      [live.body.apiKey, 'live'],
      [sandbox.body.apiKey, 'sandbox'],
    ]) {
      const self = await call(env.app, 'GET', '/account', { key });
      expect(self.status).toBe(200);
      expect(self.body).toMatchObject({ accountId: account.accountId, keyScope: scope });
    }

    const listed = await call(env.app, 'GET', keysPath, { key: env.partner.partnerKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((k: { id: string }) => k.id).sort()).toEqual(
      [live.body.id, sandbox.body.id, byDefault.body.id].sort(),
    );
    for (const k of listed.body.data) expect(Object.keys(k).sort()).toEqual(KEY_INFO_FIELDS);
    expect(listed.body.data.find((k: { id: string }) => k.id === sandbox.body.id).lastFour).toBe(
      sandbox.body.apiKey.slice(-4),
    );
    for (const created of [live, sandbox, byDefault])
      expect(listed.raw.body).not.toContain(created.body.apiKey);

    expect(
      (await call(env.app, 'DELETE', `${keysPath}/${sandbox.body.id}`, { key: env.partner.partnerKey }))
        .status,
    ).toBe(204);
    expectError(await call(env.app, 'GET', '/account', { key: sandbox.body.apiKey }), 401, 'INVALID_API_KEY');
    expect((await call(env.app, 'GET', '/account', { key: live.body.apiKey })).status).toBe(200);
    const after = await call(env.app, 'GET', keysPath, { key: env.partner.partnerKey });
    expect(after.body.data.find((k: { id: string }) => k.id === sandbox.body.id).revokedAt).not.toBeNull();
  });

  it('refuses a partner scope, and a key id of another account through this account’s path', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await provision(env.app, env.partner.partnerKey);
    const asPartner = await call(env.app, 'POST', `/partner/accounts/${b.accountId}/keys`, {
      key: env.partner.partnerKey,
      body: { name: 'sneaky', scope: 'partner' },
    });
    expectError(asPartner, 400, 'INVALID_REQUEST');
    expect(fieldsOf(asPartner)).toContain('scope');

    const wrongPath = await call(env.app, 'DELETE', `/partner/accounts/${b.accountId}/keys/${a.keyId}`, {
      key: env.partner.partnerKey,
    });
    expectError(wrongPath, 404, 'RESOURCE_NOT_FOUND');
    expect((await call(env.app, 'GET', '/account', { key: a.apiKey })).status).toBe(200);
  });
});

describe('wallet credits', () => {
  it('credits "25.50": 201 with the transaction, and the account sees a balance of "25.5000"', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/wallet/credits`, {
      key: env.partner.partnerKey,
      body: { amount: '25.50', reference: 'inv-1' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^txn_/),
      type: 'credit',
      amount: { amount: '25.5000', currency: 'USD' },
      balanceAfter: { amount: '25.5000', currency: 'USD' },
      reference: 'inv-1',
      description: null,
      createdAt: expect.any(String),
    });
    const wallet = await call(env.app, 'GET', '/account/wallet', { key: t.apiKey });
    expect(wallet.status).toBe(200);
    expect(wallet.body.balance).toEqual({ amount: '25.5000', currency: 'USD' });

    const second = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/wallet/credits`, {
      key: env.partner.partnerKey,
      body: { amount: '0.0001', currency: 'USD' },
    });
    expect(second.status).toBe(201);
    expect(second.body.balanceAfter.amount).toBe('25.5001');
    const txns = await call(env.app, 'GET', '/account/wallet/transactions', { key: t.apiKey });
    expect(txns.body.data.map((x: { id: string }) => x.id)).toEqual([second.body.id, res.body.id]);
  });

  it('rejects bad amounts and a foreign currency with 400, changing nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const credit = (body: unknown) =>
      call(env.app, 'POST', `/partner/accounts/${t.accountId}/wallet/credits`, {
        key: env.partner.partnerKey,
        body,
      });
    for (const amount of ['0', '0.000000', '-1', 'abc', '1.1234567', '1e3', '', ' 5']) {
      const res = await credit({ amount });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(fieldsOf(res), `amount ${JSON.stringify(amount)}`).toEqual(['amount']);
    }
    const asNumber = await credit({ amount: 25.5 });
    expectError(asNumber, 400, 'INVALID_REQUEST');
    expect(fieldsOf(asNumber)).toEqual(['amount']);
    expectError(await credit({}), 400, 'INVALID_REQUEST');
    const currency = await credit({ amount: '10.00', currency: 'EUR' });
    expectError(currency, 400, 'INVALID_REQUEST');
    expect(fieldsOf(currency)).toEqual(['currency']);

    const wallet = await call(env.app, 'GET', '/account/wallet', { key: t.apiKey });
    expect(wallet.body.balance.amount).toBe('0.0000');
    expect((await call(env.app, 'GET', '/account/wallet/transactions', { key: t.apiKey })).body.data).toEqual(
      [],
    );
  });

  it('refuses to credit a closed account with 409', async () => {
    const account = await provision(env.app, env.partner.partnerKey);
    expect(
      (
        await call(env.app, 'DELETE', `/partner/accounts/${account.accountId}`, {
          key: env.partner.partnerKey,
        })
      ).status,
    ).toBe(204);
    const res = await call(env.app, 'POST', `/partner/accounts/${account.accountId}/wallet/credits`, {
      key: env.partner.partnerKey,
      body: { amount: '5.00' },
    });
    expectError(res, 409, 'CONFLICT');
    const got = await call(env.app, 'GET', `/partner/accounts/${account.accountId}`, {
      key: env.partner.partnerKey,
    });
    expect(got.body.walletBalance.amount).toBe('0.0000');
  });
});

describe('usage', () => {
  it('reports the sub-account’s calls per day', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const empty = await call(env.app, 'GET', `/partner/accounts/${t.accountId}/usage`, {
      key: env.partner.partnerKey,
    });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ totalCalls: 0, days: [] });

    for (let i = 0; i < 3; i++)
      expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const res = await call(env.app, 'GET', `/partner/accounts/${t.accountId}/usage`, {
      key: env.partner.partnerKey,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      from: `${today.slice(0, 7)}-01`,
      to: today,
      totalCalls: 3,
      days: [{ date: today, calls: 3 }],
    });

    const reversed = await call(env.app, 'GET', `/partner/accounts/${t.accountId}/usage`, {
      key: env.partner.partnerKey,
      query: { from: '2026-02-01', to: '2026-01-01' },
    });
    expectError(reversed, 400, 'INVALID_REQUEST');
  });
});

describe('isolation between partners', () => {
  it('every /partner/accounts/{id} route answers 404 for another partner’s account, changing nothing', async () => {
    const other = await otherPartner(env.tdb.db);
    const victim = await tenant(env.app, env.partner.partnerKey, { accountName: 'Victim' });
    const base = `/partner/accounts/${victim.accountId}`;
    const key = other.partnerKey;

    const attempts: [string, () => Promise<Reply>][] = [
      ['get', () => call(env.app, 'GET', base, { key })],
      ['patch', () => call(env.app, 'PATCH', base, { key, body: { accountName: 'Hijacked' } })],
      ['delete', () => call(env.app, 'DELETE', base, { key })],
      ['suspend', () => call(env.app, 'POST', `${base}/suspend`, { key })],
      ['reactivate', () => call(env.app, 'POST', `${base}/reactivate`, { key })],
      ['create key', () => call(env.app, 'POST', `${base}/keys`, { key, body: { name: 'stolen' } })],
      ['list keys', () => call(env.app, 'GET', `${base}/keys`, { key })],
      ['revoke key', () => call(env.app, 'DELETE', `${base}/keys/${victim.keyId}`, { key })],
      ['credit', () => call(env.app, 'POST', `${base}/wallet/credits`, { key, body: { amount: '1.00' } })],
      ['usage', () => call(env.app, 'GET', `${base}/usage`, { key })],
    ];
    for (const [name, attempt] of attempts) {
      const res = await attempt();
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(404);
      expectError(res, 404, 'RESOURCE_NOT_FOUND');
    }

    // The victim is exactly as it was: same name, still active, no money, only its own key, which works.
    const got = await call(env.app, 'GET', base, { key: env.partner.partnerKey });
    expect(got.body).toMatchObject({
      accountName: 'Victim',
      status: 'ACTIVE',
      walletBalance: { amount: '0.0000' },
    });
    const keys = await call(env.app, 'GET', `${base}/keys`, { key: env.partner.partnerKey });
    expect(keys.body.data.map((k: { id: string }) => k.id)).toEqual([victim.keyId]);
    expect((await call(env.app, 'GET', '/account', { key: victim.apiKey })).status).toBe(200);

    // Nor does it show in the other partner's list.
    const list = await call(env.app, 'GET', '/partner/accounts', { key, query: { limit: '100' } });
    expect(list.body.data.map((a: { accountId: string }) => a.accountId)).not.toContain(victim.accountId);
  });

  it('a partner key naming another partner’s account in X-Account-Id gets 404', async () => {
    const other = await otherPartner(env.tdb.db);
    const theirs = await provision(env.app, other.partnerKey);
    const res = await call(env.app, 'GET', '/account', {
      key: env.partner.partnerKey,
      accountId: theirs.accountId,
    });
    expectError(res, 404, 'RESOURCE_NOT_FOUND');
    // The owner may.
    const own = await call(env.app, 'GET', '/account', {
      key: other.partnerKey,
      accountId: theirs.accountId,
    });
    expect(own.status).toBe(200);
    expect(own.body.accountId).toBe(theirs.accountId);
  });

  it('a partner cannot revoke another partner’s partner key', async () => {
    const other = await otherPartner(env.tdb.db);
    const extra = await call(env.app, 'POST', '/partner/keys', {
      key: other.partnerKey,
      body: { name: 'extra' },
    });
    expect(extra.status).toBe(201);
    const res = await call(env.app, 'DELETE', `/partner/keys/${extra.body.id}`, {
      key: env.partner.partnerKey,
    });
    expectError(res, 404, 'RESOURCE_NOT_FOUND');
    expect((await call(env.app, 'GET', '/partner/keys', { key: extra.body.apiKey })).status).toBe(200);
  });
});
