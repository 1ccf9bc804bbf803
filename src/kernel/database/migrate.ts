// Numbered, forward-only SQL migrations from migrations/NNN_name.sql, applied together in one
// transaction and recorded in schema_migrations; an advisory lock keeps two processes starting at
// once from applying the same migration twice.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const LOCK_ID = 727_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .map((f) => ({
      version: Number(f.split('_')[0]),
      name: f.replace(/\.sql$/, ''),
      sql: readFileSync(`${dir}/${f}`, 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
}

/** Applies pending migrations in one transaction; returns the names of those applied. */
export async function migrate(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    // Held until commit: a second process starting at the same time waits, then finds nothing to do.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    const applied: string[] = [];
    for (const m of listMigrations()) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.name);
    }
    return applied;
  });
}
