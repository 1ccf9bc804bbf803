// The doctor's database checks: reachable, new enough, the extensions the migrations create,
// migrations against those this code has, pg-boss's schema, and whether SECRETS_KEY opens the
// secrets sealed in it. Nothing here writes: the doctor never migrates or creates a database.
import pg from 'pg';
import type { Config } from '../../config.ts';
import { readSecretsKeyFile, SecretBox } from '../../kernel/crypto/secrets.ts';
import { embeddedDir, openPglite, type Sql } from '../../kernel/database/db.ts';
import { listMigrations } from '../../kernel/database/migrate.ts';
import { hasDatabase } from '../../kernel/database/pglite-initdb.ts';
import { type Finding, fail, ok, reason, warn, within } from './findings.ts';

const MIN_SERVER_VERSION = 150000;
const EXTENSIONS = ['pg_trgm', 'btree_gin'];
const TIMEOUT_MS = 5000;

/** The URL without its password, to be printed. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

export async function checkPostgres(config: Config & { databaseUrl: string }): Promise<Finding[]> {
  const client = new pg.Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await within(TIMEOUT_MS, 'connect', () => client.connect());
  } catch (err) {
    return [
      fail(
        'database',
        `cannot connect to ${shownUrl(config.databaseUrl)}: ${reason(err)}; is PostgreSQL running, and DATABASE_URL right?`,
      ),
    ];
  }
  try {
    const sql: Sql = {
      query: async (text, params) => {
        const r = await within(TIMEOUT_MS, 'query', () => client.query(text, params as unknown[]));
        return { rows: r.rows, rowCount: r.rowCount ?? 0 };
      },
      exec: async (text) => ({ rows: (await client.query(text)).rows }),
    };
    const findings: Finding[] = [];
    const { rows } = await sql.query<{ num: string; version: string }>(
      `SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version`,
    );
    const { num, version } = rows[0]!;
    if (Number(num) < MIN_SERVER_VERSION) {
      findings.push(fail('database', `PostgreSQL ${version}: Tidings needs 15 or later; upgrade the server`));
    } else {
      findings.push(ok('database', `PostgreSQL ${version} at ${shownUrl(config.databaseUrl)}`));
    }
    const available = await sql.query<{ name: string }>(
      'SELECT name FROM pg_available_extensions WHERE name = ANY($1)',
      [EXTENSIONS],
    );
    const missing = EXTENSIONS.filter((e) => !available.rows.some((r) => r.name === e));
    findings.push(
      missing.length > 0
        ? fail(
            'extensions',
            `${missing.join(', ')} not available: install PostgreSQL's contrib modules (Debian: postgresql-contrib)`,
          )
        : ok('extensions', `${EXTENSIONS.join(', ')} available`),
    );
    findings.push(...(await checkSchema(sql)), await checkSecretsKey(sql, config.secretsKey, true));
    return findings;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The embedded database, when no server has it open (one process at a time may: the caller checks
 * a running server through its /readyz instead).
 */
export async function checkEmbedded(config: Config): Promise<Finding[]> {
  const dir = embeddedDir(config.dataDir);
  if (!hasDatabase(dir)) {
    return [ok('database', `no embedded database in ${dir} yet: the first tidings serve makes it`)];
  }
  let db: Awaited<ReturnType<typeof openPglite>>;
  try {
    db = await openPglite(dir);
  } catch (err) {
    return [fail('database', `cannot open the embedded database in ${dir}: ${reason(err)}`)];
  }
  try {
    const { rows } = await db.query<{ version: string }>(
      `SELECT current_setting('server_version') AS version`,
    );
    const key = config.secretsKey ?? readSecretsKeyFile(config.dataDir);
    return [
      ok('database', `embedded (PGlite, PostgreSQL ${rows[0]!.version}) in ${dir}`),
      ...(await checkSchema(db)),
      await checkSecretsKey(db, key, false),
    ];
  } finally {
    await db.close();
  }
}

/** Migrations against those this code has, and pg-boss's schema. */
export async function checkSchema(sql: Sql): Promise<Finding[]> {
  const findings: Finding[] = [];
  const known = listMigrations();
  const last = known.at(-1)!;
  const table = await sql.query<{ migrations: string | null; boss: string | null }>(
    `SELECT to_regclass('schema_migrations')::text AS migrations, to_regclass('pgboss.version')::text AS boss`,
  );
  const { migrations, boss } = table.rows[0]!;
  if (!migrations) {
    findings.push(
      warn(
        'migrations',
        `none applied yet: tidings migrate applies the ${known.length} (tidings serve does at start)`,
      ),
    );
    return findings;
  }
  const applied = new Set(
    (await sql.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) =>
      Number(r.version),
    ),
  );
  const unknown = [...applied].filter((v) => !known.some((m) => m.version === v)).sort((a, b) => a - b);
  const pending = known.filter((m) => !applied.has(m.version));
  if (unknown.length > 0) {
    findings.push(
      fail(
        'migrations',
        `the database has migrations this code does not know (${unknown.join(', ')}): a newer Tidings used it; run that version or newer`,
      ),
    );
  } else if (pending.length > 0) {
    findings.push(
      warn(
        'migrations',
        `${pending.length} of ${known.length} pending (first: ${pending[0]!.name}): tidings migrate applies them (tidings serve does at start)`,
      ),
    );
  } else {
    findings.push(ok('migrations', `all ${known.length} applied (last: ${last.name})`));
  }
  if (boss) {
    const v = await sql.query<{ version: number }>('SELECT version FROM pgboss.version');
    findings.push(ok('jobs', `pg-boss schema version ${v.rows[0]?.version ?? '?'}`));
  } else {
    findings.push(warn('jobs', "pg-boss's schema is not there yet: tidings serve makes it at start"));
  }
  return findings;
}

/**
 * One sealed value from each column that holds them: the key must open every one tried.
 * `required`: with DATABASE_URL the key must be given (every process shares it); the embedded
 * server makes its own at first start.
 */
async function checkSecretsKey(sql: Sql, secretsKey: string | null, required: boolean): Promise<Finding> {
  const columns = await sql.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name LIKE '%\\_sealed' ORDER BY 1, 2`,
  );
  const sealed: { where: string; value: string }[] = [];
  for (const c of columns.rows) {
    const r = await sql.query<{ value: string }>(
      `SELECT ${c.column_name} AS value FROM ${c.table_name} WHERE ${c.column_name} IS NOT NULL LIMIT 1`,
    );
    if (r.rows[0]) sealed.push({ where: `${c.table_name}.${c.column_name}`, value: r.rows[0].value });
  }
  if (!secretsKey && required) {
    return fail(
      'secrets',
      'SECRETS_KEY is required with DATABASE_URL (every process must share it)' +
        (sealed.length > 0
          ? `, and the database holds sealed secrets (${sealed[0]!.where}): set the key it was started with`
          : ': make one with openssl rand -base64 32'),
    );
  }
  if (!secretsKey) {
    return sealed.length > 0
      ? fail(
          'secrets',
          `no SECRETS_KEY, and the database holds sealed secrets (${sealed[0]!.where}): set the key this installation was started with`,
        )
      : ok('secrets', 'no SECRETS_KEY yet and nothing sealed: the first start makes one');
  }
  let box: SecretBox;
  try {
    box = new SecretBox(secretsKey);
  } catch (err) {
    return fail('secrets', `SECRETS_KEY: ${reason(err)} (make one with: openssl rand -base64 32)`);
  }
  for (const s of sealed) {
    try {
      box.open(s.value);
    } catch {
      return fail(
        'secrets',
        `SECRETS_KEY does not open the secrets sealed in the database (${s.where}): it is not the key they were sealed with; set that key`,
      );
    }
  }
  return ok(
    'secrets',
    sealed.length > 0
      ? `SECRETS_KEY opens the sealed secrets (${sealed.length} kinds tried)`
      : 'SECRETS_KEY set; nothing sealed yet',
  );
}
