// GET /contacts?q= takes one of three paths (src/modules/contacts/repo.ts, listContacts): a walk of
// the newest rows (common term), a longer walk sized by the density seen (medium term), or the
// trigram index (rare term, or matches that are all old). Whatever the path, every page must be
// exactly what the plain query gives: same rows, same order, cursors that neither skip nor repeat.
import { beforeAll, describe, expect, it } from 'vitest';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp();
const ROWS = 6000;
let t: { accountId: string; apiKey: string };

beforeAll(async () => {
  t = await tenant(env.app, env.partner.partnerKey);
  // Names: "common" on every 2nd row; "medium" on every 150th; "oldie" only on the 30 oldest rows;
  // "rarity" on 3 rows spread out. Ids grow with g, so g = ROWS is the newest contact.
  await env.tdb.db.query(
    `INSERT INTO contacts (id, account_id, phone, name, email, created_at, updated_at)
     SELECT 'ctc_' || lpad(to_hex(g), 26, '0'), $1, '+1303' || lpad(g::text, 7, '0'),
            concat_ws(' ', CASE WHEN g % 2 = 0 THEN 'common' END, CASE WHEN g % 150 = 0 THEN 'medium' END,
                      CASE WHEN g <= 30 THEN 'oldie' END, CASE WHEN g IN (17, 2500, 5999) THEN 'rarity' END,
                      'n' || g),
            NULL, now(), now()
       FROM generate_series(1, $2::int) AS g`,
    [t.accountId, ROWS],
  );
  await env.tdb.db.exec('ANALYZE contacts');
}, 120_000);

async function truth(q: string): Promise<string[]> {
  const { rows } = await env.tdb.db.query<{ id: string }>(
    `SELECT id FROM contacts WHERE account_id = $1 AND search_text LIKE $2 ORDER BY id DESC`,
    [t.accountId, `%${q}%`],
  );
  return rows.map((r) => r.id);
}

async function pages(q: string, limit: number): Promise<string[][]> {
  const out: string[][] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const res: Reply = await call(env.app, 'GET', '/contacts', {
      key: t.apiKey,
      query: { q, limit: String(limit), ...(cursor ? { cursor } : {}) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(res.body.data.map((c: { id: string }) => c.id));
    cursor = res.body.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('too many pages');
}

describe('every search path gives the exact pages of the plain query', () => {
  for (const [q, what] of [
    ['common', 'a common term (the newest rows fill the page)'],
    ['medium', 'a medium term (a longer walk, sized by the density seen)'],
    ['oldie', 'a term whose matches are all old (the trigram index)'],
    ['rarity', 'a rare term (the trigram index)'],
    ['nothing-like-this', 'a term with no match'],
  ] as const) {
    it(what, async () => {
      const expected = await truth(q);
      if (q !== 'nothing-like-this') expect(expected.length).toBeGreaterThan(0);
      const first = await pages(q, 21);
      expect(first[0]).toEqual(expected.slice(0, 21));
      if (expected.length <= 300) {
        // Paging through all of them: the concatenation is the whole ordered list.
        expect((await pages(q, 7)).flat()).toEqual(expected);
      }
    });
  }
});
