// A fingerprint of everything one tenant has in the database: for each table, a hash of the rows of
// the account (account_id) or of its partner (partner_id), or of every row when a table has
// neither. Two equal fingerprints mean no request in between wrote anything of the tenant's.
import type { Database } from '../../src/kernel/db.ts';

export type Fingerprint = Record<string, string>;

/** Columns written by reading (last use of a key, once a minute), not by changing anything. */
const READ_MARKS = ['last_used_at'];

export async function fingerprint(
  db: Database,
  owner: { accountId: string; partnerId: string },
  options: { skip?: string[] } = {},
): Promise<Fingerprint> {
  const { rows: columns } = await db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  );
  const tables = new Map<string, string[]>();
  for (const c of columns) tables.set(c.table_name, [...(tables.get(c.table_name) ?? []), c.column_name]);
  const out: Fingerprint = {};
  for (const [table, cols] of tables) {
    if (options.skip?.includes(table)) continue;
    const mine = [
      ...(cols.includes('account_id') ? ['t.account_id = $1'] : []),
      ...(cols.includes('partner_id') ? ['t.partner_id = $2'] : []),
      ...(table === 'accounts' ? ['t.id = $1'] : []),
    ];
    // Both parameters appear in every statement (a prepared statement takes exactly its own).
    const where = `WHERE (${mine.join(' OR ') || 'true'}) AND $1::text IS NOT NULL AND $2::text IS NOT NULL`;
    const marks = READ_MARKS.map((c) => ` - '${c}'`).join('');
    const { rows } = await db.query<{ n: number; digest: string | null }>(
      `SELECT count(*)::int AS n, md5(string_agg((to_jsonb(t)${marks})::text, '|' ORDER BY (to_jsonb(t)${marks})::text)) AS digest
         FROM "${table}" t ${where}`,
      [owner.accountId, owner.partnerId],
    );
    out[table] = `${rows[0]!.n} rows ${rows[0]!.digest ?? '-'}`;
  }
  return out;
}

/** The tables whose fingerprint differs, as readable lines. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  return Object.keys({ ...before, ...after })
    .filter((t) => before[t] !== after[t])
    .map((t) => `${t}: ${before[t]} → ${after[t]}`);
}
