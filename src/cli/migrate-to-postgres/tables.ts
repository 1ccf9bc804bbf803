// The tables a migration copies, read from the catalog of the embedded database: ours (public) and
// pg-boss's (pgboss), partitioned tables through their parent, in an order where every table comes
// after those its foreign keys point to. Generated columns are left out (the target computes them).
import type { Sql } from '../../kernel/database/db.ts';

export interface Table {
  /** Schema-qualified and quoted, ready for SQL. */
  name: string;
  /** Quoted column names, generated columns left out, in column order. */
  columns: string[];
  /** Quoted primary key columns (empty when the table has none). */
  key: string[];
  /** Has a GENERATED ALWAYS identity column: inserts must say OVERRIDING SYSTEM VALUE. */
  identityAlways: boolean;
}

export const SCHEMAS = ['public', 'pgboss'];

export async function tablesOf(sql: Sql): Promise<Table[]> {
  const { rows } = await sql.query<{
    oid: number;
    name: string;
    columns: string[];
    key: string[] | null;
    identity_always: boolean;
  }>(
    `SELECT c.oid::int AS oid,
            quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name,
            array_agg(quote_ident(a.attname) ORDER BY a.attnum) FILTER (WHERE a.attgenerated = '') AS columns,
            (SELECT array_agg(quote_ident(k.attname) ORDER BY array_position(i.indkey::int2[], k.attnum))
               FROM pg_index i JOIN pg_attribute k ON k.attrelid = i.indrelid AND k.attnum = ANY (i.indkey::int2[])
              WHERE i.indrelid = c.oid AND i.indisprimary) AS key,
            bool_or(a.attidentity = 'a') AS identity_always
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY ($1)
      GROUP BY c.oid, n.nspname, c.relname
      ORDER BY 2`,
    [SCHEMAS],
  );
  const { rows: references } = await sql.query<{ child: number; parent: number }>(
    `SELECT conrelid::int AS child, confrelid::int AS parent FROM pg_constraint
      WHERE contype = 'f' AND conrelid <> confrelid AND conparentid = 0`,
  );
  // Depth-first: a table goes after every table it references.
  const byOid = new Map(rows.map((r) => [r.oid, r]));
  const placed = new Set<number>();
  const order: Table[] = [];
  const place = (oid: number, path: Set<number>) => {
    if (placed.has(oid) || path.has(oid)) return;
    path.add(oid);
    for (const r of references) if (r.child === oid && byOid.has(r.parent)) place(r.parent, path);
    placed.add(oid);
    const t = byOid.get(oid)!;
    order.push({ name: t.name, columns: t.columns, key: t.key ?? [], identityAlways: t.identity_always });
  };
  for (const r of rows) place(r.oid, new Set());
  return order;
}

/**
 * One batch of rows (each row_to_json's text) into the target table. Rows that the target's own
 * set-up made already (its migrations' records, pg-boss's version and queues) take the source's
 * values: the target ends as the source was.
 */
export function insertStatement(t: Table): string {
  const cols = t.columns.join(', ');
  const rest = t.columns.filter((c) => !t.key.includes(c));
  const conflict =
    t.key.length === 0
      ? ''
      : rest.length === 0
        ? ` ON CONFLICT (${t.key.join(', ')}) DO NOTHING`
        : ` ON CONFLICT (${t.key.join(', ')}) DO UPDATE SET ${rest.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;
  return (
    `INSERT INTO ${t.name} (${cols})${t.identityAlways ? ' OVERRIDING SYSTEM VALUE' : ''} ` +
    `SELECT ${cols} FROM json_populate_recordset(NULL::${t.name}, $1::json)${conflict}`
  );
}

/**
 * A table's row count and a checksum of its rows that does not depend on their order (each row's
 * text hashed, the hashes summed), over the copied columns only. Run inside a transaction that has
 * set the same text formats on both sides (SAME_TEXT).
 */
export function checksumStatement(t: Table): string {
  return (
    `SELECT count(*)::int AS rows, coalesce(sum(('x' || substr(md5(ROW(${t.columns.join(', ')})::text), 1, 15))::bit(60)::bigint), 0)::text AS sum ` +
    `FROM ${t.name}`
  );
}

/** Text formats that make a row's text the same on PGlite and on a PostgreSQL server. */
export const SAME_TEXT = [
  "SET LOCAL TimeZone = 'UTC'",
  "SET LOCAL DateStyle = 'ISO, MDY'",
  "SET LOCAL IntervalStyle = 'postgres'",
  'SET LOCAL extra_float_digits = 1',
  "SET LOCAL bytea_output = 'hex'",
];
