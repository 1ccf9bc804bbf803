// The stumbles of a newcomer's first minutes, each answered in words they can act on (issue 25):
// a refused webhook URL names the setting that allows it; a wrong method is a 405 with Allow; a
// path without /public names the right one; Pro's 402 on key creation names the api_access add-on;
// the sandbox's estimate shows the live price beside the 0 it charges; sandbox keys are
// tdg_sandbox_…, and tdg_test_… keys issued before still work.
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/kernel/access/key-text.ts';
import type { Resolver } from '../../src/kernel/outbound/egress.ts';
import { newId } from '../../src/kernel/values/ids.ts';
import { call, createAccountKey, mistypedKey, provision, tenant } from '../helpers/client.ts';
import { approvedTemplate, customerWrote, sandboxTenant } from '../helpers/messaging.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const resolver: Resolver = async (host) => (host === 'localhost' ? ['127.0.0.1'] : ['93.184.216.34']);
const env = useTestApp({ workers: true, config: { webhookAllowedHosts: [] }, resolver });

describe('a refused webhook URL', () => {
  it('says, in a sentence, what the address is and which setting lets it through', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: 'http://localhost:4000/hook' },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.message).toBe(
      'The webhook URL http://localhost:4000/hook is refused: localhost resolves to 127.0.0.1, a loopback address, which webhooks may not reach unless the server allows it; to allow it (local development), start the server with WEBHOOK_ALLOWED_HOSTS=localhost.',
    );
    expect(res.body.error.details).toEqual([
      { field: 'url', issue: expect.stringContaining('WEBHOOK_ALLOWED_HOSTS=localhost') },
    ]);
    const literal = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: 'http://127.0.0.1:4000/hook' },
    });
    expect(literal.body.error.message).toContain(
      'is refused: 127.0.0.1, a loopback address, which webhooks may not reach unless the server allows it; to allow it (local development), start the server with WEBHOOK_ALLOWED_HOSTS=127.0.0.1.',
    );
    const plain = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: 'http://hooks.example.com/hook' },
    });
    expect(plain.body.error.message).toBe(
      'The webhook URL http://hooks.example.com/hook must use https (plain http is let through only to hosts listed in WEBHOOK_ALLOWED_HOSTS).',
    );
  });
});

describe('a request no route answers', () => {
  it('with a wrong method on an existing path: 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const collection = await call(env.app, 'DELETE', '/contacts', { key: t.apiKey });
    expectError(collection, 405, 'METHOD_NOT_ALLOWED');
    expect(collection.headers.allow).toBe('GET, HEAD, POST');
    expect(collection.body.error.message).toBe(
      '/api/v1/public/contacts does not take DELETE; it takes GET, HEAD, POST.',
    );
    // POST on an item; without a key too (the route table is public knowledge: /docs).
    const item = await call(env.app, 'POST', '/contacts/ctc_01jh0000000000000000000000', { body: {} });
    expectError(item, 405, 'METHOD_NOT_ALLOWED');
    expect(item.headers.allow).toBe('GET, HEAD, PUT, PATCH, DELETE');
    // OPTIONS is answered by no route: the same 405, whose Allow says what it would have.
    const options = await env.app.inject({ method: 'OPTIONS', url: '/api/v1/public/messages' });
    expect(options.statusCode).toBe(405);
    expect(options.headers.allow).toBe('GET, HEAD, POST');
    // HEAD on a GET route is the GET route (here: 401 without a key, and no body).
    const head = await env.app.inject({ method: 'HEAD', url: '/api/v1/public/contacts' });
    expect(head.statusCode).toBe(401);
    // And the method that exists still works.
    expect((await call(env.app, 'GET', '/contacts', { key: t.apiKey })).status).toBe(200);
  });

  it('on a path without /public (or without the prefix): 404 naming the path that exists', async () => {
    const missing = await call(env.app, 'GET', '/api/v1/contacts');
    expectError(missing, 404, 'RESOURCE_NOT_FOUND');
    expect(missing.body.error.message).toBe(
      'No route GET /api/v1/contacts: the API is under /api/v1/public, so it is GET /api/v1/public/contacts.',
    );
    const bare = await env.app.inject({ method: 'POST', url: '/messages/estimate?x=1' });
    expect(bare.statusCode).toBe(404);
    expect(bare.json().error.message).toBe(
      'No route POST /messages/estimate: the API is under /api/v1/public, so it is POST /api/v1/public/messages/estimate.',
    );
    const item = await call(env.app, 'GET', '/api/v1/templates/tpl_x');
    expect(item.body.error.message).toContain('GET /api/v1/public/templates/tpl_x.');
    // A path that exists nowhere says only that.
    const nothing = await call(env.app, 'GET', '/api/v1/nothing-here');
    expectError(nothing, 404, 'RESOURCE_NOT_FOUND');
    expect(nothing.body.error.message).toBe('No route GET /api/v1/nothing-here.');
  });
});

describe('a key on a plan without API access', () => {
  it('Pro: 402 names the api_access add-on, and the add-on makes the key', async () => {
    const acc = await provision(env.app, env.partner.partnerKey, { planCode: 'pro' });
    const refused = await call(env.app, 'POST', `/partner/accounts/${acc.accountId}/keys`, {
      key: env.partner.partnerKey,
      body: { name: 'backend', scope: 'live' },
    });
    expectError(refused, 402, 'PLAN_UPGRADE_REQUIRED');
    expect(refused.body.error.message).toBe(
      `The Pro plan has API access only with the \`api_access\` add-on: set "addons": ["api_access"] on the account (PATCH /partner/accounts/${acc.accountId}) or move it to Business or above.`,
    );
    const patched = await call(env.app, 'PATCH', `/partner/accounts/${acc.accountId}`, {
      key: env.partner.partnerKey,
      body: { addons: ['api_access'] },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await createAccountKey(env.app, env.partner.partnerKey, acc.accountId);
  });

  it('Starter: 402 says which plans have it', async () => {
    const acc = await provision(env.app, env.partner.partnerKey, { planCode: 'starter' });
    const refused = await call(env.app, 'POST', `/partner/accounts/${acc.accountId}/keys`, {
      key: env.partner.partnerKey,
      body: { name: 'backend' },
    });
    expectError(refused, 402, 'PLAN_UPGRADE_REQUIRED');
    expect(refused.body.error.message).toContain('Business or above, or to Pro with the `api_access` add-on');
  });
});

describe('the sandbox’s estimate', () => {
  it('charges 0 and shows what a live channel would charge, with the same window rules', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'reminder', category: 'UTILITY' });
    // One recipient inside the customer service window: a live channel charges utility there too
    // since 2026-10-01 (Meta's rule, a row of the shipped price book), at the same price.
    await customerWrote(env.tdb.db, t.accountId, '+14155552001', new Date());
    const res = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: {
        recipients: [{ to: '+14155552000' }, { to: '+14155552001' }],
        templateName: 'reminder',
        templateLanguage: 'en_US',
        parameters: ['Ann', 'Monday 10:00'],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const unit = res.body.recipients[0].unitPrice;
    expect(Number(unit.amount)).toBeGreaterThan(0);
    expect(res.body.recipients[0]).toMatchObject({
      charge: { amount: '0.0000' },
      liveCharge: unit,
      freeReason: 'sandbox',
    });
    expect(res.body.recipients[1]).toMatchObject({ charge: { amount: '0.0000' }, liveCharge: unit });
    const twice = (Number(unit.amount) * 2).toFixed(4);
    expect(res.body).toMatchObject({
      total: { amount: '0.0000' },
      liveTotal: { amount: twice },
      channel: 'sandbox',
    });
  });

  it('of a campaign shows the live cost beside its 0 too', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'promo', category: 'MARKETING' });
    for (const phone of ['+14155552002', '+14155552003']) {
      const c = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone, tags: ['vip'] } });
      expect(c.status, JSON.stringify(c.body)).toBe(201);
    }
    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'VIP',
        message: { templateName: 'promo', templateLanguage: 'en_US', parameters: ['Ann', 'Friday'] },
        audience: { tags: { any: ['vip'] } },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const e = await call(env.app, 'POST', `/campaigns/${made.body.id}/estimate`, { key: t.apiKey });
    expect(e.status, JSON.stringify(e.body)).toBe(200);
    const [line] = e.body.lines;
    expect(line).toMatchObject({
      country: 'US',
      category: 'marketing',
      count: 2,
      free: 2,
      amount: { amount: '0.0000' },
    });
    const live = (Number(line.unitPrice.amount) * 2).toFixed(4);
    expect(line.liveAmount.amount).toBe(live);
    expect(e.body).toMatchObject({ cost: { amount: '0.0000' }, liveCost: { amount: live } });
  });
});

describe('sandbox keys', () => {
  it('are issued as tdg_sandbox_…', async () => {
    const acc = await provision(env.app, env.partner.partnerKey, { planCode: 'business' });
    const k = await createAccountKey(env.app, env.partner.partnerKey, acc.accountId, { scope: 'sandbox' });
    expect(k.apiKey).toMatch(/^tdg_sandbox_[0-9A-Za-z]{38}$/);
    expect(k.scope).toBe('sandbox');
    const me = await call(env.app, 'GET', '/account', { key: k.apiKey });
    expect(me.status).toBe(200);
  });

  it('issued earlier as tdg_test_… still authenticate, as sandbox keys', async () => {
    const acc = await provision(env.app, env.partner.partnerKey, { planCode: 'business' });
    // A key as earlier versions made it: tdg_test_ + 32 base62 + the base62 CRC32 of all before it.
    const digits = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const body = `tdg_test_${'Old5andboxKey'.padEnd(32, 'x')}`;
    let n = crc32(body);
    let sum = '';
    while (n > 0) {
      sum = digits[n % 62] + sum;
      n = Math.floor(n / 62);
    }
    const old = body + sum.padStart(6, '0');
    await env.tdb.db.query(
      `INSERT INTO api_keys (id, partner_id, account_id, scope, name, key_hash, last_four, expires_at)
       VALUES ($1, NULL, $2, 'sandbox', 'old', $3, $4, NULL)`,
      [newId('apiKey'), acc.accountId, hashSecret(old), old.slice(-4)],
    );
    const me = await call(env.app, 'GET', '/account', { key: old });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.accountId).toBe(acc.accountId);
    // A typo in it is still caught by the checksum.
    const typo = await call(env.app, 'GET', '/account', {
      key: mistypedKey(old),
    });
    expectError(typo, 401, 'INVALID_API_KEY');
  });
});
