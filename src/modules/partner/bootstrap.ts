// The bootstrap token and POST /partner/bootstrap: the one-time step that creates the installation's
// partner and its first partner key. The token comes from BOOTSTRAP_TOKEN or, when that is unset,
// is generated at first start (only its hash is kept in the database) and printed; its text is also
// kept in DATA_DIR/bootstrap-token (mode 0600) until it is used, so it stays findable while the
// server runs (`tidings bootstrap-token --show`) without reaching the database.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config.ts';
import { generateToken, hashSecret, sameSecret } from '../../kernel/access/key-text.ts';
import type { Database, Sql, Tx } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { newId } from '../../kernel/values/ids.ts';
import { createKey } from '../keys/index.ts';

/** Where a generated token waits for its one use. */
export function bootstrapTokenFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, 'bootstrap-token');
}

/** Keeps a generated token where its operator can read it again (and nobody else can). */
export function saveBootstrapToken(config: Pick<Config, 'dataDir'>, token: string): void {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const path = bootstrapTokenFile(config);
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // a file that already existed keeps its mode otherwise
}

/** The kept token, or null when there is none (never generated, or already used). */
export function readBootstrapToken(config: Pick<Config, 'dataDir'>): string | null {
  try {
    return readFileSync(bootstrapTokenFile(config), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

interface InstallationRow {
  bootstrap_token_hash: string | null;
  bootstrapped_at: Date | null;
}

async function installation(sql: Sql, forUpdate = false): Promise<InstallationRow> {
  const { rows } = await sql.query<InstallationRow>(
    `SELECT bootstrap_token_hash, bootstrapped_at FROM installation${forUpdate ? ' FOR UPDATE' : ''}`,
  );
  return rows[0];
}

/**
 * At start: when no token is configured and none was generated yet, generates one and returns it
 * (the caller prints it). Returns null when there is nothing to print.
 */
export async function ensureBootstrapToken(db: Database, config: Config): Promise<string | null> {
  if (config.bootstrapToken) return null;
  const token = await db.transaction(async (tx) => {
    const row = await installation(tx, true);
    if (row.bootstrapped_at || row.bootstrap_token_hash) return null;
    const token = generateToken();
    await tx.query('UPDATE installation SET bootstrap_token_hash = $1', [hashSecret(token)]);
    return token;
  });
  if (token) saveBootstrapToken(config, token);
  return token;
}

/** Replaces the generated token with a new one (`tidings bootstrap-token`), while not bootstrapped. */
export async function renewBootstrapToken(db: Database, config: Pick<Config, 'dataDir'>): Promise<string> {
  const token = await db.transaction(async (tx) => {
    const row = await installation(tx, true);
    if (row.bootstrapped_at) throw new ApiError('ALREADY_BOOTSTRAPPED');
    const token = generateToken();
    await tx.query('UPDATE installation SET bootstrap_token_hash = $1', [hashSecret(token)]);
    return token;
  });
  saveBootstrapToken(config, token);
  return token;
}

function tokenMatches(given: string, config: Config, row: InstallationRow): boolean {
  if (config.bootstrapToken && sameSecret(given, config.bootstrapToken)) return true;
  return row.bootstrap_token_hash !== null && sameSecret(hashSecret(given), row.bootstrap_token_hash);
}

/** Creates the partner and its first key, once (POST /partner/bootstrap). */
export async function bootstrap(db: Database, config: Config, authorization: string | undefined, now: Date) {
  const given = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!given)
    throw new ApiError(
      'INVALID_BOOTSTRAP_TOKEN',
      'Send the bootstrap token as Authorization: Bearer <token>.',
    );
  return bootstrapWith(db, config, given, now, async (tx, partnerId) => {
    const key = await createKey(
      tx,
      { partnerId },
      { name: 'bootstrap', scope: 'partner' },
      { keyPrefix: config.keyPrefix, now },
    );
    return { partnerId, ...key };
  });
}

/** Refuses a wrong token (401) or a done bootstrap (409), in that order. */
function checkInstallation(given: string, config: Config, row: InstallationRow): void {
  if (!tokenMatches(given, config, row)) throw new ApiError('INVALID_BOOTSTRAP_TOKEN');
  if (row.bootstrapped_at) throw new ApiError('ALREADY_BOOTSTRAPPED');
}

/**
 * The same refusals as the bootstrap, without its lock: for work the bootstrap needs done before it
 * (the console's password hash), so that a wrong token costs no such work.
 */
export async function precheckBootstrap(sql: Sql, config: Config, given: string): Promise<void> {
  checkInstallation(given, config, await installation(sql));
}

/**
 * The one-time bootstrap, whoever asks (the API's POST /partner/bootstrap or the console's POST
 * /console/bootstrap): checks the token, creates the partner, marks the installation bootstrapped
 * and runs `then` (the first key, or the first console admin) in the same transaction, so the
 * token is consumed exactly once whichever route uses it.
 */
export async function bootstrapWith<T>(
  db: Database,
  config: Config,
  given: string,
  now: Date,
  then: (tx: Tx, partnerId: string) => Promise<T>,
): Promise<T> {
  const result = await db.transaction(async (tx) => {
    checkInstallation(given, config, await installation(tx, true));
    const partnerId = newId('partner');
    await tx.query('INSERT INTO partners (id, name) VALUES ($1, $2)', [partnerId, 'Partner']);
    await tx.query('UPDATE installation SET bootstrapped_at = $1', [now]);
    return then(tx, partnerId);
  });
  // A generated token has done its one job; its file goes with it. (A configured BOOTSTRAP_TOKEN
  // never had a file: nothing of DATA_DIR is touched then.)
  if (!config.bootstrapToken) rmSync(bootstrapTokenFile(config), { force: true });
  return result;
}

/** Whether the installation has been bootstrapped (GET /console/setup). */
export async function isBootstrapped(sql: Sql): Promise<boolean> {
  return (await installation(sql)).bootstrapped_at !== null;
}

/** The installation's partner, if bootstrapped (the CLI attaches the accounts it creates to it). */
export async function installationPartner(sql: Sql): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM partners ORDER BY id LIMIT 1');
  return rows[0]?.id ?? null;
}
