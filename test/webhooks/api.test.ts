// The webhook subscription API through HTTP: creating, reading, listing, changing, deleting and
// rotating webhooks of an account (/webhooks) and of a partner (/partner/webhooks), the walls
// between tenants, and the wallet's low-balance threshold that wallet.low_balance events use.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/kernel/outbound/egress.ts';
import { call, otherPartner, type Partner, type Reply, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

// Public-looking names resolve through this table only; anything else does not resolve.
const DNS: Record<string, string[]> = { 'hooks.example.com': ['93.184.216.34'] };
const resolver: Resolver = async (host) => {
  const found = DNS[host];
  if (!found) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
  return found;
};

// No dispatcher runs in this file: deliveries made by /test stay pending, nothing is sent.
const env = useTestApp({ config: { webhookAllowedHosts: ['127.0.0.1'] }, resolver });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const WEBHOOK_FIELDS = [
  'createdAt',
  'description',
  'disabledReason',
  'enabled',
  'events',
  'id',
  'previousSecretExpiresAt',
  'updatedAt',
  'url',
];

let n = 0;
/** A distinct allow-listed URL (nothing listens there; nothing is delivered in this file). */
const hookUrl = () => `http://127.0.0.1:9/hooks/${++n}`;

const ownSecret = (bytes = 32) => `whsec_${randomBytes(bytes).toString('base64')}`;

function fieldsOf(res: Reply): string[] {
  return (res.body.error?.details ?? []).map((d: { field: string }) => d.field);
}

async function createOk(
  key: string,
  body: Record<string, unknown> = {},
  base = '/webhooks',
  accountId?: string,
) {
  const res = await call(env.app, 'POST', base, { key, accountId, body: { url: hookUrl(), ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function listAll(key: string, query: Record<string, string> = {}, base = '/webhooks') {
  const res = await call(env.app, 'GET', base, { key, query: { limit: '100', ...query } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: string; enabled: boolean }[];
}

describe('creating a webhook', () => {
  it('answers 201 with the full resource and a generated whsec_ secret', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const url = hookUrl();
    const before = Date.now();
    const res = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url, events: ['message.*', 'contact.created'], description: 'CRM sync' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whk_[0-9a-z]{26}$/),
      url,
      description: 'CRM sync',
      events: ['message.*', 'contact.created'],
      enabled: true,
      disabledReason: null,
      previousSecretExpiresAt: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/),
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
    // Enough key material for HMAC-SHA256, within what the Standard Webhooks scheme allows.
    const keyBytes = Buffer.from(res.body.secret.slice('whsec_'.length), 'base64').length;
    expect(keyBytes).toBeGreaterThanOrEqual(24);
    expect(keyBytes).toBeLessThanOrEqual(64);

    const again = await createOk(t.apiKey);
    expect(again.secret).not.toBe(res.body.secret);
    expect(again.id).not.toBe(res.body.id);
  });

  it('defaults to enabled, no description and every event', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: hookUrl() } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ events: ['*'], enabled: true, description: null, disabledReason: null });
    const got = await call(env.app, 'GET', `/webhooks/${res.body.id}`, { key: t.apiKey });
    expect(got.body.events).toEqual(['*']);
  });

  it('stores the filters as given, without duplicates', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const body = await createOk(t.apiKey, {
      events: ['wallet.low_balance', 'message.*', 'wallet.low_balance', 'webhook.test', 'message.*'],
    });
    expect(body.events).toEqual(['wallet.low_balance', 'message.*', 'webhook.test']);
    const got = await call(env.app, 'GET', `/webhooks/${body.id}`, { key: t.apiKey });
    expect(got.body.events).toEqual(['wallet.low_balance', 'message.*', 'webhook.test']);
  });

  it('accepts every documented event type, family and *', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const events = [
      '*',
      'message.*',
      'contact.*',
      'conversation.*',
      'template.status_changed',
      'bulk_job.completed',
      'wallet.credited',
      'account.status_changed',
      'call.status_changed',
      'campaign.status_changed',
      'journey_run.completed',
      'message.received',
      'contact.untagged',
      'conversation.assigned',
    ];
    expect((await createOk(t.apiKey, { events })).events).toEqual(events);
  });

  it('can be created disabled', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const body = await createOk(t.apiKey, { enabled: false });
    expect(body.enabled).toBe(false);
    expect(body.disabledReason).toBe('disabled by you');
    const test = await call(env.app, 'POST', `/webhooks/${body.id}/test`, { key: t.apiKey });
    expectError(test, 409, 'CONFLICT');
  });

  it("accepts the subscriber's own secret and returns it", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const secret of [ownSecret(32), ownSecret(24), ownSecret(64)]) {
      const body = await createOk(t.apiKey, { secret });
      expect(body.secret).toBe(secret);
    }
  });

  it('accepts an https URL on a host that resolves to a public address', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const body = await createOk(t.apiKey, { url: 'https://hooks.example.com/tidings?x=1' });
    expect(body.url).toBe('https://hooks.example.com/tidings?x=1');
  });

  it('never shows the secret again: not in GET, not in the list', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const secret = ownSecret();
    const created = await createOk(t.apiKey, { secret });
    const got = await call(env.app, 'GET', `/webhooks/${created.id}`, { key: t.apiKey });
    expect(got.status).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(WEBHOOK_FIELDS);
    expect(got.raw.body).not.toContain(secret.slice('whsec_'.length));
    const { secret: _shown, ...resource } = created;
    expect(got.body).toEqual(resource);

    const list = await call(env.app, 'GET', '/webhooks', { key: t.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(WEBHOOK_FIELDS);
    expect(list.raw.body).not.toContain(secret.slice('whsec_'.length));

    const patched = await call(env.app, 'PATCH', `/webhooks/${created.id}`, {
      key: t.apiKey,
      body: { description: 'x' },
    });
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.body).sort()).toEqual(WEBHOOK_FIELDS);
  });

  it('does not store the secret in plaintext', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const secret = ownSecret();
    const created = await createOk(t.apiKey, { secret });
    const generated = await createOk(t.apiKey);
    const { rows } = await env.tdb.db.query<Record<string, unknown>>(
      'SELECT * FROM webhook_endpoints WHERE id = ANY($1)',
      [[created.id, generated.id]],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.secret_sealed).toEqual(expect.any(String));
      const plain = row.id === created.id ? secret : generated.secret;
      const base64 = plain.slice('whsec_'.length);
      const whole = JSON.stringify(row);
      expect(whole).not.toContain(base64);
      expect(whole).not.toContain(Buffer.from(base64, 'base64').toString('hex'));
      expect(whole).not.toContain(Buffer.from(base64, 'base64').toString('base64url'));
    }
  });
});

describe('validation', () => {
  let key: string;
  beforeAll(async () => {
    key = (await tenant(env.app, env.partner.partnerKey)).apiKey;
  });

  it.each([
    ['a missing url', { url: undefined }, 'url'],
    ['an empty url', { url: '' }, 'url'],
    ['a url that is not a URL', { url: 'not a url' }, 'url'],
    ['a relative url', { url: '/hooks/tidings' }, 'url'],
    ['an ftp:// url', { url: 'ftp://127.0.0.1/hook' }, 'url'],
    ['a javascript: url', { url: 'javascript:alert(1)' }, 'url'],
    ['a url with credentials', { url: 'https://u:p@example.com/' }, 'url'],
    ['a url with a user name', { url: 'http://admin@127.0.0.1:9/hook' }, 'url'],
    ['a url that is a number', { url: 42 }, 'url'],
    ['an unknown event type', { events: ['message.sentt'] }, 'events[0]'],
    ['an unknown event family', { events: ['message.*', 'foo.*'] }, 'events[1]'],
    ['a bare family name', { events: ['message'] }, 'events[0]'],
    ['an empty events array', { events: [] }, 'events'],
    ['events that are not an array', { events: 'message.*' }, 'events'],
    ['a secret with characters outside base64', { secret: 'whsec_!!!' }, 'secret'],
    ['a secret without the whsec_ prefix', { secret: 'abc' }, 'secret'],
    ['a secret of too few bytes', { secret: ownSecret(16) }, 'secret'],
    ['a secret of too many bytes', { secret: ownSecret(65) }, 'secret'],
    ['an empty secret', { secret: '' }, 'secret'],
    ['an unknown body field', { colour: 'red' }, 'colour'],
    ['enabled that is not a boolean', { enabled: 'yes' }, 'enabled'],
  ])('refuses %s with 400 naming the field', async (_name, body, field) => {
    const res = await call(env.app, 'POST', '/webhooks', { key, body: { url: hookUrl(), ...body } });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toContain(field);
  });

  it('created nothing for any refused request', async () => {
    expect(await listAll(key)).toEqual([]);
  });

  it('refuses a PATCH with an empty body, an unknown field, or the secret', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey);
    const patch = (body: unknown) =>
      call(env.app, 'PATCH', `/webhooks/${created.id}`, { key: t.apiKey, body });

    const empty = await patch({});
    expectError(empty, 400, 'INVALID_REQUEST');
    expect(empty.body.error.details).toEqual([{ field: expect.any(String), issue: expect.any(String) }]);

    const unknown = await patch({ events: ['*'], colour: 'red' });
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(fieldsOf(unknown)).toEqual(['colour']);

    const secret = await patch({ secret: ownSecret() });
    expectError(secret, 400, 'INVALID_REQUEST');
    expect(fieldsOf(secret)).toEqual(['secret']);

    const badEvents = await patch({ events: ['message.sentt'] });
    expectError(badEvents, 400, 'INVALID_REQUEST');
    expect(fieldsOf(badEvents)).toEqual(['events[0]']);

    const badUrl = await patch({ url: 'ftp://127.0.0.1/hook' });
    expectError(badUrl, 400, 'INVALID_REQUEST');
    expect(fieldsOf(badUrl)).toEqual(['url']);

    const got = await call(env.app, 'GET', `/webhooks/${created.id}`, { key: t.apiKey });
    const { secret: _secret, ...resource } = created;
    expect(got.body).toEqual(resource);
  });
});

describe('listing', () => {
  it('lists newest first, in pages of `limit` with a cursor', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createOk(t.apiKey, { description: `#${i}` })).id);
    const newestFirst = [...ids].reverse();

    const all = await call(env.app, 'GET', '/webhooks', { key: t.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.data.map((w: { id: string }) => w.id)).toEqual(newestFirst);
    expect(all.body.nextCursor).toBeNull();

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string> = { limit: '2' };
      if (cursor) query.cursor = cursor;
      const page = await call(env.app, 'GET', '/webhooks', { key: t.apiKey, query });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((w: { id: string }) => w.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst);
  });

  it('filters by enabled', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const a = await createOk(t.apiKey);
    const b = await createOk(t.apiKey, { enabled: false });
    const c = await createOk(t.apiKey);
    await call(env.app, 'PATCH', `/webhooks/${c.id}`, { key: t.apiKey, body: { enabled: false } });

    const enabled = await listAll(t.apiKey, { enabled: 'true' });
    expect(enabled.map((w) => w.id)).toEqual([a.id]);
    const disabled = await listAll(t.apiKey, { enabled: 'false' });
    expect(disabled.map((w) => w.id)).toEqual([c.id, b.id]);
    expect(disabled.every((w) => w.enabled === false)).toBe(true);
    expect((await listAll(t.apiKey)).map((w) => w.id)).toEqual([c.id, b.id, a.id]);
  });

  it('refuses a bad limit, a forged cursor and an unknown query parameter', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const queries: Record<string, string>[] = [
      { limit: '0' },
      { limit: '101' },
      { cursor: 'bm90LWEtY3Vyc29y' },
      { colour: 'red' },
    ];
    for (const query of queries) {
      expectError(await call(env.app, 'GET', '/webhooks', { key: t.apiKey, query }), 400, 'INVALID_REQUEST');
    }
  });
});

describe('changing a webhook', () => {
  it('changes url, events and description, and shows the change', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey, { events: ['message.*'], description: 'old' });
    await new Promise((r) => setTimeout(r, 5));
    const url = hookUrl();
    const res = await call(env.app, 'PATCH', `/webhooks/${created.id}`, {
      key: t.apiKey,
      body: { url, events: ['contact.*', 'wallet.low_balance', 'contact.*'], description: 'new' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...Object.fromEntries(Object.entries(created).filter(([k]) => k !== 'secret')),
      url,
      events: ['contact.*', 'wallet.low_balance'],
      description: 'new',
      updatedAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    const got = await call(env.app, 'GET', `/webhooks/${created.id}`, { key: t.apiKey });
    expect(got.body).toEqual(res.body);

    // A single field changes only itself; null clears the description.
    const cleared = await call(env.app, 'PATCH', `/webhooks/${created.id}`, {
      key: t.apiKey,
      body: { description: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({
      description: null,
      url,
      events: ['contact.*', 'wallet.low_balance'],
    });
  });

  it('enabled:false stops it with a reason; enabled:true clears the reason', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey);
    const off = await call(env.app, 'PATCH', `/webhooks/${created.id}`, {
      key: t.apiKey,
      body: { enabled: false },
    });
    expect(off.status).toBe(200);
    expect(off.body.enabled).toBe(false);
    expect(off.body.disabledReason).toEqual(expect.any(String));
    expect(off.body.disabledReason.length).toBeGreaterThan(0);
    expect((await call(env.app, 'GET', `/webhooks/${created.id}`, { key: t.apiKey })).body).toMatchObject({
      enabled: false,
      disabledReason: off.body.disabledReason,
    });

    const on = await call(env.app, 'PATCH', `/webhooks/${created.id}`, {
      key: t.apiKey,
      body: { enabled: true },
    });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ enabled: true, disabledReason: null });
    expect((await call(env.app, 'GET', `/webhooks/${created.id}`, { key: t.apiKey })).body).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
  });

  it('disabling fails its pending deliveries; a disabled webhook takes no test or retry', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey);
    const test = await call(env.app, 'POST', `/webhooks/${created.id}/test`, { key: t.apiKey });
    expect(test.status, JSON.stringify(test.body)).toBe(202);
    expect(test.body).toMatchObject({ webhookId: created.id, eventType: 'webhook.test', status: 'pending' });

    await call(env.app, 'PATCH', `/webhooks/${created.id}`, { key: t.apiKey, body: { enabled: false } });
    expectError(
      await call(env.app, 'POST', `/webhooks/${created.id}/test`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );
    expectError(
      await call(env.app, 'POST', `/webhooks/${created.id}/deliveries/${test.body.id}/retry`, {
        key: t.apiKey,
      }),
      409,
      'CONFLICT',
    );
    const deliveries = await call(env.app, 'GET', `/webhooks/${created.id}/deliveries`, { key: t.apiKey });
    expect(deliveries.body.data).toEqual([
      expect.objectContaining({ id: test.body.id, status: 'failed', nextAttemptAt: null }),
    ]);

    // Enabled again, it takes test events again.
    await call(env.app, 'PATCH', `/webhooks/${created.id}`, { key: t.apiKey, body: { enabled: true } });
    expect((await call(env.app, 'POST', `/webhooks/${created.id}/test`, { key: t.apiKey })).status).toBe(202);
  });
});

describe('deleting a webhook', () => {
  it('answers 204, after which it is gone', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const keep = await createOk(t.apiKey);
    const gone = await createOk(t.apiKey);
    await call(env.app, 'POST', `/webhooks/${gone.id}/test`, { key: t.apiKey });
    const del = await call(env.app, 'DELETE', `/webhooks/${gone.id}`, { key: t.apiKey });
    expect(del.status).toBe(204);
    expect(del.raw.body).toBe('');
    expectError(
      await call(env.app, 'GET', `/webhooks/${gone.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', `/webhooks/${gone.id}/deliveries`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/webhooks/${gone.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'PATCH', `/webhooks/${gone.id}`, { key: t.apiKey, body: { enabled: false } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect((await listAll(t.apiKey)).map((w) => w.id)).toEqual([keep.id]);
  });

  it('answers 404 for an id that never existed', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey);
    const test = await call(env.app, 'POST', `/webhooks/${created.id}/test`, { key: t.apiKey });
    const unknown = 'whk_01h2xcejqtf2nbrexx3vqjhp41';
    expectError(
      await call(env.app, 'GET', `/webhooks/${unknown}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', '/webhooks/nonsense', { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'POST', `/webhooks/${unknown}/deliveries/${test.body.id}/retry`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'POST', `/webhooks/${created.id}/deliveries/dlv_01h2xcejqtf2nbrexx3vqjhp41/retry`, {
        key: t.apiKey,
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});

describe('the limit per owner', () => {
  it('refuses the 21st webhook of an account with 409 CONFLICT', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await createOk(t.apiKey)).id);
    const extra = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: hookUrl() } });
    expectError(extra, 409, 'CONFLICT');
    expect(await listAll(t.apiKey)).toHaveLength(20);

    // The limit is per account: another account is not affected.
    const u = await tenant(env.app, env.partner.partnerKey);
    await createOk(u.apiKey);

    // Deleting one makes room for one.
    expect((await call(env.app, 'DELETE', `/webhooks/${ids[0]}`, { key: t.apiKey })).status).toBe(204);
    await createOk(t.apiKey);
    expectError(
      await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: hookUrl() } }),
      409,
      'CONFLICT',
    );
  });
});

describe('rotating the secret', () => {
  it('answers 201 with a new secret; the old one keeps signing for 24 hours', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey);
    const before = Date.now();
    const res = await call(env.app, 'POST', `/webhooks/${created.id}/rotate-secret`, {
      key: t.apiKey,
      body: {},
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      id: created.id,
      url: created.url,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/),
      previousSecretExpiresAt: expect.stringMatching(ISO),
    });
    expect(res.body.secret).not.toBe(created.secret);
    const expires = Date.parse(res.body.previousSecretExpiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 5000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 5000);

    const got = await call(env.app, 'GET', `/webhooks/${created.id}`, { key: t.apiKey });
    expect(got.body.previousSecretExpiresAt).toBe(res.body.previousSecretExpiresAt);
    expect(got.body).not.toHaveProperty('secret');
    expect(got.raw.body).not.toContain(res.body.secret.slice('whsec_'.length));

    // The stored secret changed too (sealed, never in plaintext).
    const { rows } = await env.tdb.db.query<{ secret_sealed: string; previous_secret_sealed: string | null }>(
      'SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints WHERE id = $1',
      [created.id],
    );
    expect(JSON.stringify(rows[0])).not.toContain(res.body.secret.slice('whsec_'.length));
    expect(JSON.stringify(rows[0])).not.toContain(created.secret.slice('whsec_'.length));
  });

  it('works with no body, takes a given secret, and refuses a bad one', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await createOk(t.apiKey);
    const bare = await call(env.app, 'POST', `/webhooks/${created.id}/rotate-secret`, { key: t.apiKey });
    expect(bare.status, JSON.stringify(bare.body)).toBe(201);
    expect(bare.body.secret).toMatch(/^whsec_/);
    expect(bare.body.secret).not.toBe(created.secret);

    const secret = ownSecret();
    const given = await call(env.app, 'POST', `/webhooks/${created.id}/rotate-secret`, {
      key: t.apiKey,
      body: { secret },
    });
    expect(given.status).toBe(201);
    expect(given.body.secret).toBe(secret);

    for (const bad of ['whsec_!!!', 'abc', ownSecret(8)]) {
      const res = await call(env.app, 'POST', `/webhooks/${created.id}/rotate-secret`, {
        key: t.apiKey,
        body: { secret: bad },
      });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(fieldsOf(res)).toEqual(['secret']);
    }
    const unknown = await call(env.app, 'POST', `/webhooks/${created.id}/rotate-secret`, {
      key: t.apiKey,
      body: { colour: 'red' },
    });
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(fieldsOf(unknown)).toEqual(['colour']);
  });
});

describe('isolation', () => {
  let owner: { accountId: string; apiKey: string };
  let hook: { id: string; url: string; secret: string };
  let deliveryId: string;
  let stranger: Partner;

  beforeAll(async () => {
    owner = await tenant(env.app, env.partner.partnerKey);
    hook = await createOk(owner.apiKey, { description: 'mine' });
    const test = await call(env.app, 'POST', `/webhooks/${hook.id}/test`, { key: owner.apiKey });
    expect(test.status).toBe(202);
    deliveryId = test.body.id;
    stranger = await otherPartner(env.tdb.db);
  });

  const everyOperation = (id: string, base = '/webhooks') =>
    [
      ['GET', `${base}/${id}`, undefined],
      ['PATCH', `${base}/${id}`, { description: 'hijacked', enabled: false }],
      ['POST', `${base}/${id}/rotate-secret`, {}],
      ['POST', `${base}/${id}/test`, undefined],
      ['GET', `${base}/${id}/deliveries`, undefined],
      ['POST', `${base}/${id}/deliveries/${deliveryId}/retry`, undefined],
      ['DELETE', `${base}/${id}`, undefined],
    ] as const;

  async function expectUntouched() {
    const got = await call(env.app, 'GET', `/webhooks/${hook.id}`, { key: owner.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ description: 'mine', enabled: true, previousSecretExpiresAt: null });
    const deliveries = await call(env.app, 'GET', `/webhooks/${hook.id}/deliveries`, { key: owner.apiKey });
    expect(deliveries.body.data.map((d: { id: string }) => d.id)).toEqual([deliveryId]);
    expect(deliveries.body.data[0].attemptCount).toBe(0);
  }

  it("another account of the same partner gets 404 on everything of the webhook's", async () => {
    const other = await tenant(env.app, env.partner.partnerKey);
    for (const [method, path, body] of everyOperation(hook.id)) {
      const res = await call(env.app, method, path, { key: other.apiKey, body });
      expectError(res, 404, 'RESOURCE_NOT_FOUND');
    }
    expect(await listAll(other.apiKey)).toEqual([]);
    // Nor through a webhook of its own: the delivery belongs to the webhook it was made for.
    const own = await createOk(other.apiKey);
    expectError(
      await call(env.app, 'POST', `/webhooks/${own.id}/deliveries/${deliveryId}/retry`, {
        key: other.apiKey,
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    await expectUntouched();
  });

  it("an account of another partner gets 404 on everything of the webhook's", async () => {
    const other = await tenant(env.app, stranger.partnerKey);
    for (const [method, path, body] of everyOperation(hook.id)) {
      const res = await call(env.app, method, path, { key: other.apiKey, body });
      expectError(res, 404, 'RESOURCE_NOT_FOUND');
    }
    expect(await listAll(other.apiKey)).toEqual([]);
    await expectUntouched();
  });

  it("another partner's key with X-Account-Id of the account gets 404 (the account is invisible)", async () => {
    for (const [method, path, body] of everyOperation(hook.id)) {
      const res = await call(env.app, method, path, {
        key: stranger.partnerKey,
        accountId: owner.accountId,
        body,
      });
      expectError(res, 404, 'RESOURCE_NOT_FOUND');
    }
    expectError(
      await call(env.app, 'GET', '/webhooks', { key: stranger.partnerKey, accountId: owner.accountId }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'POST', '/webhooks', {
        key: stranger.partnerKey,
        accountId: owner.accountId,
        body: { url: hookUrl() },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    await expectUntouched();
  });

  it('a standard account key on /partner/webhooks gets 403 FORBIDDEN', async () => {
    const before = await listAll(env.partner.partnerKey, {}, '/partner/webhooks');
    expectError(await call(env.app, 'GET', '/partner/webhooks', { key: owner.apiKey }), 403, 'FORBIDDEN');
    expectError(
      await call(env.app, 'POST', '/partner/webhooks', { key: owner.apiKey, body: { url: hookUrl() } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call(env.app, 'GET', `/partner/webhooks/${hook.id}`, { key: owner.apiKey }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call(env.app, 'DELETE', `/partner/webhooks/${hook.id}`, { key: owner.apiKey }),
      403,
      'FORBIDDEN',
    );
    expect(await listAll(env.partner.partnerKey, {}, '/partner/webhooks')).toEqual(before);
  });

  it("a partner key cannot see or touch another partner's partner webhook", async () => {
    const mine = await createOk(env.partner.partnerKey, { description: 'partner hook' }, '/partner/webhooks');
    expect(mine).toMatchObject({
      id: expect.stringMatching(/^whk_/),
      secret: expect.stringMatching(/^whsec_/),
    });
    expect((await listAll(env.partner.partnerKey, {}, '/partner/webhooks')).map((w) => w.id)).toContain(
      mine.id,
    );

    for (const [method, path, body] of everyOperation(mine.id, '/partner/webhooks')) {
      const res = await call(env.app, method, path, { key: stranger.partnerKey, body });
      expectError(res, 404, 'RESOURCE_NOT_FOUND');
    }
    expect(await listAll(stranger.partnerKey, {}, '/partner/webhooks')).toEqual([]);
    const still = await call(env.app, 'GET', `/partner/webhooks/${mine.id}`, { key: env.partner.partnerKey });
    expect(still.status).toBe(200);
    expect(still.body).toMatchObject({
      description: 'partner hook',
      enabled: true,
      previousSecretExpiresAt: null,
    });
  });

  it("account and partner webhooks are separate: neither path shows the other's", async () => {
    const partnerHook = await createOk(env.partner.partnerKey, {}, '/partner/webhooks');
    expectError(
      await call(env.app, 'GET', `/webhooks/${partnerHook.id}`, { key: owner.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', `/partner/webhooks/${hook.id}`, { key: env.partner.partnerKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect((await listAll(owner.apiKey)).map((w) => w.id)).not.toContain(partnerHook.id);
    expect((await listAll(env.partner.partnerKey, {}, '/partner/webhooks')).map((w) => w.id)).not.toContain(
      hook.id,
    );
  });

  it("a partner key with X-Account-Id manages that sub-account's /webhooks", async () => {
    const pk = env.partner.partnerKey;
    const as = { key: pk, accountId: owner.accountId };
    const got = await call(env.app, 'GET', `/webhooks/${hook.id}`, as);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(hook.id);

    const created = await createOk(pk, { description: 'by partner' }, '/webhooks', owner.accountId);
    // The account's own key sees what the partner made for it.
    const seen = await call(env.app, 'GET', `/webhooks/${created.id}`, { key: owner.apiKey });
    expect(seen.status).toBe(200);
    expect(seen.body.description).toBe('by partner');
    expect(
      (await call(env.app, 'GET', '/webhooks', { ...as, query: { limit: '100' } })).body.data.map(
        (w: { id: string }) => w.id,
      ),
    ).toEqual([created.id, hook.id]);

    const patched = await call(env.app, 'PATCH', `/webhooks/${created.id}`, {
      ...as,
      body: { events: ['contact.*'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.events).toEqual(['contact.*']);
    const rotated = await call(env.app, 'POST', `/webhooks/${created.id}/rotate-secret`, { ...as, body: {} });
    expect(rotated.status).toBe(201);
    expect((await call(env.app, 'GET', `/webhooks/${hook.id}/deliveries`, as)).status).toBe(200);
    expect((await call(env.app, 'DELETE', `/webhooks/${created.id}`, as)).status).toBe(204);
    expectError(
      await call(env.app, 'GET', `/webhooks/${created.id}`, { key: owner.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );

    // Acting as another sub-account, the same key does not reach this account's webhook.
    const sibling = await tenant(env.app, pk);
    expectError(
      await call(env.app, 'GET', `/webhooks/${hook.id}`, { key: pk, accountId: sibling.accountId }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});

describe('PATCH /account/wallet', () => {
  const wallet = (key: string) => call(env.app, 'GET', '/account/wallet', { key });
  const setThreshold = (key: string, lowBalanceThreshold: unknown) =>
    call(env.app, 'PATCH', '/account/wallet', { key, body: { lowBalanceThreshold } });

  it('sets the low-balance threshold, which GET then shows; null clears it', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expect((await wallet(t.apiKey)).body.lowBalanceThreshold).toBeNull();

    const set = await setThreshold(t.apiKey, { amount: '10.50' });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({
      accountId: t.accountId,
      balance: { amount: '0.0000', currency: 'USD' },
      lowBalanceThreshold: { amount: '10.5000', currency: 'USD' },
    });
    const got = await wallet(t.apiKey);
    expect(got.body.lowBalanceThreshold).toEqual({ amount: '10.5000', currency: 'USD' });

    const exact = await setThreshold(t.apiKey, { amount: '0.000001', currency: 'usd' });
    expect(exact.status).toBe(200);
    expect((await wallet(t.apiKey)).body.lowBalanceThreshold).toEqual({
      amount: '0.000001',
      currency: 'USD',
    });

    const cleared = await setThreshold(t.apiKey, null);
    expect(cleared.status).toBe(200);
    expect(cleared.body.lowBalanceThreshold).toBeNull();
    expect((await wallet(t.apiKey)).body.lowBalanceThreshold).toBeNull();

    // Another account's wallet is not affected.
    await setThreshold(t.apiKey, { amount: '3', currency: 'USD' });
    const u = await tenant(env.app, env.partner.partnerKey);
    expect((await wallet(u.apiKey)).body.lowBalanceThreshold).toBeNull();
    expect((await wallet(t.apiKey)).body.lowBalanceThreshold).toEqual({ amount: '3.0000', currency: 'USD' });
  });

  it.each([
    ['a negative amount', { amount: '-1' }, 'lowBalanceThreshold.amount'],
    ['a zero amount', { amount: '0' }, 'lowBalanceThreshold.amount'],
    ['a word', { amount: 'ten' }, 'lowBalanceThreshold.amount'],
    ['too many decimals', { amount: '1.0000001' }, 'lowBalanceThreshold.amount'],
    ['an exponent', { amount: '1e3' }, 'lowBalanceThreshold.amount'],
    ['another currency', { amount: '10', currency: 'EUR' }, 'lowBalanceThreshold.currency'],
  ])('refuses %s with 400 and keeps the old threshold', async (_name, threshold, field) => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expect((await setThreshold(t.apiKey, { amount: '5' })).status).toBe(200);
    const res = await setThreshold(t.apiKey, threshold);
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual([field]);
    expect((await wallet(t.apiKey)).body.lowBalanceThreshold).toEqual({ amount: '5.0000', currency: 'USD' });
  });

  it('refuses a number, a missing threshold and unknown fields', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const body of [
      { lowBalanceThreshold: { amount: 10 } },
      { lowBalanceThreshold: 10 },
      {},
      { lowBalanceThreshold: null, colour: 'red' },
      { lowBalanceThreshold: { amount: '10', colour: 'red' } },
    ]) {
      const res = await call(env.app, 'PATCH', '/account/wallet', { key: t.apiKey, body });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details.length).toBeGreaterThan(0);
    }
    expect((await wallet(t.apiKey)).body.lowBalanceThreshold).toBeNull();
  });
});
