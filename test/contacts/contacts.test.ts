// The contacts API through HTTP: creating (with phone normalisation and every field check),
// reading, changing (PATCH merges, PUT replaces), deleting, tagging and untagging contacts; the
// one-contact-per-phone rule; the walls between tenants; and the events each change records in
// the outbox (read straight from the events table).
import { beforeAll, describe, expect, it } from 'vitest';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CONTACT_ID = /^ctc_[0-9a-z]{26}$/;

type Tenant = { accountId: string; apiKey: string };

let phoneSeq = 0;
/** A distinct, valid US number (+1 415 555 01xx style numbers are fictional; 201 area code is real). */
function usPhone(): string {
  phoneSeq++;
  return `+1201555${String(1000 + phoneSeq).slice(-4)}`;
}

async function create(t: Tenant, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

function detailsOf(res: Reply): { field: string; issue: string }[] {
  return res.body.error?.details ?? [];
}

function fieldsOf(res: Reply): string[] {
  return detailsOf(res).map((d) => d.field);
}

async function eventsOf(accountId: string) {
  const { rows } = await env.tdb.db.query<{ type: string; payload: string }>(
    'SELECT type, payload FROM events WHERE account_id = $1 ORDER BY id',
    [accountId],
  );
  return rows.map((r) => ({ type: r.type, ...JSON.parse(r.payload) }));
}

async function getOk(t: Tenant, id: string) {
  const res = await call(env.app, 'GET', `/contacts/${id}`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('creating a contact', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  it('answers 201 with the whole contact, normalised', async () => {
    const before = Date.now();
    const res = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: {
        phone: '+1 (201) 555-0100',
        name: '  Ada Lovelace ',
        email: 'Ada.Lovelace@Example.COM',
        tags: [' VIP ', 'lead:2026', 'vip', 'Early  Bird'],
        attributes: { plan: 'gold', seats: 12, trial: false, _note: '' },
        optedIn: true,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(CONTACT_ID),
      phone: '+12015550100',
      name: 'Ada Lovelace',
      email: 'ada.lovelace@example.com',
      tags: ['vip', 'lead:2026', 'early bird'],
      attributes: { plan: 'gold', seats: 12, trial: false, _note: '' },
      optedIn: true,
      marketingOptOut: false,
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.createdAt,
      lastInboundAt: null,
      waId: null,
      whatsappUserId: null,
      whatsappParentUserId: null,
      whatsappUsername: null,
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await getOk(t, res.body.id)).toEqual(res.body);
  });

  it('defaults every optional field', async () => {
    const phone = usPhone();
    const body = await create(t, { phone });
    expect(body).toMatchObject({
      phone,
      name: null,
      email: null,
      tags: [],
      attributes: {},
      optedIn: false,
      marketingOptOut: false,
    });
  });

  it('takes marketingOptOut, apart from optedIn', async () => {
    const out = await create(t, { phone: usPhone(), marketingOptOut: true });
    expect(out).toMatchObject({ optedIn: false, marketingOptOut: true });
    expect(await getOk(t, out.id)).toEqual(out);
    // Opted in to messages yet not to marketing: both are kept as given.
    const both = await create(t, { phone: usPhone(), optedIn: true, marketingOptOut: true });
    expect(both).toMatchObject({ optedIn: true, marketingOptOut: true });
    const wrong = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), marketingOptOut: 'yes' },
    });
    expectError(wrong, 400, 'INVALID_REQUEST');
    expect(fieldsOf(wrong)).toEqual(['marketingOptOut']);
  });

  it("reads a national number with the account's country (US for tenant())", async () => {
    const body = await create(t, { phone: '(201) 555-0177' });
    expect(body.phone).toBe('+12015550177');
    const other = await create(t, { phone: '201.555.0178' });
    expect(other.phone).toBe('+12015550178');
  });

  it('reads a national number of a GB account as British', async () => {
    const gb = await tenant(env.app, env.partner.partnerKey, { countryCode: 'GB' });
    const body = await create(gb, { phone: '07911 123456' });
    expect(body.phone).toBe('+447911123456');
    // A number with its country code stays in its own country, whatever the account's.
    expect((await create(gb, { phone: '+1 201 555 0199' })).phone).toBe('+12015550199');
    // The same national text in a US account is not a valid number.
    const us = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: '07911 123456' } });
    expectError(us, 400, 'INVALID_REQUEST');
    expect(fieldsOf(us)).toEqual(['phone']);
  });

  it('refuses an invalid phone, naming the field', async () => {
    for (const phone of ['12', 'not a phone', '+999 123', '+1 201 555']) {
      const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone } });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(detailsOf(res)).toEqual([{ field: 'phone', issue: expect.stringContaining('phone') }]);
    }
    const missing = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { name: 'No phone' } });
    expectError(missing, 400, 'INVALID_REQUEST');
    expect(detailsOf(missing)).toEqual([{ field: 'phone', issue: 'is required' }]);
  });

  it('refuses a malformed email', async () => {
    const res = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), email: 'not-an-email' },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['email']);
  });

  it('refuses bad tags, naming each by position', async () => {
    const res = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), tags: ['ok', 'semi;colon', '-leading', 'x'.repeat(51), 'a,b', ''] },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['tags[1]', 'tags[2]', 'tags[3]', 'tags[4]', 'tags[5]']);
  });

  it('refuses more than 50 tags', async () => {
    const tags = Array.from({ length: 51 }, (_, i) => `t${i}`);
    const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: usPhone(), tags } });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['tags']);
    // Exactly 50 is fine.
    const ok = await create(t, { phone: usPhone(), tags: tags.slice(0, 50) });
    expect(ok.tags).toHaveLength(50);
  });

  it('refuses bad attribute names and values', async () => {
    const badName = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: {
        phone: usPhone(),
        attributes: { 'has-dash': 'x', '9lives': 1, [`a${'b'.repeat(40)}`]: 2, ok: 1 },
      },
    });
    expectError(badName, 400, 'INVALID_REQUEST');
    expect(fieldsOf(badName).sort()).toEqual(
      ['attributes.has-dash', 'attributes.9lives', `attributes.a${'b'.repeat(40)}`].sort(),
    );

    const objectValue = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), attributes: { address: { city: 'Paris' } } },
    });
    expectError(objectValue, 400, 'INVALID_REQUEST');
    expect(new Set(fieldsOf(objectValue))).toEqual(new Set(['attributes.address']));

    const nullValue = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), attributes: { gone: null } },
    });
    expectError(nullValue, 400, 'INVALID_REQUEST');
    expect(new Set(fieldsOf(nullValue))).toEqual(new Set(['attributes.gone']));

    const longValue = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), attributes: { bio: 'x'.repeat(501) } },
    });
    expectError(longValue, 400, 'INVALID_REQUEST');
    expect(new Set(fieldsOf(longValue))).toEqual(new Set(['attributes.bio']));

    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`a${i}`, i]));
    const many = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), attributes: tooMany },
    });
    expectError(many, 400, 'INVALID_REQUEST');
    expect(fieldsOf(many)).toEqual(['attributes']);
  });

  it('refuses an unknown field and wrong types', async () => {
    const unknown = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), nickname: 'Bob' },
    });
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(detailsOf(unknown)).toEqual([{ field: 'nickname', issue: 'is not a known field' }]);

    const wrongType = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: usPhone(), optedIn: 'yes', tags: 'vip' },
    });
    expectError(wrongType, 400, 'INVALID_REQUEST');
    expect(new Set(fieldsOf(wrongType))).toEqual(new Set(['optedIn', 'tags']));
  });

  it('reports every bad field at once', async () => {
    const res = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: 'nope', tags: ['fine', '#bad'], attributes: { 'bad name': 1 } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['phone', 'tags[1]', 'attributes.bad name']);
  });

  it('refuses a second contact with the same phone, naming the first', async () => {
    const phone = '+12015550142';
    const first = await create(t, { phone, name: 'First' });
    for (const written of [phone, '+1 201 555 0142', '(201) 555-0142', '+1-201-555-0142']) {
      const res = await call(env.app, 'POST', '/contacts', {
        key: t.apiKey,
        body: { phone: written, name: 'Second' },
      });
      expectError(res, 409, 'CONFLICT');
      expect(res.body.error.details).toEqual([
        { field: 'phone', issue: 'belongs to another contact', contactId: first.id },
      ]);
    }
    expect((await getOk(t, first.id)).name).toBe('First');
    const listed = await call(env.app, 'GET', '/contacts', { key: t.apiKey, query: { phone } });
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([first.id]);
  });

  it('replays the first answer to a repeated Idempotency-Key, creating one contact', async () => {
    const keyed = await tenant(env.app, env.partner.partnerKey);
    const body = { phone: '+12015550160', name: 'Once' };
    const headers = { 'idempotency-key': 'create-once-1' };
    const first = await call(env.app, 'POST', '/contacts', { key: keyed.apiKey, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await call(env.app, 'POST', '/contacts', { key: keyed.apiKey, body, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const reused = await call(env.app, 'POST', '/contacts', {
      key: keyed.apiKey,
      body: { ...body, name: 'Twice' },
      headers,
    });
    expectError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
    const listed = await call(env.app, 'GET', '/contacts', { key: keyed.apiKey });
    expect(listed.body.data).toEqual([first.body]);
    expect((await eventsOf(keyed.accountId)).map((e) => e.type)).toEqual(['contact.created']);
  });

  it('lets two accounts each have a contact with the same phone', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const ca = await create(a, { phone: '+12015550150' });
    const cb = await create(b, { phone: '+12015550150' });
    expect(cb.id).not.toBe(ca.id);
  });
});

describe('reading a contact', () => {
  it('answers 404 for an unknown id', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expectError(
      await call(env.app, 'GET', '/contacts/ctc_01jv4e2k7qf3x8m2n5p6r9s0tb', { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', '/contacts/nonsense', { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('needs a key', async () => {
    expectError(await call(env.app, 'GET', '/contacts'), 401, 'INVALID_API_KEY');
    expectError(
      await call(env.app, 'POST', '/contacts', { body: { phone: usPhone() } }),
      401,
      'INVALID_API_KEY',
    );
  });
});

describe('PATCH /contacts/{id}', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  it('changes only the fields given', async () => {
    const c = await create(t, {
      phone: usPhone(),
      name: 'Grace',
      email: 'grace@example.com',
      tags: ['navy'],
      attributes: { rank: 'admiral' },
    });
    const res = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { name: 'Grace Hopper', optedIn: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...c,
      name: 'Grace Hopper',
      optedIn: true,
      updatedAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(c.updatedAt));
    expect(await getOk(t, c.id)).toEqual(res.body);
  });

  it('sets and clears marketingOptOut alone; contact.updated names its previous value', async () => {
    const c = await create(t, { phone: usPhone(), name: 'Marketing', optedIn: true });
    expect(c.marketingOptOut).toBe(false);
    const out = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { marketingOptOut: true },
    });
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toEqual({ ...c, marketingOptOut: true, updatedAt: expect.stringMatching(ISO) });
    expect(await getOk(t, c.id)).toEqual(out.body);
    // Another field's change leaves it as it is.
    const renamed = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { name: 'Renamed' },
    });
    expect(renamed.body).toMatchObject({ name: 'Renamed', optedIn: true, marketingOptOut: true });
    const back = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { marketingOptOut: false },
    });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body).toMatchObject({ optedIn: true, marketingOptOut: false });
    const updates = (await eventsOf(t.accountId)).filter(
      (e) => e.type === 'contact.updated' && e.data.id === c.id,
    );
    expect(updates.map((e) => e.data.previous)).toEqual([
      { marketingOptOut: false },
      { name: 'Marketing' },
      { marketingOptOut: true },
    ]);
    expect(updates[0].data).toEqual({ ...out.body, previous: { marketingOptOut: false } });
    const wrong = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { marketingOptOut: null },
    });
    expectError(wrong, 400, 'INVALID_REQUEST');
    expect(fieldsOf(wrong)).toEqual(['marketingOptOut']);
  });

  it('merges attributes; null removes one', async () => {
    const c = await create(t, { phone: usPhone(), attributes: { plan: 'gold', seats: 3, beta: true } });
    const res = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { attributes: { seats: 5, beta: null, region: 'eu', absent: null } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.attributes).toEqual({ plan: 'gold', seats: 5, region: 'eu' });
    expect((await getOk(t, c.id)).attributes).toEqual({ plan: 'gold', seats: 5, region: 'eu' });
  });

  it('clears name and email with null, and replaces tags', async () => {
    const c = await create(t, { phone: usPhone(), name: 'N', email: 'n@example.com', tags: ['a', 'b'] });
    const res = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { name: null, email: null, tags: ['C'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ name: null, email: null, tags: ['c'], phone: c.phone });
  });

  it('changes the phone, normalising it', async () => {
    const c = await create(t, { phone: usPhone() });
    const res = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { phone: '(201) 555-0301' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.phone).toBe('+12015550301');
    // Its own phone, written differently, is no conflict.
    const same = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { phone: '+1 201 555 0301', name: 'Same phone' },
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body.phone).toBe('+12015550301');
  });

  it("refuses another contact's phone with 409 and changes nothing", async () => {
    const taken = await create(t, { phone: '+12015550302' });
    const c = await create(t, { phone: usPhone(), name: 'Before', attributes: { k: 'v' } });
    const res = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { phone: '201-555-0302', name: 'After', attributes: { k: 'w' } },
    });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.details).toEqual([
      { field: 'phone', issue: 'belongs to another contact', contactId: taken.id },
    ]);
    expect(await getOk(t, c.id)).toEqual(c);
    expect(await getOk(t, taken.id)).toEqual(taken);
  });

  it('checks fields as create does, and needs at least one', async () => {
    const c = await create(t, { phone: usPhone() });
    const bad = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { phone: 'x', tags: ['!'], attributes: { 'a-b': 1 } },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(fieldsOf(bad)).toEqual(['phone', 'tags[0]', 'attributes.a-b']);
    // The body's shape is checked first: a malformed email is reported on its own.
    const email = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { email: 'nope', name: 'x' },
    });
    expectError(email, 400, 'INVALID_REQUEST');
    expect(fieldsOf(email)).toEqual(['email']);
    const empty = await call(env.app, 'PATCH', `/contacts/${c.id}`, { key: t.apiKey, body: {} });
    expectError(empty, 400, 'INVALID_REQUEST');
    const unknown = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { id: 'ctc_x' },
    });
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(fieldsOf(unknown)).toEqual(['id']);
    expect(await getOk(t, c.id)).toEqual(c);
  });

  it('refuses going over 50 attributes by merging', async () => {
    const attrs = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`a${i}`, i]));
    const c = await create(t, { phone: usPhone(), attributes: attrs });
    const res = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { attributes: { extra: 1 } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['attributes']);
    // Replacing one while removing another stays within the limit.
    const swap = await call(env.app, 'PATCH', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { attributes: { extra: 1, a0: null } },
    });
    expect(swap.status, JSON.stringify(swap.body)).toBe(200);
    expect(Object.keys(swap.body.attributes)).toHaveLength(50);
    expect(swap.body.attributes).toMatchObject({ extra: 1 });
    expect(swap.body.attributes).not.toHaveProperty('a0');
  });
});

describe('PUT /contacts/{id}', () => {
  it('replaces the contact whole: fields left out are reset', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const c = await create(t, {
      phone: usPhone(),
      name: 'Full',
      email: 'full@example.com',
      tags: ['x'],
      attributes: { a: 1 },
      optedIn: true,
      marketingOptOut: true,
    });
    const res = await call(env.app, 'PUT', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { phone: c.phone, name: 'Only name' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      id: c.id,
      phone: c.phone,
      name: 'Only name',
      email: null,
      tags: [],
      attributes: {},
      optedIn: false,
      marketingOptOut: false,
      createdAt: c.createdAt,
      updatedAt: expect.stringMatching(ISO),
      lastInboundAt: null,
      waId: null,
      whatsappUserId: null,
      whatsappParentUserId: null,
      whatsappUsername: null,
    });
    expect(await getOk(t, c.id)).toEqual(res.body);
    const [reset] = (await eventsOf(t.accountId)).filter((e) => e.type === 'contact.updated');
    expect(reset.data.previous).toEqual({
      name: 'Full',
      email: 'full@example.com',
      tags: ['x'],
      attributes: { a: 1 },
      optedIn: true,
      marketingOptOut: true,
    });

    const full = await call(env.app, 'PUT', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: {
        phone: '201 555 0401',
        email: 'NEW@example.com',
        tags: ['Y'],
        attributes: { b: true },
        optedIn: true,
        marketingOptOut: true,
      },
    });
    expect(full.status, JSON.stringify(full.body)).toBe(200);
    expect(full.body).toMatchObject({
      phone: '+12015550401',
      name: null,
      email: 'new@example.com',
      tags: ['y'],
      attributes: { b: true },
      optedIn: true,
      marketingOptOut: true,
    });
  });

  it('needs the phone and refuses a taken one', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const taken = await create(t, { phone: '+12015550402' });
    const c = await create(t, { phone: usPhone(), name: 'Keep' });
    const noPhone = await call(env.app, 'PUT', `/contacts/${c.id}`, { key: t.apiKey, body: { name: 'x' } });
    expectError(noPhone, 400, 'INVALID_REQUEST');
    expect(detailsOf(noPhone)).toEqual([{ field: 'phone', issue: 'is required' }]);
    const conflict = await call(env.app, 'PUT', `/contacts/${c.id}`, {
      key: t.apiKey,
      body: { phone: '+1 201 555 0402' },
    });
    expectError(conflict, 409, 'CONFLICT');
    expect(conflict.body.error.details).toEqual([
      { field: 'phone', issue: 'belongs to another contact', contactId: taken.id },
    ]);
    expect(await getOk(t, c.id)).toEqual(c);
  });
});

describe('DELETE /contacts/{id}', () => {
  it('answers 204, then the contact is gone and its phone is free', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const c = await create(t, { phone: '+12015550501' });
    const res = await call(env.app, 'DELETE', `/contacts/${c.id}`, { key: t.apiKey });
    expect(res.status).toBe(204);
    expect(res.raw.body).toBe('');
    expectError(
      await call(env.app, 'GET', `/contacts/${c.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/contacts/${c.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'PATCH', `/contacts/${c.id}`, { key: t.apiKey, body: { name: 'x' } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const list = await call(env.app, 'GET', '/contacts', { key: t.apiKey });
    expect(list.body.data).toEqual([]);
    const again = await create(t, { phone: '+12015550501' });
    expect(again.id).not.toBe(c.id);
  });
});

describe('tags', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  it('adds tags, normalised, ignoring those already there', async () => {
    const c = await create(t, { phone: usPhone(), tags: ['vip'] });
    const res = await call(env.app, 'POST', `/contacts/${c.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['VIP', ' Lead ', 'lead', 'q3.2026'] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...c,
      tags: ['vip', 'lead', 'q3.2026'],
      updatedAt: expect.stringMatching(ISO),
    });
    const again = await call(env.app, 'POST', `/contacts/${c.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['lead'] },
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect((await getOk(t, c.id)).tags).toEqual(['vip', 'lead', 'q3.2026']);
  });

  it('refuses bad tags, an empty list, and going over 50', async () => {
    const c = await create(t, { phone: usPhone(), tags: Array.from({ length: 49 }, (_, i) => `t${i}`) });
    const bad = await call(env.app, 'POST', `/contacts/${c.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['ok', 'no/slash'] },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(fieldsOf(bad)).toEqual(['tags[1]']);
    const empty = await call(env.app, 'POST', `/contacts/${c.id}/tags`, {
      key: t.apiKey,
      body: { tags: [] },
    });
    expectError(empty, 400, 'INVALID_REQUEST');
    expect(fieldsOf(empty)).toEqual(['tags']);
    const over = await call(env.app, 'POST', `/contacts/${c.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['t0', 'new1', 'new2'] },
    });
    expectError(over, 400, 'INVALID_REQUEST');
    expect(fieldsOf(over)).toEqual(['tags']);
    const fits = await call(env.app, 'POST', `/contacts/${c.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['t0', 'new1'] },
    });
    expect(fits.status).toBe(200);
    expect(fits.body.tags).toHaveLength(50);
  });

  it('removes a tag (given in any case), and answers 204 when it is absent', async () => {
    const c = await create(t, { phone: usPhone(), tags: ['vip', 'lead:2026', 'early bird'] });
    const res = await call(env.app, 'DELETE', `/contacts/${c.id}/tags/VIP`, { key: t.apiKey });
    expect(res.status).toBe(204);
    expect((await getOk(t, c.id)).tags).toEqual(['lead:2026', 'early bird']);
    const encoded = await call(
      env.app,
      'DELETE',
      `/contacts/${c.id}/tags/${encodeURIComponent('lead:2026')}`,
      {
        key: t.apiKey,
      },
    );
    expect(encoded.status).toBe(204);
    const spaced = await call(env.app, 'DELETE', `/contacts/${c.id}/tags/early%20bird`, { key: t.apiKey });
    expect(spaced.status).toBe(204);
    expect((await getOk(t, c.id)).tags).toEqual([]);
    const absent = await call(env.app, 'DELETE', `/contacts/${c.id}/tags/vip`, { key: t.apiKey });
    expect(absent.status).toBe(204);
    const invalid = await call(env.app, 'DELETE', `/contacts/${c.id}/tags/%23%23`, { key: t.apiKey });
    expect(invalid.status).toBe(204);
    expect((await getOk(t, c.id)).tags).toEqual([]);
  });

  it('answers 404 for an unknown contact', async () => {
    const id = 'ctc_01jv4e2k7qf3x8m2n5p6r9s0tb';
    expectError(
      await call(env.app, 'POST', `/contacts/${id}/tags`, { key: t.apiKey, body: { tags: ['a'] } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/contacts/${id}/tags/a`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});

describe('tenants', () => {
  it("cannot see or touch another account's contact", async () => {
    const owner = await tenant(env.app, env.partner.partnerKey);
    const stranger = await tenant(env.app, env.partner.partnerKey);
    const c = await create(owner, { phone: '+12015550601', name: 'Private', tags: ['secret'] });
    await create(stranger, { phone: usPhone(), name: 'Own' });
    const key = stranger.apiKey;
    const attempts: Reply[] = [
      await call(env.app, 'GET', `/contacts/${c.id}`, { key }),
      await call(env.app, 'PATCH', `/contacts/${c.id}`, { key, body: { name: 'Hijacked' } }),
      await call(env.app, 'PUT', `/contacts/${c.id}`, { key, body: { phone: c.phone, name: 'Hijacked' } }),
      await call(env.app, 'POST', `/contacts/${c.id}/tags`, { key, body: { tags: ['pwned'] } }),
      await call(env.app, 'DELETE', `/contacts/${c.id}/tags/secret`, { key }),
      await call(env.app, 'DELETE', `/contacts/${c.id}`, { key }),
    ];
    for (const res of attempts) expectError(res, 404, 'RESOURCE_NOT_FOUND');

    const list = await call(env.app, 'GET', '/contacts', { key, query: { limit: '100' } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: { name: string }) => x.name)).toEqual(['Own']);
    for (const query of [{ phone: c.phone }, { q: 'Private' }, { tag: 'secret' }] as Record<
      string,
      string
    >[]) {
      const filtered = await call(env.app, 'GET', '/contacts', { key, query });
      expect(filtered.body.data, JSON.stringify(query)).toEqual([]);
    }
    // The same phone is free in the stranger's account.
    expect((await create(stranger, { phone: c.phone })).phone).toBe(c.phone);

    expect(await getOk(owner, c.id)).toEqual(c);
    expect(await eventsOf(stranger.accountId)).toEqual([
      expect.objectContaining({ type: 'contact.created' }),
      expect.objectContaining({ type: 'contact.created' }),
    ]);
    expect((await eventsOf(owner.accountId)).map((e) => e.type)).toEqual(['contact.created']);
  });

  it('creates at once: each phone once, the rest 409 naming the winner, one event per contact', async () => {
    // Requests arriving together are written together (contacts/service.ts createContacts): the
    // same phone twice in one batch, in another account too, and one already taken.
    const t = await tenant(env.app, env.partner.partnerKey);
    const other = await tenant(env.app, env.partner.partnerKey);
    const taken = await create(t, { phone: '+12015550190' });
    const phones = ['+12015550191', '+12015550192', '+12015550191', '+12015550190', '+12015550192'];
    const replies = await Promise.all([
      ...phones.map((phone, i) =>
        call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone, name: `At once ${i}` } }),
      ),
      call(env.app, 'POST', '/contacts', { key: other.apiKey, body: { phone: '+12015550191' } }),
    ]);
    const mine = replies.slice(0, 5);
    expect(mine.map((r) => r.status).sort()).toEqual([201, 201, 409, 409, 409]);
    const created = new Map(mine.filter((r) => r.status === 201).map((r) => [r.body.phone, r.body.id]));
    expect([...created.keys()].sort()).toEqual(['+12015550191', '+12015550192']);
    for (const [i, r] of mine.entries()) {
      if (r.status !== 409) continue;
      const winner = phones[i] === '+12015550190' ? taken.id : created.get(phones[i]!);
      expect(r.body.error.details).toEqual([
        { field: 'phone', issue: 'belongs to another contact', contactId: winner },
      ]);
    }
    expect(replies[5]!.status).toBe(201);
    const events = await call(env.app, 'GET', '/events', {
      key: t.apiKey,
      query: { type: 'contact.created', limit: '100' },
    });
    const evented = events.body.data.map((e: { data: { id: string } }) => e.data.id);
    for (const id of created.values()) expect(evented.filter((e: string) => e === id)).toHaveLength(1);
  });

  it('lets a partner key act on its account with X-Account-Id', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', '/contacts', {
      key: env.partner.partnerKey,
      accountId: t.accountId,
      body: { phone: usPhone() },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await getOk(t, res.body.id)).toEqual(res.body);
  });
});

describe('events', () => {
  it('records each change with the contact as the API shows it', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await create(t, { phone: '+12015550701', name: 'Evented', tags: ['one'] });
    // A failed create (409) and a no-op tag add record nothing.
    expectError(
      await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: '201-555-0701' } }),
      409,
      'CONFLICT',
    );
    const noop = await call(env.app, 'POST', `/contacts/${created.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['ONE'] },
    });
    expect(noop.status).toBe(200);
    // Neither does a failed validation, nor removing an absent tag.
    await call(env.app, 'PATCH', `/contacts/${created.id}`, { key: t.apiKey, body: { email: 'bad' } });
    expect(
      (await call(env.app, 'DELETE', `/contacts/${created.id}/tags/absent`, { key: t.apiKey })).status,
    ).toBe(204);
    expect((await eventsOf(t.accountId)).map((e) => e.type)).toEqual(['contact.created']);

    const patched = (
      await call(env.app, 'PATCH', `/contacts/${created.id}`, {
        key: t.apiKey,
        body: { attributes: { a: 1 } },
      })
    ).body;
    const tagged = (
      await call(env.app, 'POST', `/contacts/${created.id}/tags`, {
        key: t.apiKey,
        body: { tags: ['one', 'Two', 'three'] },
      })
    ).body;
    expect(tagged.tags).toEqual(['one', 'two', 'three']);
    expect(
      (await call(env.app, 'DELETE', `/contacts/${created.id}/tags/TWO`, { key: t.apiKey })).status,
    ).toBe(204);
    const untagged = await getOk(t, created.id);
    const replaced = (
      await call(env.app, 'PUT', `/contacts/${created.id}`, { key: t.apiKey, body: { phone: created.phone } })
    ).body;
    // A 409 on PATCH records nothing either.
    const other = await create(t, { phone: '+12015550702' });
    expectError(
      await call(env.app, 'PATCH', `/contacts/${other.id}`, {
        key: t.apiKey,
        body: { phone: created.phone },
      }),
      409,
      'CONFLICT',
    );
    expect((await call(env.app, 'DELETE', `/contacts/${created.id}`, { key: t.apiKey })).status).toBe(204);

    const events = await eventsOf(t.accountId);
    expect(events.map((e) => e.type)).toEqual([
      'contact.created',
      'contact.updated',
      'contact.tagged',
      'contact.untagged',
      'contact.updated',
      'contact.created',
      'contact.deleted',
    ]);
    for (const e of events) {
      expect(e).toEqual({
        type: e.type,
        id: expect.stringMatching(/^evt_[0-9a-z]{26}$/),
        createdAt: expect.stringMatching(ISO),
        accountId: t.accountId,
        data: expect.any(Object),
      });
    }
    const [eCreated, eUpdated, eTagged, eUntagged, eReplaced, eOther, eDeleted] = events;
    expect(eCreated.data).toEqual(created);
    // contact.updated says what the change moved, with the values before it.
    expect(eUpdated.data).toEqual({ ...patched, previous: { attributes: {} } });
    expect(eTagged.data).toEqual({ ...tagged, tagsAdded: ['two', 'three'] });
    expect(eUntagged.data).toEqual({ ...untagged, tagsRemoved: ['two'] });
    expect(eReplaced.data).toEqual({
      ...replaced,
      previous: { name: 'Evented', tags: ['one', 'three'], attributes: { a: 1 } },
    });
    expect(eOther.data).toEqual(other);
    expect(eDeleted.data).toMatchObject({ ...replaced });
    expect(eDeleted.data.id).toBe(created.id);
  });
});
