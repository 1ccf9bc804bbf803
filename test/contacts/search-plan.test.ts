// The query plans of GET /contacts on a realistically sized table: a selective search (`q`), tag
// filter and attribute filter must each be served by their GIN index from migrations/003
// (contacts_search, contacts_attributes), led by account_id, or the account's tag keys
// (contacts_account_tags, migrations/028), instead of walking the account's rows; and the plain list
// walks the account's own rows (contacts_account_id), never the primary key across all tenants. The SQL explained is exactly what listContacts issues: the repository runs
// against a wrapper that prefixes each statement with EXPLAIN.
import { beforeAll, describe, expect, it } from 'vitest';
import type { QueryResult, Sql } from '../../src/kernel/database/db.ts';
import { type ContactListParams, contactFilters } from '../../src/modules/contacts/filters.ts';
import { listContacts } from '../../src/modules/contacts/repo.ts';
import { call, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

const PER_ACCOUNT = 20_000;
// One contact in RARE_EVERY carries the tag `rare` and the attribute plan=platinum.
const RARE_EVERY = 1_000;
const SEED_TIMEOUT = 240_000;

type Tenant = { accountId: string; apiKey: string };

/**
 * Contacts numbered 1..PER_ACCOUNT with md5-derived names and emails, a common tag on every
 * contact, and a few attributes; `prefix` keeps the ids of two accounts apart.
 */
async function seed(accountId: string, prefix: string) {
  await env.tdb.db.query(
    `INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, opted_in, created_at, updated_at)
     SELECT 'ctc_' || $2 || lpad(g::text, 25, '0'),
            $1,
            '+1201' || lpad(g::text, 7, '0'),
            'Contact ' || substr(md5($2 || g::text), 1, 10),
            substr(md5($2 || g::text || 'e'), 1, 12) || '@example.com',
            CASE WHEN g % $4 = 0 THEN ARRAY['customer', 'rare'] ELSE ARRAY['customer', 'batch-' || (g % 7)] END,
            jsonb_build_object(
              'plan', CASE WHEN g % $4 = 0 THEN 'platinum' ELSE 'tier' || (g % 4) END,
              'seats', g % 50,
              'code', 'c' || g),
            g % 2 = 0,
            now() - (($3 - g) || ' seconds')::interval,
            now() - (($3 - g) || ' seconds')::interval
       FROM generate_series(1, $3) AS g`,
    [accountId, prefix, PER_ACCOUNT, RARE_EVERY],
  );
}

/**
 * The plan listContacts' last statement (or the `statement`-th) gets for these list parameters (as
 * the route reads them). Each statement answers no rows, so a walk goes on to the index lookup.
 */
async function planOf(
  accountId: string,
  query: ContactListParams,
  before: string | null = null,
  statement = -1,
): Promise<string> {
  const plans: string[] = [];
  const explaining: Sql = {
    async query<T>(text: string, params?: unknown[]): Promise<QueryResult<T>> {
      const result = await env.tdb.db.query<Record<string, string>>(`EXPLAIN ${text}`, params);
      plans.push(result.rows.map((r) => Object.values(r)[0]!).join('\n'));
      return { rows: [], rowCount: 0 };
    },
    exec: (text) => env.tdb.db.exec(text),
  };
  await listContacts(explaining, accountId, { limit: 20, before }, contactFilters(query, 'US'));
  return plans.at(statement)!;
}

describe('search and filter plans on 2 × 20,000 contacts', () => {
  let t: Tenant;
  let other: Tenant;
  // A 10-character piece of one contact's name, found nowhere else.
  let needle: string;

  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
    other = await tenant(env.app, env.partner.partnerKey);
    await seed(t.accountId, 'a');
    await seed(other.accountId, 'b');
    // VACUUM as well as ANALYZE: rows inserted in bulk sit in the GIN indexes' pending lists
    // (fastupdate) until a vacuum merges them, and a long pending list makes every GIN scan look
    // (and be) expensive. Autovacuum gets there soon after a load; this is that steady state.
    await env.tdb.db.exec('VACUUM contacts');
    // Statistics from every row, not ANALYZE's random sample of 30,000 of the 40,000: with a
    // sample, the estimates (and so the plans asserted here) changed from run to run.
    await env.tdb.db.exec(
      'SET default_statistics_target = 200; ANALYZE contacts; RESET default_statistics_target',
    );
    const { rows } = await env.tdb.db.query<{ name: string }>(
      "SELECT name FROM contacts WHERE id = 'ctc_a' || lpad('777', 25, '0')",
    );
    needle = rows[0]!.name.slice('Contact '.length);
  }, SEED_TIMEOUT);

  it('seeded what it meant to', async () => {
    const { rows } = await env.tdb.db.query<{ account_id: string; n: number }>(
      'SELECT account_id, count(*)::int AS n FROM contacts GROUP BY account_id ORDER BY account_id',
    );
    expect(rows.map((r) => r.n)).toEqual([PER_ACCOUNT, PER_ACCOUNT]);
    expect(needle).toMatch(/^[0-9a-f]{10}$/);
  });

  it('a selective q uses contacts_search', async () => {
    const plan = await planOf(t.accountId, { q: needle.slice(1, 8) });
    console.log(`[${env.tdb.db.kind}] q=${needle.slice(1, 8)}\n${plan}`);
    expect(plan).toMatch(/Bitmap Index Scan on contacts_search/);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it('a phone-like q uses contacts_search too', async () => {
    const plan = await planOf(t.accountId, { q: '(201) 000-0777' });
    console.log(`[${env.tdb.db.kind}] q=(201) 000-0777\n${plan}`);
    expect(plan).toMatch(/Bitmap Index Scan on contacts_search/);
  });

  it('the plain list and its next pages walk the account through contacts_account_id', async () => {
    for (const before of [null, `ctc_a${'0'.repeat(21)}9000`]) {
      const plan = await planOf(t.accountId, {}, before);
      console.log(`[${env.tdb.db.kind}] newest first, before ${before}\n${plan}`);
      expect(plan).toMatch(/Index Scan Backward using contacts_account_id/);
      expect(plan).not.toMatch(/contacts_pkey|Sort/);
    }
  });

  // The second account's rows are all newer than the first's: below an old cursor of its own lie
  // the other tenant's 20,000 rows and a few hundred of its own. Walking whole rows there, the
  // planner took the primary key's range and sorted it (reading every tenant's rows below the
  // cursor); below a cursor the ids come from the account's own index, whatever the cursor.
  it("a walk (a common tag) takes the account's newest rows from contacts_account_id, however far back", async () => {
    const newest = await planOf(other.accountId, { tag: ['customer'] }, null, 0);
    console.log(`[${env.tdb.db.kind}] tag=customer, no cursor: the walk\n${newest}`);
    expect(newest).toMatch(/Index Scan Backward using contacts_account_id/);
    expect(newest).not.toMatch(/contacts_pkey/);
    for (const before of [`ctc_b${'0'.repeat(21)}15000`, `ctc_b${'0'.repeat(22)}300`]) {
      const walk = await planOf(other.accountId, { tag: ['customer'] }, before, 0);
      console.log(`[${env.tdb.db.kind}] tag=customer, before ${before}: the walk\n${walk}`);
      // The InitPlan's lines (indented under it) and the rest.
      const lines = walk.split('\n');
      const at = lines.findIndex((l) => l.includes('InitPlan'));
      expect(at).toBeGreaterThan(0);
      const depth = lines[at]!.search(/\S/);
      let end = at + 1;
      while (end < lines.length && lines[end]!.search(/\S/) > depth) end++;
      const ids = lines.slice(at, end).join('\n');
      const outer = [...lines.slice(0, at), ...lines.slice(end)].join('\n');
      expect(ids).toMatch(/Index Only Scan Backward using contacts_account_id/);
      expect(ids).not.toMatch(/contacts_pkey|Sort/);
      expect(outer).toMatch(/Index Scan Backward using contacts_pkey/);
    }
  });

  it('a rare tag uses contacts_account_tags', async () => {
    const plan = await planOf(t.accountId, { tag: ['rare'] });
    console.log(`[${env.tdb.db.kind}] tag=rare\n${plan}`);
    expect(plan).toMatch(/Bitmap Index Scan on contacts_account_tags/);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it('a rare attribute value uses contacts_attributes', async () => {
    const plan = await planOf(t.accountId, { 'attributes[plan]': 'platinum' });
    console.log(`[${env.tdb.db.kind}] attributes[plan]=platinum\n${plan}`);
    expect(plan).toMatch(/Bitmap Index Scan on contacts_attributes/);
    expect(plan).not.toMatch(/Seq Scan/);
    // A value that may be a number is matched both ways; both readings use the index.
    const numeric = await planOf(t.accountId, { 'attributes[code]': '12345' });
    console.log(`[${env.tdb.db.kind}] attributes[code]=12345\n${numeric}`);
    expect(numeric.match(/Bitmap Index Scan on contacts_attributes/g)).toHaveLength(2);
  });

  it('answers the selective searches correctly through HTTP (timings printed, not judged)', async () => {
    const timed = async (query: string) => {
      const started = performance.now();
      const res = await call(env.app, 'GET', `/contacts?${query}`, { key: t.apiKey });
      const ms = performance.now() - started;
      console.log(`[${env.tdb.db.kind}] GET /contacts?${query}: ${res.status} in ${ms.toFixed(1)} ms`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as {
        data: { id: string; name: string; phone: string; tags: string[] }[];
        nextCursor: string | null;
      };
    };
    // Warm up the route (first-request compilation) before timing.
    await timed('limit=1');

    const byName = await timed(`q=${needle.slice(1, 8).toUpperCase()}`);
    expect(byName.data.map((c) => c.name)).toEqual([`Contact ${needle}`]);
    const byPhone = await timed(`q=${encodeURIComponent('(201) 000-0777')}`);
    expect(byPhone.data.map((c) => c.phone)).toEqual(['+12010000777']);

    const rare = await timed('tag=rare&limit=100');
    expect(rare.data).toHaveLength(PER_ACCOUNT / RARE_EVERY);
    expect(rare.nextCursor).toBeNull();
    expect(rare.data.every((c) => c.tags.includes('rare'))).toBe(true);
    const ids = rare.data.map((c) => c.id);
    expect(ids).toEqual([...ids].sort().reverse());

    const platinum = await timed('attributes[plan]=platinum&limit=100');
    expect(platinum.data.map((c) => c.id)).toEqual(ids);
    const code = await timed('attributes[code]=c12345');
    expect(code.data.map((c) => c.phone)).toEqual(['+12010012345']);

    // The other account's look-alikes never answer.
    const otherRare = await call(env.app, 'GET', '/contacts?tag=rare&limit=100', { key: other.apiKey });
    expect(otherRare.body.data).toHaveLength(PER_ACCOUNT / RARE_EVERY);
    expect(
      otherRare.body.data.map((c: { id: string }) => c.id).filter((id: string) => ids.includes(id)),
    ).toEqual([]);
    const otherNeedle = await call(env.app, 'GET', `/contacts?q=${needle}`, { key: other.apiKey });
    expect(otherNeedle.body.data).toEqual([]);
    expectError(await call(env.app, 'GET', '/contacts?q=ab', { key: t.apiKey }), 400, 'INVALID_REQUEST');
  });
});
