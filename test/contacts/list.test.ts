// GET /contacts: every filter alone and combined (tag, phone, optedIn, marketingOptOut, createdAfter, updatedAfter,
// attributes[name], q), the query checks, and cursor pagination that neither repeats nor skips a
// contact while new contacts arrive between page reads.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { createTestApp } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

type Tenant = { accountId: string; apiKey: string };
interface Contact {
  id: string;
  phone: string;
  name: string | null;
  email: string | null;
  tags: string[];
  attributes: Record<string, unknown>;
  optedIn: boolean;
  marketingOptOut: boolean;
  createdAt: string;
  updatedAt: string;
}

async function create(t: Tenant, body: Record<string, unknown>): Promise<Contact> {
  const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

// The body of a list answer, or of an error (checked with expectError).
type ListBody = { data: Contact[]; nextCursor: string | null; error?: any };

/** GET /contacts with a raw query string (repeated keys and brackets are sent as written). */
function list(t: Tenant, query: string): Promise<Reply<ListBody>> {
  return call(env.app, 'GET', `/contacts${query ? `?${query}` : ''}`, { key: t.apiKey });
}

/** The names of the contacts a query finds (one page of up to 100), newest first. */
async function names(t: Tenant, query: string): Promise<(string | null)[]> {
  const res = await list(t, query ? `limit=100&${query}` : 'limit=100');
  expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
  expect(res.body.nextCursor).toBeNull();
  return res.body.data.map((c) => c.name);
}

const q = (text: string) => `q=${encodeURIComponent(text)}`;

describe('filters and search', () => {
  let t: Tenant;
  const c: Record<string, Contact> = {};
  // Newest first: the order every list answers in.
  const all = [
    'Frank 1000',
    'snakeXcase',
    'snake_case',
    'Dan',
    'Carol 100% Sure',
    'Bob Brown',
    'Alice Anders',
  ];

  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
    c.alice = await create(t, {
      name: 'Alice Anders',
      phone: '+12015550801',
      email: 'Alice@Acme.io',
      tags: ['vip', 'lead'],
      attributes: { plan: 'gold', seats: 10, beta: true },
      optedIn: true,
      marketingOptOut: true,
    });
    c.bob = await create(t, {
      name: 'Bob Brown',
      phone: '+12015550802',
      email: 'bob@example.org',
      tags: ['VIP'],
      attributes: { plan: 'silver', seats: '10', beta: false },
    });
    c.carol = await create(t, {
      name: 'Carol 100% Sure',
      phone: '+447911123456',
      email: 'carol_x@acme.io',
      tags: ['lead'],
      attributes: { plan: 'gold', code: 'true' },
      optedIn: true,
    });
    c.dan = await create(t, { name: 'Dan', phone: '+12015550804', marketingOptOut: true });
    c.snake = await create(t, { name: 'snake_case', phone: '+12025550805', email: 'snake@zoo.test' });
    c.camel = await create(t, { name: 'snakeXcase', phone: '+12025550806' });
    c.frank = await create(t, { name: 'Frank 1000', phone: '+12025550807', attributes: { seats: 10.5 } });
    // Another account's look-alikes must never show up.
    const other = await tenant(env.app, env.partner.partnerKey);
    await create(other, {
      name: 'Alice Anders',
      phone: '+12015550801',
      email: 'alice@acme.io',
      tags: ['vip', 'lead'],
      attributes: { plan: 'gold' },
      optedIn: true,
      marketingOptOut: true,
    });
  });

  it('lists everything newest first without filters', async () => {
    expect(await names(t, '')).toEqual(all);
    const res = await list(t, '');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(7);
    expect(res.body.data.at(-1)).toEqual(c.alice);
  });

  it('filters by tag: one, several (all must match), comma form, any case', async () => {
    expect(await names(t, 'tag=vip')).toEqual(['Bob Brown', 'Alice Anders']);
    expect(await names(t, 'tag=lead')).toEqual(['Carol 100% Sure', 'Alice Anders']);
    expect(await names(t, 'tag=vip&tag=lead')).toEqual(['Alice Anders']);
    expect(await names(t, 'tag=vip,lead')).toEqual(['Alice Anders']);
    expect(await names(t, `tag=${encodeURIComponent(' LEAD , Vip')}`)).toEqual(['Alice Anders']);
    expect(await names(t, 'tag=vip&tag=missing')).toEqual([]);
    expect(await names(t, 'tag=missing')).toEqual([]);
    const bad = await list(t, `tag=${encodeURIComponent('#no')}`);
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details).toEqual([{ field: 'tag[0]', issue: expect.any(String) }]);
  });

  it('filters by phone given in any format', async () => {
    expect(await names(t, `phone=${encodeURIComponent('+12015550802')}`)).toEqual(['Bob Brown']);
    expect(await names(t, `phone=${encodeURIComponent('(201) 555-0802')}`)).toEqual(['Bob Brown']);
    expect(await names(t, `phone=${encodeURIComponent('+44 7911 123456')}`)).toEqual(['Carol 100% Sure']);
    expect(await names(t, `phone=${encodeURIComponent('201 555 0899')}`)).toEqual([]);
    const bad = await list(t, 'phone=12');
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details).toEqual([{ field: 'phone', issue: expect.any(String) }]);
  });

  it('filters by optedIn', async () => {
    expect(await names(t, 'optedIn=true')).toEqual(['Carol 100% Sure', 'Alice Anders']);
    expect(await names(t, 'optedIn=false')).toEqual([
      'Frank 1000',
      'snakeXcase',
      'snake_case',
      'Dan',
      'Bob Brown',
    ]);
    expectError(await list(t, 'optedIn=maybe'), 400, 'INVALID_REQUEST');
  });

  it('filters by marketingOptOut, apart from optedIn', async () => {
    expect(await names(t, 'marketingOptOut=true')).toEqual(['Dan', 'Alice Anders']);
    expect(await names(t, 'marketingOptOut=false')).toEqual([
      'Frank 1000',
      'snakeXcase',
      'snake_case',
      'Carol 100% Sure',
      'Bob Brown',
    ]);
    expect(await names(t, 'optedIn=true&marketingOptOut=false')).toEqual(['Carol 100% Sure']);
    expect(await names(t, 'optedIn=false&marketingOptOut=true')).toEqual(['Dan']);
    const bad = await list(t, 'marketingOptOut=maybe');
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details).toEqual([{ field: 'marketingOptOut', issue: expect.any(String) }]);
  });

  it('filters by createdAfter, strictly after the time given', async () => {
    const after = (time: string) =>
      Object.values(c)
        .filter((x) => Date.parse(x.createdAt) > Date.parse(time))
        .sort((a, b) => (a.id < b.id ? 1 : -1))
        .map((x) => x.name);
    for (const pivot of [c.alice, c.carol, c.snake, c.frank]) {
      const expected = after(pivot.createdAt);
      expect(await names(t, `createdAfter=${encodeURIComponent(pivot.createdAt)}`)).toEqual(expected);
      expect(expected).not.toContain(pivot.name);
    }
    // The contacts created later than the first are all there (creation takes a few ms each).
    const fromBefore = new Date(Date.parse(c.alice.createdAt) - 1).toISOString();
    expect(await names(t, `createdAfter=${encodeURIComponent(fromBefore)}`)).toEqual(all);
    expect(
      await names(t, `createdAfter=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`),
    ).toEqual([]);
    const bad = await list(t, 'createdAfter=yesterday');
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details).toEqual([{ field: 'createdAfter', issue: expect.any(String) }]);
  });

  it('finds a contact created just after the time given, even when reading the clock is slow', async () => {
    // A clock read that takes a few milliseconds (a busy machine, a preempted process) must not
    // make a contact's id look older than its createdAt: createdAfter narrows by id first.
    const slowNow = () => {
      const until = Date.now() + 3;
      while (Date.now() < until) {}
      return new Date();
    };
    const app = await createTestApp(env.tdb.db, { now: slowNow });
    try {
      const slow = await tenant(app, env.partner.partnerKey);
      const made: Contact[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await call(app, 'POST', '/contacts', {
          key: slow.apiKey,
          body: { phone: `+1201555090${i}` },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        made.push(res.body);
      }
      for (const x of made) {
        const since = new Date(Date.parse(x.createdAt) - 1).toISOString();
        const res = await call(app, 'GET', `/contacts?createdAfter=${encodeURIComponent(since)}`, {
          key: slow.apiKey,
        });
        expect(res.status).toBe(200);
        expect(res.body.data.map((y: Contact) => y.id)).toContain(x.id);
      }
    } finally {
      await app.close();
    }
  });

  it('filters by updatedAfter', async () => {
    // Wait past the newest contact's time, so the change below is strictly later than all creations.
    const newest = Math.max(...Object.values(c).map((x) => Date.parse(x.updatedAt)));
    while (Date.now() <= newest + 1) await new Promise((r) => setTimeout(r, 2));
    const res = await call(env.app, 'PATCH', `/contacts/${c.bob.id}`, {
      key: t.apiKey,
      body: { attributes: { touched: true } },
    });
    expect(res.status).toBe(200);
    c.bob = res.body;
    const since = new Date(newest).toISOString();
    expect(await names(t, `updatedAfter=${encodeURIComponent(since)}`)).toEqual(['Bob Brown']);
    expect(await names(t, `updatedAfter=${encodeURIComponent(c.bob.updatedAt)}`)).toEqual([]);
    expect(await names(t, `updatedAfter=${encodeURIComponent(c.alice.createdAt)}&tag=vip`)).toEqual([
      'Bob Brown',
    ]);
    expectError(await list(t, 'updatedAfter=2026-13-45'), 400, 'INVALID_REQUEST');
  });

  it('filters by attribute equality, reading the value as string, number or boolean', async () => {
    expect(await names(t, 'attributes[plan]=gold')).toEqual(['Carol 100% Sure', 'Alice Anders']);
    expect(await names(t, 'attributes%5Bplan%5D=silver')).toEqual(['Bob Brown']);
    expect(await names(t, 'attributes[plan]=GOLD')).toEqual([]);
    // 10 is Alice's number and Bob's string.
    expect(await names(t, 'attributes[seats]=10')).toEqual(['Bob Brown', 'Alice Anders']);
    expect(await names(t, 'attributes[seats]=10.5')).toEqual(['Frank 1000']);
    expect(await names(t, 'attributes[seats]=10.0')).toEqual(['Alice Anders']);
    expect(await names(t, 'attributes[beta]=true')).toEqual(['Alice Anders']);
    expect(await names(t, 'attributes[beta]=false')).toEqual(['Bob Brown']);
    // Carol's code is the string "true".
    expect(await names(t, 'attributes[code]=true')).toEqual(['Carol 100% Sure']);
    expect(await names(t, 'attributes[plan]=gold&attributes[seats]=10')).toEqual(['Alice Anders']);
    expect(await names(t, 'attributes[nothing]=1')).toEqual([]);
    const bad = await list(t, `${encodeURIComponent('attributes[bad-name]')}=1`);
    expectError(bad, 400, 'INVALID_REQUEST');
  });

  it('searches name, email and phone, case-insensitively', async () => {
    expect(await names(t, q('alice'))).toEqual(['Alice Anders']);
    expect(await names(t, q('ANDERS'))).toEqual(['Alice Anders']);
    expect(await names(t, q('lice And'))).toEqual(['Alice Anders']);
    expect(await names(t, q('ACME.IO'))).toEqual(['Carol 100% Sure', 'Alice Anders']);
    expect(await names(t, q('example.org'))).toEqual(['Bob Brown']);
    expect(await names(t, q('zoo.test'))).toEqual(['snake_case']);
    expect(await names(t, q('nobody'))).toEqual([]);
  });

  it('searches phones ignoring spaces, dashes and brackets', async () => {
    expect(await names(t, q('+12015550802'))).toEqual(['Bob Brown']);
    expect(await names(t, q('555-0802'))).toEqual(['Bob Brown']);
    expect(await names(t, q('(201) 555-08'))).toEqual(['Dan', 'Bob Brown', 'Alice Anders']);
    expect(await names(t, q('+1 202 555'))).toEqual(['Frank 1000', 'snakeXcase', 'snake_case']);
    expect(await names(t, q('7911 123 456'))).toEqual(['Carol 100% Sure']);
    expect(await names(t, q('+44 7911'))).toEqual(['Carol 100% Sure']);
  });

  it('takes % and _ literally', async () => {
    expect(await names(t, q('00%'))).toEqual(['Carol 100% Sure']);
    expect(await names(t, q('100% s'))).toEqual(['Carol 100% Sure']);
    expect(await names(t, q('e_c'))).toEqual(['snake_case']);
    expect(await names(t, q('l_x'))).toEqual(['Carol 100% Sure']);
    expect(await names(t, q('%%%'))).toEqual([]);
    expect(await names(t, q('___'))).toEqual([]);
    expect(await names(t, q('\\\\\\'))).toEqual([]);
  });

  it('refuses a search shorter than 3 characters', async () => {
    for (const text of ['ab', '  ab  ', 'a']) {
      const res = await list(t, q(text));
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details).toEqual([{ field: 'q', issue: expect.any(String) }]);
    }
  });

  it('combines filters: all must hold', async () => {
    expect(await names(t, 'tag=vip&optedIn=true')).toEqual(['Alice Anders']);
    expect(await names(t, 'tag=vip&optedIn=false')).toEqual(['Bob Brown']);
    expect(await names(t, `${q('acme')}&tag=lead`)).toEqual(['Carol 100% Sure', 'Alice Anders']);
    expect(await names(t, `${q('acme')}&tag=vip`)).toEqual(['Alice Anders']);
    expect(await names(t, `attributes[plan]=gold&optedIn=true&tag=lead&${q('carol')}`)).toEqual([
      'Carol 100% Sure',
    ]);
    expect(
      await names(
        t,
        `phone=${encodeURIComponent('201-555-0801')}&attributes[plan]=gold&tag=vip&optedIn=true`,
      ),
    ).toEqual(['Alice Anders']);
    expect(await names(t, `phone=${encodeURIComponent('201-555-0801')}&optedIn=false`)).toEqual([]);
    expect(await names(t, 'tag=vip&marketingOptOut=true')).toEqual(['Alice Anders']);
    expect(await names(t, `${q('acme')}&marketingOptOut=false`)).toEqual(['Carol 100% Sure']);
    expect(
      await names(t, `createdAfter=${encodeURIComponent(c.alice.createdAt)}&attributes[plan]=gold`),
    ).toEqual(['Carol 100% Sure']);
  });

  it('refuses unknown query parameters, bad limits and bad cursors', async () => {
    const unknown = await list(t, 'status=open');
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(unknown.body.error.details).toEqual([{ field: 'status', issue: 'is not a known field' }]);
    expectError(await list(t, 'attribute[plan]=gold'), 400, 'INVALID_REQUEST');
    for (const limit of ['0', '101', 'ten']) {
      const res = await list(t, `limit=${limit}`);
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['limit']);
    }
    for (const cursor of ['garbage', 'bm90LWEtY3Vyc29y', '%%%']) {
      const res = await list(t, `cursor=${encodeURIComponent(cursor)}`);
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details).toEqual([{ field: 'cursor', issue: expect.any(String) }]);
    }
  });
});

describe('search beyond ASCII', () => {
  it('matches accented and non-Latin names whatever their case', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await create(t, { name: 'Élodie Ünal', phone: '+12015550950', email: 'ELODIE@Example.FR' });
    await create(t, { name: 'Ελένη Παππά', phone: '+12015550951' });
    await create(t, { name: 'Elodie Unal', phone: '+12015550952' });
    expect(await names(t, q('élodie'))).toEqual(['Élodie Ünal']);
    expect(await names(t, q('ÉLODIE ÜN'))).toEqual(['Élodie Ünal']);
    expect(await names(t, q('ünal'))).toEqual(['Élodie Ünal']);
    expect(await names(t, q('ΕΛΈΝΗ'))).toEqual(['Ελένη Παππά']);
    expect(await names(t, q('elodie'))).toEqual(['Elodie Unal', 'Élodie Ünal']);
  });
});

describe('pagination', () => {
  it('pages newest first, without repeats or skips, while contacts are being added', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const existing: Contact[] = [];
    for (let i = 0; i < 45; i++) {
      existing.push(await create(t, { phone: `+1201555${String(2000 + i)}`, name: `Before ${i}` }));
    }
    const seen: Contact[] = [];
    const added: Contact[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(t, `limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.data);
      pageSizes.push(res.body.data.length);
      cursor = res.body.nextCursor;
      // New contacts arrive between page reads.
      for (let i = 0; i < 2; i++) {
        added.push(
          await create(t, {
            phone: `+1201555${String(3000 + added.length)}`,
            name: `During ${added.length}`,
          }),
        );
      }
      expect(++pages).toBeLessThan(10);
    } while (cursor);

    expect(pageSizes).toEqual([10, 10, 10, 10, 5]);
    const ids = seen.map((x) => x.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Exactly the contacts that existed when paging began, newest first, as they were.
    expect(seen).toEqual([...existing].reverse());
    expect(ids).toEqual([...ids].sort().reverse());
    for (const a of added) expect(ids).not.toContain(a.id);

    // A fresh listing starts with the newest, then everything else.
    const first = await list(t, 'limit=3');
    expect(first.body.data.map((x) => x.id)).toEqual(
      added
        .slice(-3)
        .reverse()
        .map((x) => x.id),
    );
  });

  it('ends with a null cursor when the last page is exactly full', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (let i = 0; i < 6; i++) await create(t, { phone: `+1201555${4000 + i}`, tags: i % 2 ? ['odd'] : [] });
    const one = await list(t, 'limit=3');
    expect(one.body.data).toHaveLength(3);
    expect(one.body.nextCursor).toEqual(expect.any(String));
    const two = await list(t, `limit=3&cursor=${encodeURIComponent(one.body.nextCursor!)}`);
    expect(two.body.data).toHaveLength(3);
    expect(two.body.nextCursor).toBeNull();
    expect(await list(t, 'limit=6')).toMatchObject({ body: { nextCursor: null } });
    expect((await list(t, '')).body.data).toHaveLength(6);

    // Filters hold across pages.
    const odd1 = await list(t, 'tag=odd&limit=2');
    const odd2 = await list(t, `tag=odd&limit=2&cursor=${encodeURIComponent(odd1.body.nextCursor!)}`);
    const odd = [...odd1.body.data, ...odd2.body.data];
    expect(odd.map((x) => x.phone)).toEqual(['+12015554005', '+12015554003', '+12015554001']);
    expect(odd2.body.nextCursor).toBeNull();
  });

  it("a cursor cannot reveal another account's contacts", async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    for (let i = 0; i < 3; i++) await create(a, { phone: `+1201555${5000 + i}` });
    const page = await list(a, 'limit=1');
    const res = await list(b, `cursor=${encodeURIComponent(page.body.nextCursor!)}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});
