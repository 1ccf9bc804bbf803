// One small SQL executor over both databases: PGlite (embedded, one connection in this process) and
// PostgreSQL (a pg pool). Repositories write plain parameterised SQL against `Sql`, so the same code
// runs inside or outside a transaction, and pg-boss can share the caller's transaction (jobs.ts).
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import pg from 'pg';
import { embeddedDir } from '../runtime/data-dir.ts';
import { OwnerOnlyNodeFS } from '../runtime/owner-only-fs.ts';
import { hasDatabase, initDataDirInChild } from './pglite-initdb.ts';
import { pgliteWasmModule } from './pglite-module.ts';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Sql {
  /**
   * `prepared` names a statement run often with a fixed text: PostgreSQL then parses (and may plan)
   * it once per connection instead of on every call (PGlite ignores the name).
   */
  query<T = Record<string, unknown>>(
    text: string,
    params?: unknown[],
    options?: { prepared?: string },
  ): Promise<QueryResult<T>>;
  /** Runs one or several statements without parameters; returns the rows of all of them. */
  exec(text: string): Promise<{ rows: Record<string, unknown>[] }>;
}

export type Tx = Sql & { readonly inTransaction: true };

export interface TransactionOptions {
  /**
   * The transaction's prepared statements run on their generic plan, planned once per connection,
   * instead of being planned again on each call. PostgreSQL re-plans a prepared statement for its
   * parameters whenever such a custom plan looks cheaper than the generic one, and for a statement
   * over `unnest` of arrays (whose generic plan counts 100 elements where the call has 1) or with
   * a flag the custom plan folds away, it always does: on the accept path that was 0.9 ms of
   * planning for every send to a new number. Only for statements whose generic plan is checked
   * (test/messages/accept-plan.test.ts). PGlite plans every statement anyway and ignores this.
   */
  genericPlans?: boolean;
}

export interface Database extends Sql {
  readonly kind: 'pglite' | 'postgres';
  transaction<T>(work: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Calls `onNotify` with its payload for each NOTIFY on `channel` (sent at commit, never for a
   * rolled-back transaction). On PostgreSQL a dedicated connection listens and reconnects after a loss;
   * notifications sent while it was down are missed, so listeners must also poll.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * PGlite only: its data directory as a tar (PGlite's dumpDataDir), taken after a CHECKPOINT
   * while a transaction of its own holds the one connection's transaction lock, so no other
   * transaction is half-way through (single statements are atomic on the one connection). The dump
   * is a crash-consistent copy in any case: PostgreSQL replays its WAL when it is opened.
   * `inside` runs in that transaction first (what it reads is what the dump holds).
   */
  dumpDataDir?<T>(inside: (tx: Tx) => Promise<T>): Promise<{ tar: Blob; inside: T }>;
  close(): Promise<void>;
}

const INT8_OID = 20;
// int8 columns hold counts and micro-unit amounts, all far below 2^53: read them as numbers.
const parseInt8 = (value: string) => Number(value);

export const PGLITE_PARSERS = { [INT8_OID]: parseInt8 };

/** Every PGlite instance gets these: the contrib modules the migrations create extensions of. */
export const PGLITE_OPTIONS = { parsers: PGLITE_PARSERS, extensions: { pg_trgm, btree_gin } };

/**
 * The embedded database: in `dataDir`, in memory (null), or in memory from a data-dir dump.
 * `sharedBuffers` sizes its page cache: WebAssembly memory grows and is never given back, so a
 * cache PostgreSQL fills once stays resident. Pages it does not hold are read again from the
 * files, which the system's own cache keeps (docs/history/issue-27.md, the embedded server's memory).
 * `optimizeParser` lets V8 optimise its SQL parser like the rest of it (pglite-module.ts).
 */
export async function openPglite(
  source: string | null | { loadDataDir: Blob },
  options: { sharedBuffers?: string; optimizeParser?: boolean } = {},
): Promise<Database> {
  if (typeof source === 'string') {
    mkdirSync(source, { recursive: true, mode: 0o700 });
    if (!hasDatabase(source)) await initDataDirInChild(source);
  }
  const settings = {
    ...PGLITE_OPTIONS,
    pgliteWasmModule: pgliteWasmModule(options.optimizeParser ?? false),
    ...(options.sharedBuffers
      ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.sharedBuffers}`] }
      : {}),
  };
  const db =
    source === null
      ? await PGlite.create(settings)
      : typeof source === 'string'
        ? await PGlite.create({ fs: new OwnerOnlyNodeFS(source), ...settings })
        : await PGlite.create({ loadDataDir: source.loadDataDir, ...settings });
  return pgliteDatabase(db);
}

/**
 * Makes `dir` (new or empty) a database of its own from a data-dir dump (PGlite's dumpDataDir tar,
 * gzipped or not): `tidings restore`, and tests that need the migrated template on disk.
 */
export async function loadPgliteDump(dir: string, dump: Blob): Promise<void> {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = await PGlite.create({ fs: new OwnerOnlyNodeFS(dir), ...PGLITE_OPTIONS, loadDataDir: dump });
  await db.close();
}

export function pgliteDatabase(db: PGlite): Database {
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Sql => ({
    async query<T>(text: string, params?: unknown[]) {
      const r = await q.query<T>(text, params);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
    async exec(text: string) {
      const results = await q.exec(text);
      return { rows: results.flatMap((r) => r.rows as Record<string, unknown>[]) };
    },
  });
  return {
    kind: 'pglite',
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work({ ...wrap(tx), inTransaction: true })),
    listen: (channel, onNotify) => db.listen(channel, (payload) => onNotify(payload ?? '')),
    async dumpDataDir(inside) {
      await db.exec('CHECKPOINT');
      return db.transaction(async (tx) => {
        const result = await inside({ ...wrap(tx), inTransaction: true });
        return { inside: result, tar: await db.dumpDataDir('none') };
      });
    },
    close: () => db.close(),
  };
}

export async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor one checked out: pg reports a connection lost between two statements (terminated by the
  // server, say) as an 'error' event on the client, and the pool listens only while it is idle.
  // That leaves gaps no caller can close: a client released by one query and handed to a waiting
  // pool.connect() in the same tick as its connection's FATAL arrives has no listener until the
  // connect() promise resolves, and the process died on the unhandled event. With this one the
  // error goes to the statement that uses the client next, and release() drops the dead client.
  pool.on('connect', (client) => client.on('error', () => {}));
  await pool.query('SELECT 1');
  const wrap = (q: pg.Pool | pg.PoolClient): Sql => ({
    async query<T>(text: string, params?: unknown[], options?: { prepared?: string }) {
      const r = options?.prepared
        ? await q.query({ name: options.prepared, text, values: params as unknown[] })
        : await q.query(text, params as unknown[]);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    },
    async exec(text: string) {
      const result = (await q.query(text)) as pg.QueryResult | pg.QueryResult[];
      return { rows: (Array.isArray(result) ? result : [result]).flatMap((r) => r.rows) };
    },
  });
  return {
    kind: 'postgres',
    ...wrap(pool),
    async transaction(work, options) {
      const client = await pool.connect();
      try {
        // (One round trip: a simple query of two statements.)
        await client.query(
          options?.genericPlans ? 'BEGIN; SET LOCAL plan_cache_mode = force_generic_plan' : 'BEGIN',
        );
        const result = await work({ ...wrap(client), inTransaction: true });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    listen: (channel, onNotify) => listenPostgres(url, channel, onNotify),
    close: () => pool.end(),
  };
}

async function listenPostgres(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  // The caller's polling covers the gap while the listening connection is being re-made.
  const reconnectLater = () => {
    if (!stopped) setTimeout(() => void connect().catch(reconnectLater), 1000).unref();
  };
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => onNotify(n.payload ?? ''));
    c.on('error', () => {});
    c.on('end', () => {
      if (client !== c) return;
      client = null;
      reconnectLater();
    });
    await c.connect();
    await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    if (stopped) await c.end();
    else client = c;
  };
  await connect();
  return async () => {
    stopped = true;
    const c = client;
    client = null;
    await c?.end().catch(() => {});
  };
}

/** The embedded database's own directory inside DATA_DIR (data-dir.ts, which the CLI loads alone). */
export { embeddedDir };

export async function openDatabase(config: {
  databaseUrl: string | null;
  dataDir: string;
  dbPoolSize: number;
  pgliteSharedBuffers: string;
  pgliteOptimizeParser: boolean;
}): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config.dbPoolSize);
  return openPglite(embeddedDir(config.dataDir), {
    sharedBuffers: config.pgliteSharedBuffers,
    optimizeParser: config.pgliteOptimizeParser,
  });
}

/**
 * Runs a DELETE that removes at most `batch` rows (its own LIMIT) until one removes fewer: large
 * clean-ups go in short transactions instead of one long lock. Answers the rows removed.
 *
 * Between batches it lets the event loop turn: PGlite answers a query without any I/O, so a loop
 * of awaited queries would run on microtasks alone and keep every request waiting until the end.
 */
export async function deleteInBatches(
  sql: Sql,
  statement: string,
  params: unknown[],
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await sql.query(statement, params);
    total += rowCount;
    if (rowCount < batch) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// SQLSTATEs of a database that cannot be reached or used for now: connection exceptions (class
// 08), the server shutting down or terminating the session (57P01, 57P02, 57P03), too many
// connections (53300); and the errors of a socket that went away.
const UNREACHABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);
// pg's own errors for a lost connection carry no code, only these words.
const LOST_CONNECTION =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect)/;

/** Whether an error means the database is unreachable (for now), not that the statement was wrong. */
export function databaseUnreachable(err: unknown): boolean {
  const code = sqlState(err);
  if (code && (code.startsWith('08') || UNREACHABLE_CODES.has(code))) return true;
  return err instanceof Error && LOST_CONNECTION.test(err.message);
}

/** The SQLSTATE of a database error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

export const UNIQUE_VIOLATION = '23505';

/** PostgreSQL's deadlock_detected: the transaction was rolled back and may run again. */
export const DEADLOCK = '40P01';
