// `tidings migrate-to-postgres --database-url URL`: copies the embedded database in DATA_DIR into a
// new, empty PostgreSQL database, then checks every table on both sides (row count and an
// order-free checksum) and prints them. The server must be stopped (the embedded database has one
// owner). The target is made by the same code the server runs (migrations, then pg-boss's schema and
// the app's queues), so its DDL is the server's own; then each table is copied in batches, in
// foreign-key order, and the sequences are set. SECRETS_KEY is printed once at the end: every
// PostgreSQL process needs it to open the sealed secrets the copy carried over.
import cliProgress from 'cli-progress';
import type { Config } from '../../config.ts';
import { readSecretsKeyFile, secretsKeyFile } from '../../kernel/crypto/secrets.ts';
import { type Database, embeddedDir, openPglite, openPostgres, type Sql } from '../../kernel/database/db.ts';
import { listMigrations, migrate } from '../../kernel/database/migrate.ts';
import { hasDatabase } from '../../kernel/database/pglite-initdb.ts';
import { Jobs } from '../../kernel/jobs/jobs.ts';
import { shownUrl } from '../doctor/database.ts';
import { serverRunning } from '../server-pid.ts';
import { UsageError } from '../usage-error.ts';
import { checksumStatement, insertStatement, SAME_TEXT, SCHEMAS, type Table, tablesOf } from './tables.ts';

type Out = { write(text: string): unknown };
const BATCH = 1000;

interface Tally {
  table: string;
  source: { rows: number; sum: string };
  target: { rows: number; sum: string };
}

/** The key the sealed secrets need: SECRETS_KEY if set, else the one the embedded server made. */
function secretsKeyOf(cfg: Config): { key: string; from: 'environment' | 'file' } {
  if (cfg.secretsKey) return { key: cfg.secretsKey, from: 'environment' };
  const key = readSecretsKeyFile(cfg.dataDir);
  if (!key) {
    throw new UsageError(
      `no SECRETS_KEY and no ${secretsKeyFile(cfg.dataDir)}: which key sealed the secrets?`,
    );
  }
  return { key, from: 'file' };
}

async function refuseUnlessEmpty(target: Database, url: string): Promise<void> {
  const { rows } = await target.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY ($1)`,
    [SCHEMAS],
  );
  if (rows[0]!.n > 0) {
    throw new UsageError(
      `${shownUrl(url)} is not empty (${rows[0]!.n} tables in public and pgboss): give a new database (createdb)`,
    );
  }
}

/** The source must be at this code's migrations: the server (this version) migrates it at start. */
async function refuseUnlessCurrent(source: Database): Promise<void> {
  const { rows } = await source.query<{ version: number }>('SELECT version FROM schema_migrations');
  const applied = new Set(rows.map((r) => Number(r.version)));
  const known = listMigrations();
  if (known.some((m) => !applied.has(m.version)) || applied.size !== known.length) {
    throw new UsageError(
      'the embedded database is not at this version of Tidings: start tidings serve once with it (it migrates the data), stop it, then migrate',
    );
  }
}

/** The target's schema, made as a server of this version makes it: migrations, pg-boss, queues. */
async function prepareTarget(cfg: Config, target: Database, key: string): Promise<void> {
  await migrate(target);
  const jobs = new Jobs(target, { superviseSeconds: cfg.jobSuperviseSeconds });
  const { buildApp } = await import('../../app.ts');
  const app = await buildApp(
    { ...cfg, databaseUrl: 'postgres://target', secretsKey: key, runWorkers: false, logLevel: 'silent' },
    { db: target, jobs, redis: null, processMetrics: false },
  );
  await app.ready();
  await jobs.start();
  await jobs.stop(0);
  await app.close();
}

async function copyTable(source: Database, target: Database, t: Table, onBatch: (rows: number) => void) {
  const insert = insertStatement(t);
  await source.transaction(async (tx) => {
    await tx.exec(`DECLARE copy_rows NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS r FROM ${t.name} t`);
    for (;;) {
      const { rows } = await tx.query<{ r: string }>(`FETCH ${BATCH} FROM copy_rows`);
      if (rows.length === 0) break;
      await target.query(insert, [`[${rows.map((r) => r.r).join(',')}]`]);
      onBatch(rows.length);
    }
    await tx.exec('CLOSE copy_rows');
  });
}

async function copySequences(source: Sql, target: Sql): Promise<number> {
  const { rows } = await source.query<{ name: string; last_value: number | null }>(
    `SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename) AS name, last_value
       FROM pg_sequences WHERE schemaname = ANY ($1)`,
    [SCHEMAS],
  );
  for (const s of rows) {
    if (s.last_value !== null)
      await target.query('SELECT setval($1::regclass, $2, true)', [s.name, s.last_value]);
  }
  return rows.length;
}

async function checksums(db: Database, tables: Table[]): Promise<Map<string, { rows: number; sum: string }>> {
  return db.transaction(async (tx) => {
    for (const s of SAME_TEXT) await tx.query(s);
    const out = new Map<string, { rows: number; sum: string }>();
    for (const t of tables) {
      const { rows } = await tx.query<{ rows: number; sum: string }>(checksumStatement(t));
      out.set(t.name, { rows: Number(rows[0]!.rows), sum: rows[0]!.sum });
    }
    return out;
  });
}

function progressOf(err: NodeJS.WriteStream, total: number) {
  if (err.isTTY) {
    const bar = new cliProgress.SingleBar(
      { stream: err, format: ' {bar} {percentage}% | {value}/{total} rows | {table}', hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    bar.start(Math.max(total, 1), 0, { table: '' });
    return {
      table: (name: string) => bar.update({ table: name }),
      rows: (n: number) => bar.increment(n),
      tableDone: () => {},
      stop: () => bar.stop(),
    };
  }
  let done = 0;
  let current = '';
  let inTable = 0;
  return {
    table: (name: string) => {
      current = name;
      inTable = 0;
    },
    rows: (n: number) => {
      done += n;
      inTable += n;
    },
    tableDone: () => err.write(`copied ${current}: ${inTable} rows (${done} of ${total})\n`),
    stop: () => {},
  };
}

export async function migrateToPostgres(
  cfg: Config,
  url: string,
  out: Out,
  err: NodeJS.WriteStream,
): Promise<number> {
  if (cfg.databaseUrl) {
    throw new UsageError(
      'DATABASE_URL is set: this copies the embedded database in DATA_DIR; unset it and give the target with --database-url',
    );
  }
  const pid = serverRunning(cfg);
  if (pid) throw new UsageError(`a server (pid ${pid}) has the embedded database open: stop it first`);
  if (!hasDatabase(embeddedDir(cfg.dataDir))) throw new UsageError(`no embedded database in ${cfg.dataDir}`);
  const { key, from } = secretsKeyOf(cfg);
  let target: Database;
  try {
    target = await openPostgres(url, 2);
  } catch (e) {
    throw new UsageError(`cannot connect to ${shownUrl(url)}: ${(e as Error).message}`);
  }
  const source = await openPglite(embeddedDir(cfg.dataDir));
  try {
    await refuseUnlessEmpty(target, url);
    await refuseUnlessCurrent(source);
    await prepareTarget(cfg, target, key);
    const tables = await tablesOf(source);
    const before = await checksums(source, tables);
    const total = [...before.values()].reduce((a, b) => a + b.rows, 0);
    const progress = progressOf(err, total);
    for (const t of tables) {
      progress.table(t.name);
      await copyTable(source, target, t, progress.rows);
      progress.tableDone();
    }
    progress.stop();
    const sequences = await copySequences(source, target);
    const after = await checksums(target, tables);
    const tallies: Tally[] = tables.map((t) => ({
      table: t.name,
      source: before.get(t.name)!,
      target: after.get(t.name)!,
    }));
    return report(tallies, sequences, { url, key, from }, out);
  } finally {
    await source.close();
    await target.close();
  }
}

function report(
  tallies: Tally[],
  sequences: number,
  target: { url: string; key: string; from: 'environment' | 'file' },
  out: Out,
): number {
  const width = Math.max(...tallies.map((t) => t.table.length));
  const lines = [`${'table'.padEnd(width)}  ${'rows'.padStart(9)}  checksum`];
  let differ = 0;
  for (const t of tallies) {
    const same = t.source.rows === t.target.rows && t.source.sum === t.target.sum;
    if (!same) differ++;
    lines.push(
      `${t.table.padEnd(width)}  ${String(t.target.rows).padStart(9)}  ${t.target.sum}` +
        (same ? '' : `  DIFFERS: ${t.source.rows} rows, checksum ${t.source.sum} in the embedded database`),
    );
  }
  const rows = tallies.reduce((a, t) => a + t.target.rows, 0);
  lines.push('');
  if (differ > 0) {
    lines.push(
      `${differ} of ${tallies.length} tables differ: do not start on ${shownUrl(target.url)}; see above.`,
    );
    out.write(`${lines.join('\n')}\n`);
    return 1;
  }
  lines.push(
    `Every table matches: ${rows} rows in ${tallies.length} tables, and ${sequences} sequences, copied to ${shownUrl(target.url)}.`,
    '',
    'Start Tidings on PostgreSQL with:',
    `  DATABASE_URL=${shownUrl(target.url)}${new URL(target.url).password ? '   (with its password)' : ''}`,
    target.from === 'file'
      ? `  SECRETS_KEY=${target.key}`
      : '  SECRETS_KEY=(the key you have set; it sealed the secrets copied)',
    target.from === 'file'
      ? 'That key (from DATA_DIR/secrets.key) is printed this once: every process needs it to open the webhook secrets and provider credentials; keep it with your backups.'
      : 'Every process needs that SECRETS_KEY to open the webhook secrets and provider credentials.',
    'Keep DATA_DIR until the PostgreSQL server has run a while: it is your way back.',
  );
  out.write(`${lines.join('\n')}\n`);
  return 0;
}
