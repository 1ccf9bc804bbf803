// API keys: created with their text shown once, stored as a hash, listed by id and last four
// characters, revoked. An account's live keys are limited by its plan.

import { generateKey, hashSecret, type KeyScope } from '../../kernel/access/key-text.ts';
import type { Sql, Tx } from '../../kernel/database/db.ts';
import { ApiError, invalid, notFound } from '../../kernel/http/errors.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import { newId } from '../../kernel/values/ids.ts';
import { findAccount, hasFeature, planOf } from '../accounts/index.ts';

export interface KeyRow {
  id: string;
  partner_id: string | null;
  account_id: string | null;
  scope: KeyScope;
  name: string;
  last_four: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/** Who owns a key: a partner (partner keys) or an account (live and sandbox keys). */
export type KeyOwner = { partnerId: string } | { accountId: string };

export interface NewKey {
  name: string;
  scope: KeyScope;
  expiresAt?: string | null;
}

const COLUMNS =
  'id, partner_id, account_id, scope, name, last_four, created_at, expires_at, revoked_at, last_used_at';

function ownerClause(owner: KeyOwner): [string, string] {
  return 'partnerId' in owner
    ? ["partner_id = $1 AND scope = 'partner'", owner.partnerId]
    : ['account_id = $1', owner.accountId];
}

function checkExpiry(expiresAt: string | null | undefined, now: Date): Date | null {
  if (!expiresAt) return null;
  const at = new Date(expiresAt);
  if (at.getTime() <= now.getTime()) throw invalid('expiresAt', 'must be in the future');
  return at;
}

/**
 * Creates a key and returns its text (the only time it exists outside the caller's hands).
 * For an account, takes a lock on the account row so that concurrent creations cannot pass the
 * plan's key count together.
 */
export async function createKey(
  tx: Tx,
  owner: KeyOwner,
  input: NewKey,
  options: { keyPrefix: string; now: Date },
): Promise<{ row: KeyRow; apiKey: string }> {
  const expiresAt = checkExpiry(input.expiresAt, options.now);
  if ('accountId' in owner) {
    if (input.scope === 'partner') throw invalid('scope', 'must be live or sandbox');
    const account = await findAccount(tx, owner.accountId, { forUpdate: true });
    if (!account) throw notFound('account');
    if (account.status === 'CLOSED') throw new ApiError('CONFLICT', 'The account is closed.');
    const plan = planOf(account.plan_code);
    if (!hasFeature(plan, account.addons, 'api_access')) {
      // Say the way out: Pro has the API only with the add-on, lower plans need another plan.
      throw new ApiError(
        'PLAN_UPGRADE_REQUIRED',
        plan.apiAccess === 'addon'
          ? `The ${plan.name} plan has API access only with the \`api_access\` add-on: set "addons": ["api_access"] on the account (PATCH /partner/accounts/${owner.accountId}) or move it to Business or above.`
          : `The ${plan.name} plan has no API access: move the account to Business or above, or to Pro with the \`api_access\` add-on.`,
      );
    }
    const { rows } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM api_keys
        WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`,
      [owner.accountId, options.now],
    );
    if (rows[0].n >= plan.maxKeys) {
      throw new ApiError(
        'PLAN_UPGRADE_REQUIRED',
        `The ${plan.name} plan allows ${plan.maxKeys} active API keys; revoke one or upgrade the plan.`,
      );
    }
  }
  const apiKey = generateKey(options.keyPrefix, input.scope);
  const { rows } = await tx.query<KeyRow>(
    `INSERT INTO api_keys (id, partner_id, account_id, scope, name, key_hash, last_four, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [
      newId('apiKey'),
      'partnerId' in owner ? owner.partnerId : null,
      'accountId' in owner ? owner.accountId : null,
      input.scope,
      input.name,
      hashSecret(apiKey),
      apiKey.slice(-4),
      expiresAt,
    ],
  );
  return { row: rows[0], apiKey };
}

export async function listKeys(sql: Sql, owner: KeyOwner, page: Page): Promise<KeyRow[]> {
  const [clause, ownerId] = ownerClause(owner);
  const params: unknown[] = [ownerId, page.limit + 1];
  const before = page.before ? ` AND id < $${params.push(page.before)}` : '';
  const { rows } = await sql.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE ${clause}${before} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows;
}

/** Revokes a key of this owner; revoking twice is harmless. Unknown or foreign ids → 404. */
export async function revokeKey(sql: Sql, owner: KeyOwner, keyId: string, now: Date): Promise<void> {
  const [clause, ownerId] = ownerClause(owner);
  const { rowCount } = await sql.query(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3) WHERE ${clause} AND id = $2`,
    [ownerId, keyId, now],
  );
  if (rowCount === 0) throw notFound('API key');
}
