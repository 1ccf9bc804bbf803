// Takes a backup of the embedded database while the server runs: the rows of every table are
// counted and the data directory dumped in one transaction of the one connection, so the manifest
// says exactly what the dump holds. The API waits meanwhile (a dump of a few hundred MiB takes a
// second or two on the machines measured: docs/operations.md).
import type { Database, Sql } from '../../kernel/database/db.ts';
import { TIDINGS_VERSION } from '../../kernel/runtime/version.ts';
import { type BackupManifest, encodeBackup } from './format.ts';

/** Every table that holds rows (partitions counted through their parent), ours and pg-boss's. */
export async function countRows(sql: Sql): Promise<Record<string, number>> {
  const { rows: tables } = await sql.query<{ name: string }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname IN ('public', 'pgboss')
      ORDER BY 1`,
  );
  if (tables.length === 0) return {};
  const { rows } = await sql.query<{ name: string; n: number }>(
    tables
      .map((t, i) => `SELECT $${i + 1}::text AS name, count(*)::int AS n FROM ${t.name}`)
      .join(' UNION ALL '),
    tables.map((t) => t.name),
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]));
}

export async function appliedMigrations(sql: Sql): Promise<string[]> {
  const { rows } = await sql.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.name);
}

/**
 * The backup file's bytes. `secretsKey`: the key to keep in it (the one the server made in its
 * data directory), or null when SECRETS_KEY came from the environment.
 */
export async function takeBackup(
  db: Database,
  secretsKey: string | null,
  now: () => Date = () => new Date(),
): Promise<{ file: Buffer; manifest: BackupManifest }> {
  if (!db.dumpDataDir) throw new Error('only the embedded database is backed up this way; use pg_dump');
  const { tar, inside } = await db.dumpDataDir(async (tx) => ({
    tables: await countRows(tx),
    migrations: await appliedMigrations(tx),
  }));
  const manifest: BackupManifest = {
    createdAt: now().toISOString(),
    tidingsVersion: TIDINGS_VERSION,
    migrations: inside.migrations,
    tables: inside.tables,
    secretsKey,
  };
  return { file: encodeBackup(manifest, new Uint8Array(await tar.arrayBuffer())), manifest };
}
