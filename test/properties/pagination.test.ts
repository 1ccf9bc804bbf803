// Property: walking a cursor-paginated list page by page, with random page sizes, while items are
// created and deleted between page reads, never returns an item twice and never skips one that
// existed, matching the filter, for the whole walk; items created or deleted meanwhile may or may
// not appear. Pages come newest first, so the walk's ids only ever go down. Through HTTP, on
// GET /contacts (unfiltered, by tag, by free-text search: the search reads in bounded windows of
// its own) and GET /templates (by category), the lists that clients walk most and that change
// under them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

type Tenant = Awaited<ReturnType<typeof tenant>>;

/** A list as the walk sees it: how to make and remove an item, and a filter that picks some. */
interface List {
  path: string;
  /** The query that selects the items made with `picked`. */
  filters: Record<string, Record<string, string>>;
  create(t: Tenant, picked: boolean): Promise<string>;
  remove(t: Tenant, id: string): Promise<void>;
}

let made = 0;

async function created(res: Reply): Promise<string> {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function removed(res: Reply): Promise<void> {
  expect(res.status, JSON.stringify(res.body)).toBe(204);
}

const CONTACTS: List = {
  path: '/contacts',
  filters: { none: {}, tag: { tag: 'vip' }, search: { q: 'starred' } },
  create: (t, picked) => {
    const n = made++;
    return call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: {
        phone: `+1201555${String(n % 10_000).padStart(4, '0')}`,
        name: picked ? `Starred customer ${n}` : `Customer ${n}`,
        tags: picked ? ['vip'] : ['lead'],
      },
    }).then(created);
  },
  remove: (t, id) => call(env.app, 'DELETE', `/contacts/${id}`, { key: t.apiKey }).then(removed),
};

const TEMPLATES: List = {
  path: '/templates',
  filters: { none: {}, category: { category: 'MARKETING' } },
  create: (t, picked) =>
    call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name: `walk_${made++}`,
        language: 'en_US',
        category: picked ? 'MARKETING' : 'UTILITY',
        components: [{ type: 'BODY', text: 'Your order has shipped. Reply STOP to opt out.' }],
      },
    }).then(created),
  remove: (t, id) => call(env.app, 'DELETE', `/templates/${id}`, { key: t.apiKey }).then(removed),
};

/** What happens between two page reads: an item made (picked by the filter, or not), or one deleted. */
type Change = { kind: 'create'; picked: boolean } | { kind: 'delete'; which: number };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), picked: fc.boolean() }),
  fc.record({ kind: fc.constant('delete' as const), which: fc.nat() }),
);

const walkArb = (filters: string[]) =>
  fc.record({
    filter: fc.constantFrom(...filters),
    initial: fc.array(fc.boolean(), { maxLength: 24 }),
    // Page i is read with steps[i % steps.length]'s limit, then its changes are made.
    steps: fc.array(
      fc.record({
        limit: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 100 })),
        changes: fc.array(changeArb, { maxLength: 4 }),
      }),
      { minLength: 1, maxLength: 8 },
    ),
  });

async function checkWalks(list: List, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(walkArb(Object.keys(list.filters)), async ({ filter, initial, steps }) => {
      const t = await tenant(env.app, env.partner.partnerKey);
      const query = list.filters[filter]!;
      const matches = (picked: boolean) => filter === 'none' || picked;
      // Every item alive now, whether the filter picks it; and those alive since the walk began.
      const alive = new Map<string, boolean>();
      for (const picked of initial) alive.set(await list.create(t, picked), picked);
      const throughout = new Set([...alive].filter(([, picked]) => matches(picked)).map(([id]) => id));
      const ever = new Map(alive);

      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; ; page++) {
        // Every page removes at least one item for good, or ends the walk.
        expect(page, 'the walk never ends').toBeLessThanOrEqual(initial.length + steps.length * 4 + 1);
        const step = steps[page % steps.length]!;
        const res: Reply = await call(env.app, 'GET', list.path, {
          key: t.apiKey,
          query: { ...query, limit: String(step.limit), ...(cursor ? { cursor } : {}) },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const ids = res.body.data.map((item: { id: string }) => item.id);
        expect(ids.length).toBeLessThanOrEqual(step.limit);
        seen.push(...ids);
        cursor = res.body.nextCursor;
        if (!cursor) break;
        // A page that says more follows is full.
        expect(ids).toHaveLength(step.limit);
        for (const change of step.changes) {
          if (change.kind === 'create') {
            const id = await list.create(t, change.picked);
            alive.set(id, change.picked);
            ever.set(id, change.picked);
          } else if (alive.size > 0) {
            const id = [...alive.keys()][change.which % alive.size]!;
            await list.remove(t, id);
            alive.delete(id);
            throughout.delete(id);
          }
        }
      }

      // Newest first and never back: each id below the one before it, so none twice.
      expect(seen).toEqual([...seen].sort().reverse());
      expect(new Set(seen).size).toBe(seen.length);
      // Only this account's items, each one the filter picks.
      for (const id of seen) expect(ever.has(id) && matches(ever.get(id)!), id).toBe(true);
      // Nothing that was there all along, and picked, was skipped.
      const missing = [...throughout].filter((id) => !seen.includes(id));
      expect(missing).toEqual([]);
    }),
    { numRuns },
  );
}

describe('cursor pagination while the list changes', () => {
  it('GET /contacts: no item twice, none that stayed skipped', { timeout: 60_000 }, async () => {
    await checkWalks(CONTACTS, 100);
  });

  it('GET /templates: no item twice, none that stayed skipped', { timeout: 60_000 }, async () => {
    await checkWalks(TEMPLATES, 60);
  });

  it('a cursor the API did not return is refused, not read as a position', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), async (text) => {
        const cursor = Buffer.from(text, 'utf8').toString('base64url');
        fc.pre(!/^[a-z]+_[0-9a-z]{26}$/.test(text) && cursor.length > 0);
        const res = await call(env.app, 'GET', '/contacts', { key: t.apiKey, query: { cursor } });
        expectError(res, 400, 'INVALID_REQUEST');
      }),
      { numRuns: 50 },
    );
  });
});
