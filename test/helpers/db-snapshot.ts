// A fingerprint of what the application has stored: for each table of the `public` schema (listed
// from information_schema, so a table added by a later migration is covered without editing this
// file) its row count and a checksum of its rows, of the whole database or of one tenant's rows.
// Two equal snapshots mean nothing was written in between: the fuzzer takes one around every
// request it expects to be refused, the isolation matrix around every stranger's request.
import type { Database } from '../../src/kernel/database/db.ts';

/**
 * What a refused request may still write, each for a documented reason. Everything else in the
 * `public` schema must stay byte-for-byte the same. (pg-boss keeps its queue in its own `pgboss`
 * schema, which is not read at all: its maintenance runs on its own clock, whatever the requests.)
 */
export const MAY_CHANGE_ON_REFUSAL: Record<string, string[] | 'whole table'> = {
  // docs/decisions.md § Limits: "every admitted call is [counted], whatever its outcome", so a
  // refused but authenticated call is counted (access.ts).
  api_usage_monthly: 'whole table',
  api_usage_daily: 'whole table',
  // The key's last use is written (at most once a minute, fire-and-forget) by any authenticated
  // request, refused or not (auth.ts #noteUse); the rest of the key row must not change.
  api_keys: ['last_used_at'],
  // idempotency.ts: an answer of the route's own logic, 4xx included, is stored under its
  // Idempotency-Key and replayed (as Stripe does); only refusals before the handler store nothing.
  idempotency_keys: 'whole table',
  // A console session's last use is written (at most once a minute) by any request it makes,
  // refused or not (console-principal.ts), as a key's is.
  console_sessions: ['last_seen_at'],
};

export type Snapshot = Record<string, string>;

/** Columns, or whole tables, a snapshot leaves out. */
export type Ignored = Record<string, string[] | 'whole table'>;

/** One tenant: an account and its partner. */
export interface Owner {
  accountId: string;
  partnerId: string;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * One statement over every table: its row count and a checksum of its rows, less what is ignored.
 * With an owner, a table keeps the rows of the account (account_id, or id for `accounts`) or of its
 * partner (partner_id); a table with neither column keeps every row.
 */
async function snapshotQuery(db: Database, ignore: Ignored, owner: boolean): Promise<string> {
  const { rows } = await db.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const tables = new Map<string, string[]>();
  for (const c of rows) tables.set(c.table_name, [...(tables.get(c.table_name) ?? []), c.column_name]);
  const parts = [...tables].flatMap(([table, columns]) => {
    const ignored = ignore[table];
    if (ignored === 'whole table') return [];
    const row = (ignored ?? []).reduce((expr, column) => `${expr} - '${column}'`, 'to_jsonb(t)');
    const mine = [
      ...(columns.includes('account_id') ? ['t.account_id = $1'] : []),
      ...(columns.includes('partner_id') ? ['t.partner_id = $2'] : []),
      ...(table === 'accounts' ? ['t.id = $1'] : []),
    ];
    const where = owner && mine.length > 0 ? `WHERE ${mine.join(' OR ')}` : '';
    return [
      `SELECT '${table}' AS name, count(*)::text || ':' ||
              coalesce(md5(string_agg(md5((${row})::text), ',' ORDER BY md5((${row})::text))), '')
              AS fingerprint
         FROM public.${quoteIdent(table)} t ${where}`,
    ];
  });
  // Both parameters appear in the statement whatever its tables (it takes exactly its own).
  return owner
    ? `SELECT * FROM (${parts.join('\nUNION ALL\n')}) s WHERE $1::text IS NOT NULL AND $2::text IS NOT NULL`
    : parts.join('\nUNION ALL\n');
}

/**
 * Takes snapshots of one database (the whole of it, or one owner's rows); the query over its tables
 * is built once. By default it leaves out what a refused request may still write.
 */
export class DatabaseSnapshots {
  readonly #db: Database;
  readonly #ignore: Ignored;
  readonly #owner: Owner | null;
  #query: Promise<string> | null = null;

  constructor(db: Database, options: { ignore?: Ignored; owner?: Owner } = {}) {
    this.#db = db;
    this.#ignore = options.ignore ?? MAY_CHANGE_ON_REFUSAL;
    this.#owner = options.owner ?? null;
  }

  async take(): Promise<Snapshot> {
    this.#query ??= snapshotQuery(this.#db, this.#ignore, this.#owner !== null);
    const { rows } = await this.#db.query<{ name: string; fingerprint: string }>(
      await this.#query,
      this.#owner ? [this.#owner.accountId, this.#owner.partnerId] : [],
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.fingerprint]));
  }
}

/** The tables whose fingerprint differs between two snapshots. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
}
