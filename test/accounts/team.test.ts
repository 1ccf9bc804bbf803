// Team members through HTTP: adding, reading, listing, filtering and removing the members of an
// account, the refusals of bad input and duplicate emails, and the wall between tenants.
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/kernel/values/ids.ts';
import { MAX_MEMBERS_PER_ACCOUNT } from '../../src/modules/team/service.ts';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_ID = 'usr_01jh0000000000000000000000';

interface Member {
  id: string;
  name: string;
  email: string;
  role: 'admin' | 'agent';
  createdAt: string;
}

let n = 0;
const uniqueEmail = () => `member${++n}@example.com`;

async function add(key: string, body: Record<string, unknown> = {}): Promise<Member> {
  const res = await call(env.app, 'POST', '/team/members', {
    key,
    body: { name: 'Member', email: uniqueEmail(), role: 'agent', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function listAll(key: string, query: Record<string, string> = {}): Promise<Member[]> {
  const res = await call(env.app, 'GET', '/team/members', { key, query: { limit: '100', ...query } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.nextCursor).toBeNull();
  return res.body.data;
}

function detailsOf(res: Reply): { field: string; issue: string }[] {
  return res.body.error?.details ?? [];
}

describe('adding a team member', () => {
  it('answers 201 with the member, name trimmed and email lower-cased', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const before = Date.now();
    const res = await call(env.app, 'POST', '/team/members', {
      key: t.apiKey,
      body: { name: '  Ann Lee  ', email: 'Ann.Lee@Example.COM', role: 'admin' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^usr_[0-9a-z]{26}$/),
      name: 'Ann Lee',
      email: 'ann.lee@example.com',
      role: 'admin',
      availability: 'online',
      availabilityChangedAt: null,
      createdAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);

    const got = await call(env.app, 'GET', `/team/members/${res.body.id}`, { key: t.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('works with a partner key acting on the account', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', '/team/members', {
      key: env.partner.partnerKey,
      accountId: t.accountId,
      body: { name: 'Bo', email: uniqueEmail(), role: 'agent' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await listAll(t.apiKey)).map((m) => m.id)).toEqual([res.body.id]);
  });

  const invalidBodies: [string, Record<string, unknown>, { field: string; issue: string }][] = [
    ['a missing name', { email: 'a@example.com', role: 'agent' }, { field: 'name', issue: 'is required' }],
    ['a missing email', { name: 'A', role: 'agent' }, { field: 'email', issue: 'is required' }],
    ['a missing role', { name: 'A', email: 'a@example.com' }, { field: 'role', issue: 'is required' }],
    [
      'an empty name',
      { name: '', email: 'a@example.com', role: 'agent' },
      { field: 'name', issue: expect.any(String) },
    ],
    [
      'a blank name',
      { name: '   ', email: 'a@example.com', role: 'agent' },
      { field: 'name', issue: 'must not be blank' },
    ],
    [
      'a name over 200 characters',
      { name: 'x'.repeat(201), email: 'a@example.com', role: 'agent' },
      { field: 'name', issue: expect.any(String) },
    ],
    [
      'a malformed email',
      { name: 'A', email: 'not-an-email', role: 'agent' },
      { field: 'email', issue: expect.stringContaining('email') },
    ],
    [
      'an email over 254 characters',
      {
        name: 'A',
        email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`,
        role: 'agent',
      },
      { field: 'email', issue: expect.any(String) },
    ],
    [
      'a non-string email',
      { name: 'A', email: 42, role: 'agent' },
      { field: 'email', issue: expect.any(String) },
    ],
    [
      'an unknown role',
      { name: 'A', email: 'a@example.com', role: 'owner' },
      { field: 'role', issue: 'must be one of admin, agent' },
    ],
    [
      'an unknown field',
      { name: 'A', email: 'a@example.com', role: 'agent', nickname: 'a' },
      { field: 'nickname', issue: 'is not a known field' },
    ],
  ];

  for (const [what, body, detail] of invalidBodies) {
    it(`refuses ${what} with 400 and the field, creating nothing`, async () => {
      const t = await tenant(env.app, env.partner.partnerKey);
      const res = await call(env.app, 'POST', '/team/members', { key: t.apiKey, body });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(detailsOf(res)).toContainEqual(detail);
      expect(await listAll(t.apiKey)).toEqual([]);
    });
  }

  it('refuses a missing body and a non-JSON body', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expectError(await call(env.app, 'POST', '/team/members', { key: t.apiKey }), 400, 'INVALID_REQUEST');
    const text = await call(env.app, 'POST', '/team/members', {
      key: t.apiKey,
      body: 'name=A',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(await listAll(t.apiKey)).toEqual([]);
  });
});

describe('duplicate emails', () => {
  it('answers 409 naming the existing member, whatever the case of the email', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const first = await add(t.apiKey, { email: 'dup@example.com', role: 'admin' });
    for (const email of ['dup@example.com', 'DUP@Example.com']) {
      const res = await call(env.app, 'POST', '/team/members', {
        key: t.apiKey,
        body: { name: 'Someone else', email, role: 'agent' },
      });
      expectError(res, 409, 'CONFLICT');
      expect(res.body.error.details).toEqual([
        { field: 'email', issue: 'is already a team member', memberId: first.id },
      ]);
    }
    expect(await listAll(t.apiKey)).toEqual([first]);
  });

  it('lets another account use the same email', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const inA = await add(a.apiKey, { email: 'shared@example.com' });
    const inB = await add(b.apiKey, { email: 'Shared@example.com' });
    expect(inB.id).not.toBe(inA.id);
    expect(inB.email).toBe('shared@example.com');
  });

  it('frees the email once the member is removed', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const first = await add(t.apiKey, { email: 'again@example.com' });
    expect((await call(env.app, 'DELETE', `/team/members/${first.id}`, { key: t.apiKey })).status).toBe(204);
    const second = await add(t.apiKey, { email: 'again@example.com' });
    expect(second.id).not.toBe(first.id);
  });
});

describe('listing team members', () => {
  it('lists newest first, and pages neither skip nor repeat', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created: Member[] = [];
    for (let i = 0; i < 7; i++) created.push(await add(t.apiKey, { name: `M${i}` }));
    const newestFirst = created.map((m) => m.id).reverse();

    const whole = await call(env.app, 'GET', '/team/members', { key: t.apiKey });
    expect(whole.status).toBe(200);
    expect(whole.body).toEqual({ data: [...created].reverse(), nextCursor: null });

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: '3', ...(cursor ? { cursor } : {}) };
      const res = await call(env.app, 'GET', '/team/members', { key: t.apiKey, query });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      sizes.push(res.body.data.length);
      seen.push(...res.body.data.map((m: Member) => m.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual(newestFirst);
  });

  it('does not shift later pages when members are added while paging', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created: Member[] = [];
    for (let i = 0; i < 4; i++) created.push(await add(t.apiKey));
    const page1 = await call(env.app, 'GET', '/team/members', { key: t.apiKey, query: { limit: '2' } });
    await add(t.apiKey);
    const page2 = await call(env.app, 'GET', '/team/members', {
      key: t.apiKey,
      query: { limit: '2', cursor: page1.body.nextCursor },
    });
    expect([...page1.body.data, ...page2.body.data].map((m: Member) => m.id)).toEqual(
      created.map((m) => m.id).reverse(),
    );
  });

  it('filters by role', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const admin1 = await add(t.apiKey, { role: 'admin' });
    const agent1 = await add(t.apiKey, { role: 'agent' });
    const admin2 = await add(t.apiKey, { role: 'admin' });
    const agent2 = await add(t.apiKey, { role: 'agent' });
    expect((await listAll(t.apiKey, { role: 'admin' })).map((m) => m.id)).toEqual([admin2.id, admin1.id]);
    expect((await listAll(t.apiKey, { role: 'agent' })).map((m) => m.id)).toEqual([agent2.id, agent1.id]);

    const page1 = await call(env.app, 'GET', '/team/members', {
      key: t.apiKey,
      query: { role: 'agent', limit: '1' },
    });
    expect(page1.body.data.map((m: Member) => m.id)).toEqual([agent2.id]);
    const page2 = await call(env.app, 'GET', '/team/members', {
      key: t.apiKey,
      query: { role: 'agent', limit: '1', cursor: page1.body.nextCursor },
    });
    expect(page2.body).toEqual({ data: [agent1], nextCursor: null });
  });

  it('refuses a bad role, limit, cursor or an unknown filter with 400', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const cases: [Record<string, string>, string][] = [
      [{ role: 'owner' }, 'role'],
      [{ limit: '0' }, 'limit'],
      [{ limit: '101' }, 'limit'],
      [{ cursor: 'garbage' }, 'cursor'],
      [{ email: 'a@example.com' }, 'email'],
    ];
    for (const [query, field] of cases) {
      const res = await call(env.app, 'GET', '/team/members', { key: t.apiKey, query });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(detailsOf(res).map((d) => d.field)).toContain(field);
    }
  });
});

describe('getting and removing a team member', () => {
  it('answers 404 for an id that does not exist', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expectError(
      await call(env.app, 'GET', `/team/members/${UNKNOWN_ID}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', '/team/members/nonsense', { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/team/members/${UNKNOWN_ID}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('removes with 204 and no body; the member is gone afterwards', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const keep = await add(t.apiKey);
    const gone = await add(t.apiKey);
    const res = await call(env.app, 'DELETE', `/team/members/${gone.id}`, { key: t.apiKey });
    expect(res.status).toBe(204);
    expect(res.raw.body).toBe('');
    expectError(
      await call(env.app, 'GET', `/team/members/${gone.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/team/members/${gone.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect(await listAll(t.apiKey)).toEqual([keep]);
  });
});

describe('between tenants', () => {
  it("hides another account's members: 404 on get and delete, absent from lists", async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const ofA = await add(a.apiKey, { role: 'admin' });
    const ofB = await add(b.apiKey, { role: 'admin' });

    expectError(
      await call(env.app, 'GET', `/team/members/${ofA.id}`, { key: b.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/team/members/${ofA.id}`, { key: b.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect(await listAll(b.apiKey)).toEqual([ofB]);
    expect(await listAll(b.apiKey, { role: 'admin' })).toEqual([ofB]);

    // The refused delete left A's member in place.
    const still = await call(env.app, 'GET', `/team/members/${ofA.id}`, { key: a.apiKey });
    expect(still.status).toBe(200);
    expect(await listAll(a.apiKey)).toEqual([ofA]);
  });

  it("does not let a partner key reach one account's member through another", async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const ofA = await add(a.apiKey);
    const res = await call(env.app, 'GET', `/team/members/${ofA.id}`, {
      key: env.partner.partnerKey,
      accountId: b.accountId,
    });
    expectError(res, 404, 'RESOURCE_NOT_FOUND');
  });
});

describe('the member limit', () => {
  it(`refuses member ${MAX_MEMBERS_PER_ACCOUNT + 1} with 409 until one is removed`, async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const last = await add(t.apiKey, { email: 'last@example.com' });
    // Filling the rest through HTTP would take a thousand requests; the rows are what count.
    const ids = Array.from({ length: MAX_MEMBERS_PER_ACCOUNT - 1 }, () => newId('teamMember'));
    await env.tdb.db.query(
      `INSERT INTO team_members (id, account_id, name, email, role, created_at)
       SELECT id, $1, 'Filler', 'filler' || i || '@example.com', 'agent', now()
         FROM unnest($2::text[]) WITH ORDINALITY AS f (id, i)`,
      [t.accountId, ids],
    );

    const over = await call(env.app, 'POST', '/team/members', {
      key: t.apiKey,
      body: { name: 'One too many', email: uniqueEmail(), role: 'agent' },
    });
    expectError(over, 409, 'CONFLICT');
    expect(over.body.error.message).toContain(String(MAX_MEMBERS_PER_ACCOUNT));
    // A duplicate is still reported as one, with the member it collides with.
    const dup = await call(env.app, 'POST', '/team/members', {
      key: t.apiKey,
      body: { name: 'Dup', email: 'last@example.com', role: 'agent' },
    });
    expectError(dup, 409, 'CONFLICT');
    expect(dup.body.error.details).toEqual([
      { field: 'email', issue: 'is already a team member', memberId: last.id },
    ]);

    expect((await call(env.app, 'DELETE', `/team/members/${last.id}`, { key: t.apiKey })).status).toBe(204);
    await add(t.apiKey);
  });
});
