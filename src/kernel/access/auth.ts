// Who is calling: an API key resolved to its partner or account. Lookups are cached in the process
// for at most KEY_CACHE_MS, so that a revocation, suspension or plan change made by any process is
// in force everywhere within one second without a database round trip on every request.

import { andThen, type Maybe } from '../async/maybe.ts';
import { TtlCache } from '../async/ttl-cache.ts';
import type { Sql } from '../database/db.ts';
import { ApiError } from '../http/errors.ts';
import { hashSecret, type KeyScope, parseKey } from './key-text.ts';

export const KEY_CACHE_MS = 1000;

export interface AccountSnapshot {
  id: string;
  partnerId: string | null;
  name: string;
  createdAt: Date;
  status: 'ACTIVE' | 'SUSPENDED' | 'CLOSED';
  planCode: string;
  addons: string[];
  /** ISO 3166-1 alpha-2: phone numbers written without a country code are read as this country's. */
  countryCode: string;
  /** The provider of the account's messaging channel (live sends go through it). */
  channelProvider: 'sandbox' | 'whatsapp_cloud';
}

export interface KeyRecord {
  id: string;
  scope: KeyScope;
  partnerId: string | null;
  accountId: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** The caller of an authenticated request. */
export interface Principal {
  keyId: string;
  keyScope: KeyScope;
  /** The partner behind a partner key. */
  partnerId: string | null;
  /** The account acted on (for account endpoints); a partner key names it with X-Account-Id. */
  account: AccountSnapshot | null;
  /** live: real providers and charges; sandbox: simulated and free. Partner keys act live. */
  mode: 'live' | 'sandbox';
  /** The account's calls this month, this one included (counted as the call was admitted). */
  monthCalls?: number;
  /** A console session's call: keyId is then the login's id (lgn_…). */
  console?: {
    userId: string;
    role: 'partner_admin' | 'account_admin' | 'agent';
    sessionId: string;
    /** The team member an account admin's or agent's login is (null for a partner admin). */
    memberId: string | null;
  };
}

/** A key that may be used: not revoked, not expired. */
function isLive(key: Pick<KeyRecord, 'revokedAt' | 'expiresAt'>, now: Date): boolean {
  return !key.revokedAt && !(key.expiresAt && key.expiresAt <= now);
}

/** An account that may be acted on (a suspended or closed one is refused, 403 ACCOUNT_SUSPENDED). */
export function isActive(status: AccountSnapshot['status']): boolean {
  return status === 'ACTIVE';
}

export class Authenticator {
  readonly #sql: Sql;
  readonly #keyPrefix: string;
  readonly #keys = new TtlCache<KeyRecord | null>(KEY_CACHE_MS);
  readonly #accounts = new TtlCache<AccountSnapshot | null>(KEY_CACHE_MS);
  readonly #lastUseWritten = new Map<string, number>();

  constructor(sql: Sql, keyPrefix: string) {
    this.#sql = sql;
    this.#keyPrefix = keyPrefix;
  }

  /**
   * Resolves X-Api-Key to a live (not revoked, not expired) key, or throws 401: at once (no
   * promise) when the key is cached, as it is for a key in use.
   */
  authenticate(keyText: string | undefined, now: Date): Maybe<KeyRecord> {
    if (!keyText) throw new ApiError('INVALID_API_KEY', 'Send your API key in the X-Api-Key header.');
    const hash = hashSecret(keyText);
    // A text whose hash is cached was checked when it was first seen (its hash names it): the
    // format and checksum are read only before the database would be asked.
    if (!this.#keys.has(hash) && !parseKey(this.#keyPrefix, keyText)) throw new ApiError('INVALID_API_KEY');
    const key = this.#keys.get(hash, () => this.#loadKey(hash));
    return andThen(key, (k) => this.#live(k, now));
  }

  #live(key: KeyRecord | null, now: Date): KeyRecord {
    if (!key || !isLive(key, now)) throw new ApiError('INVALID_API_KEY');
    this.#noteUse(key, now);
    return key;
  }

  /**
   * Which of these keys are live now, read from the database (not the cache): one statement for
   * all the open streams of a process (modules/events/hub.ts).
   */
  async liveKeys(ids: string[], now: Date): Promise<Set<string>> {
    const { rows } = await this.#sql.query<{ id: string; revoked_at: Date | null; expires_at: Date | null }>(
      'SELECT id, revoked_at, expires_at FROM api_keys WHERE id = ANY($1::text[])',
      [ids],
    );
    return new Set(
      rows.filter((r) => isLive({ revokedAt: r.revoked_at, expiresAt: r.expires_at }, now)).map((r) => r.id),
    );
  }

  /** Which of these accounts may be acted on now (ACTIVE), from the database, in one statement. */
  async activeAccounts(ids: string[]): Promise<Set<string>> {
    const { rows } = await this.#sql.query<{ id: string; status: AccountSnapshot['status'] }>(
      'SELECT id, status FROM accounts WHERE id = ANY($1::text[])',
      [ids],
    );
    return new Set(rows.filter((r) => isActive(r.status)).map((r) => r.id));
  }

  /** The account's snapshot (at once when cached), or null when there is none. */
  account(accountId: string): Maybe<AccountSnapshot | null> {
    return this.#accounts.get(accountId, () => this.#loadAccount(accountId));
  }

  /** Drops what this process cached, after it changed a key or an account itself. */
  forgetAccount(accountId: string): void {
    this.#accounts.delete(accountId);
  }

  forgetKeys(): void {
    this.#keys.clear();
  }

  async #loadKey(hash: string): Promise<KeyRecord | null> {
    const { rows } = await this.#sql.query<{
      id: string;
      scope: KeyScope;
      partner_id: string | null;
      account_id: string | null;
      expires_at: Date | null;
      revoked_at: Date | null;
      last_used_at: Date | null;
    }>(
      `SELECT id, scope, partner_id, account_id, expires_at, revoked_at, last_used_at
         FROM api_keys WHERE key_hash = $1`,
      [hash],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      scope: r.scope,
      partnerId: r.partner_id,
      accountId: r.account_id,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
      lastUsedAt: r.last_used_at,
    };
  }

  async #loadAccount(accountId: string): Promise<AccountSnapshot | null> {
    const { rows } = await this.#sql.query<{
      id: string;
      partner_id: string | null;
      name: string;
      created_at: Date;
      status: AccountSnapshot['status'];
      plan_code: string;
      addons: string[];
      country_code: string;
      provider: 'sandbox' | 'whatsapp_cloud' | null;
    }>(
      `SELECT a.id, a.partner_id, a.name, a.created_at, a.status, a.plan_code, a.addons, a.country_code, c.provider
         FROM accounts a LEFT JOIN account_channels c ON c.account_id = a.id
        WHERE a.id = $1`,
      [accountId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      id: r.id,
      partnerId: r.partner_id,
      name: r.name,
      createdAt: r.created_at,
      status: r.status,
      planCode: r.plan_code,
      addons: r.addons,
      countryCode: r.country_code,
      channelProvider: r.provider ?? 'sandbox',
    };
  }

  // last_used_at is for humans auditing keys: minute precision is enough, and writing it on every
  // request would double the database load of a read.
  #noteUse(key: KeyRecord, now: Date): void {
    const last = this.#lastUseWritten.get(key.id) ?? key.lastUsedAt?.getTime() ?? 0;
    if (now.getTime() - last < 60_000) return;
    this.#lastUseWritten.set(key.id, now.getTime());
    this.#sql
      .query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [key.id, now])
      .catch(() => this.#lastUseWritten.delete(key.id));
  }
}
