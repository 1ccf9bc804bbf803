// A fingerprint of everything the application has stored: for each table of the `public` schema
// (listed from information_schema, so a table added by a later migration is covered without editing
// this file) its row count and a checksum of its rows. Two equal snapshots mean nothing was
// written in between; the fuzzer takes one around every request it expects to be refused.
import type { Database } from '../../src/kernel/db.ts';

/**
 * What a refused request may still write, each for a documented reason. Everything else in the
 * `public` schema must stay byte-for-byte the same. (pg-boss keeps its queue in its own `pgboss`
 * schema, which is not read at all: its maintenance runs on its own clock, whatever the requests.)
 */
export const MAY_CHANGE_ON_REFUSAL: Record<string, string[] | 'whole table'> = {
  // API.md § Plans: "a call counts against the month once it passes authentication and the rate
  // limiter, whatever its outcome", so a refused but authenticated call is counted (access.ts).
  api_usage_monthly: 'whole table',
  api_usage_daily: 'whole table',
  // The key's last use is written (at most once a minute, fire-and-forget) by any authenticated
  // request, refused or not (auth.ts #noteUse); the rest of the key row must not change.
  api_keys: ['last_used_at'],
  // idempotency.ts: an answer of the route's own logic, 4xx included, is stored under its
  // Idempotency-Key and replayed (as Stripe does); only refusals before the handler store nothing.
  idempotency_keys: 'whole table',
};

export type Snapshot = Record<string, string>;

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

async function snapshotQuery(db: Database): Promise<string> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const parts = rows.flatMap(({ table_name: table }) => {
    const allowed = MAY_CHANGE_ON_REFUSAL[table];
    if (allowed === 'whole table') return [];
    const row = (allowed ?? []).reduce((expr, column) => `${expr} - '${column}'`, 'to_jsonb(t)');
    return [
      `SELECT '${table}' AS name, count(*)::text || ':' ||
              coalesce(md5(string_agg(md5((${row})::text), ',' ORDER BY md5((${row})::text))), '')
              AS fingerprint
         FROM public.${quoteIdent(table)} t`,
    ];
  });
  return parts.join('\nUNION ALL\n');
}

/** Takes snapshots of one database; the query over its tables is built once. */
export class DatabaseSnapshots {
  readonly #db: Database;
  #query: Promise<string> | null = null;

  constructor(db: Database) {
    this.#db = db;
  }

  async take(): Promise<Snapshot> {
    this.#query ??= snapshotQuery(this.#db);
    const { rows } = await this.#db.query<{ name: string; fingerprint: string }>(await this.#query);
    return Object.fromEntries(rows.map((r) => [r.name, r.fingerprint]));
  }
}

/** The tables whose fingerprint differs between two snapshots. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
}
