// Where a person's data is in the database: a scan of every text, JSON, array and bytea column of
// every table (ours and pg-boss's), for the erasure tests.
import type { Sql } from '../../src/kernel/database/db.ts';

/** Every place in the database that holds `needle` (case aside): table.column and how many rows. */
export async function placesHolding(sql: Sql, needle: string): Promise<string[]> {
  const { rows: columns } = await sql.query<{ t: string; c: string; type: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS t, quote_ident(column_name) AS c, data_type AS type
       FROM information_schema.columns
      WHERE table_schema IN ('public', 'pgboss')
        AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'ARRAY', 'bytea')
        AND table_name NOT IN (SELECT c.relname FROM pg_class c WHERE c.relispartition)`,
  );
  const found: string[] = [];
  for (const col of columns) {
    const test =
      col.type === 'bytea'
        ? `position(convert_to($1, 'UTF8') in ${col.c}) > 0`
        : `strpos(lower(${col.c}::text), lower($1)) > 0`;
    const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${col.t} WHERE ${test}`, [
      needle,
    ]);
    if (rows[0]!.n > 0) found.push(`${col.t}.${col.c}: ${rows[0]!.n}`);
  }
  return found;
}
