// The bootstrap token and POST /partner/bootstrap: the one-time step that creates the installation's
// partner and its first partner key. The token comes from BOOTSTRAP_TOKEN or, when that is unset,
// is generated at first start (only its hash is kept) and printed once.
import type { Config } from '../../config.ts';
import type { Database, Sql } from '../../kernel/db.ts';
import { ApiError } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import { generateToken, hashSecret, sameSecret } from '../../kernel/keys.ts';
import { createKey } from '../keys/service.ts';

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
  return db.transaction(async (tx) => {
    const row = await installation(tx, true);
    if (row.bootstrapped_at || row.bootstrap_token_hash) return null;
    const token = generateToken();
    await tx.query('UPDATE installation SET bootstrap_token_hash = $1', [hashSecret(token)]);
    return token;
  });
}

/** Replaces the generated token with a new one (`tidings bootstrap-token`), while not bootstrapped. */
export async function renewBootstrapToken(db: Database): Promise<string> {
  return db.transaction(async (tx) => {
    const row = await installation(tx, true);
    if (row.bootstrapped_at) throw new ApiError('ALREADY_BOOTSTRAPPED');
    const token = generateToken();
    await tx.query('UPDATE installation SET bootstrap_token_hash = $1', [hashSecret(token)]);
    return token;
  });
}

function tokenMatches(given: string, config: Config, row: InstallationRow): boolean {
  if (config.bootstrapToken && sameSecret(given, config.bootstrapToken)) return true;
  return row.bootstrap_token_hash !== null && sameSecret(hashSecret(given), row.bootstrap_token_hash);
}

/** Creates the partner and its first key, once. */
export async function bootstrap(db: Database, config: Config, authorization: string | undefined, now: Date) {
  const given = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  if (!given)
    throw new ApiError(
      'INVALID_BOOTSTRAP_TOKEN',
      'Send the bootstrap token as Authorization: Bearer <token>.',
    );
  return db.transaction(async (tx) => {
    const row = await installation(tx, true);
    if (!tokenMatches(given, config, row)) throw new ApiError('INVALID_BOOTSTRAP_TOKEN');
    if (row.bootstrapped_at) throw new ApiError('ALREADY_BOOTSTRAPPED');
    const partnerId = newId('partner');
    await tx.query('INSERT INTO partners (id, name) VALUES ($1, $2)', [partnerId, 'Partner']);
    await tx.query('UPDATE installation SET bootstrapped_at = $1', [now]);
    const key = await createKey(
      tx,
      { partnerId },
      { name: 'bootstrap', scope: 'partner' },
      { keyPrefix: config.keyPrefix, now },
    );
    return { partnerId, ...key };
  });
}

/** The installation's partner, if bootstrapped (the CLI attaches the accounts it creates to it). */
export async function installationPartner(sql: Sql): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM partners ORDER BY id LIMIT 1');
  return rows[0]?.id ?? null;
}
