// Console sessions as the access policy sees them: the `tidings_session` cookie resolved to its
// login and role, the CSRF token every change must carry, and the Origin check. The rows are made
// and ended by src/modules/console-auth; this file only reads them (and notes the last use).
//
// A lookup is cached for at most SESSION_CACHE_MS, like API keys (auth.ts): a sign-out in this
// process drops its entry at once, and one in another process is in force here within a second.
import type { FastifyRequest } from 'fastify';
import { TtlCache } from '../async/ttl-cache.ts';
import type { Sql } from '../database/db.ts';
import { ApiError } from '../http/errors.ts';
import { hashSecret, sameSecret } from './key-text.ts';

export const SESSION_COOKIE = 'tidings_session';
export const SESSION_CACHE_MS = 1000;
/** last_seen_at is written at most this often per session (the idle expiry is this coarse). */
export const LAST_SEEN_EVERY_MS = 60_000;

export type ConsoleRole = 'partner_admin' | 'account_admin' | 'agent';

export interface ConsoleSession {
  id: string;
  userId: string;
  email: string;
  name: string;
  role: ConsoleRole;
  partnerId: string | null;
  accountId: string | null;
  /** The team member of an account admin's or agent's login (null for a partner admin). */
  memberId: string | null;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

interface Row {
  id: string;
  user_id: string;
  email: string;
  name: string;
  kind: 'partner_admin' | 'member';
  partner_id: string | null;
  account_id: string | null;
  member_id: string | null;
  member_role: 'admin' | 'agent' | null;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export class ConsoleSessions {
  readonly #sql: Sql;
  readonly #idleMs: number;
  readonly #cache = new TtlCache<Row | null>(SESSION_CACHE_MS);
  readonly #lastSeen = new Map<string, number>();

  constructor(sql: Sql, idleMinutes: number) {
    this.#sql = sql;
    this.#idleMs = idleMinutes * 60_000;
  }

  /** The live session of a cookie's token, or null (unknown, signed out, idle or past its end). */
  async resolve(token: string | undefined, now: Date): Promise<ConsoleSession | null> {
    if (!token || token.length > 200) return null;
    const hash = hashSecret(token);
    const row = await this.#cache.get(hash, () => this.#load(hash));
    const lastSeen = row && this.#lastSeenIfLive(row, now);
    if (!row || lastSeen === null) return null;
    if (now.getTime() - lastSeen >= LAST_SEEN_EVERY_MS) {
      this.#lastSeen.set(row.id, now.getTime());
      if (this.#lastSeen.size > 100_000) this.#lastSeen.clear();
      await this.#sql.query('UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1', [row.id, now]);
    }
    return {
      id: row.id,
      userId: row.user_id,
      email: row.email,
      name: row.name,
      role: roleOf(row),
      partnerId: row.partner_id,
      accountId: row.account_id,
      memberId: row.member_id,
      csrfToken: row.csrf_token,
      createdAt: row.created_at,
      lastSeenAt: new Date(lastSeen),
      expiresAt: new Date(Math.min(row.expires_at.getTime(), lastSeen + this.#idleMs)),
    };
  }

  /**
   * The roles of those of these sessions that are live now, read from the database (not the cache),
   * with the same rule as `resolve`: one statement for all the open streams of a process
   * (modules/events/hub.ts). It notes no use: an open stream does not keep a session from idling.
   */
  async liveRoles(ids: string[], now: Date): Promise<Map<string, ConsoleRole>> {
    const { rows } = await this.#sql.query<Row>(`${SELECT_SESSION} WHERE s.id = ANY($1::text[])`, [ids]);
    const live = new Map<string, ConsoleRole>();
    for (const row of rows) if (this.#lastSeenIfLive(row, now) !== null) live.set(row.id, roleOf(row));
    return live;
  }

  /** When the session was last used, if it is live now (not ended, expired, idle, or of a removed member). */
  #lastSeenIfLive(row: Row, now: Date): number | null {
    if (row.revoked_at || row.expires_at <= now) return null;
    // A login of a member without a role would be a member deleted since the read: no session.
    if (row.kind === 'member' && !row.member_role) return null;
    const lastSeen = Math.max(row.last_seen_at.getTime(), this.#lastSeen.get(row.id) ?? 0);
    return now.getTime() - lastSeen >= this.#idleMs ? null : lastSeen;
  }

  /** Drops a cached session after this process ended it (sign-out). */
  forget(token: string): void {
    this.#cache.delete(hashSecret(token));
  }

  /** Drops every cached session (sign-out everywhere, a login removed). */
  forgetAll(): void {
    this.#cache.clear();
  }

  async #load(hash: string): Promise<Row | null> {
    const { rows } = await this.#sql.query<Row>(`${SELECT_SESSION} WHERE s.token_hash = $1`, [hash]);
    return rows[0] ?? null;
  }
}

const SELECT_SESSION = `SELECT s.id, s.user_id, u.email, u.name, u.kind, u.partner_id, u.account_id, u.member_id,
       m.role AS member_role, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, s.revoked_at
  FROM console_sessions s
  JOIN console_users u ON u.id = s.user_id
  LEFT JOIN team_members m ON m.id = u.member_id`;

function roleOf(row: Row): ConsoleRole {
  if (row.kind === 'partner_admin') return 'partner_admin';
  return row.member_role === 'admin' ? 'account_admin' : 'agent';
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The session cookie's token, if the request carries one. */
export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies?.[SESSION_COOKIE] || undefined;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A browser's cross-site request carries an Origin naming the other site: refused. An Origin is
 * accepted when it is this server as the request reached it (its Host) or PUBLIC_BASE_URL's.
 * Requests without Origin (curl, same-origin GETs) pass; the CSRF token guards their changes.
 */
export function checkOrigin(request: FastifyRequest, publicBaseUrl: string): void {
  const origin = header(request, 'origin');
  if (origin === undefined) return;
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    url = null;
  }
  const host = header(request, 'host');
  const ok = url !== null && (url.origin === new URL(publicBaseUrl).origin || sameHost(url, host));
  if (!ok)
    throw new ApiError(
      'FORBIDDEN',
      'The Origin header names another site: console calls must come from this server’s own pages.',
    );
}

// The Origin's host against the Host header, both read as URLs so default ports compare equal.
function sameHost(origin: URL, host: string | undefined): boolean {
  if (!host) return false;
  try {
    return new URL(`${origin.protocol}//${host}`).host === origin.host;
  } catch {
    return false;
  }
}

/** A change made with a session must carry the session's CSRF token in X-CSRF-Token (and a good Origin). */
export function checkCsrf(request: FastifyRequest, session: ConsoleSession, publicBaseUrl: string): void {
  if (!UNSAFE.has(request.method)) return;
  checkOrigin(request, publicBaseUrl);
  const given = header(request, 'x-csrf-token');
  if (!given || !sameSecret(given, session.csrfToken))
    throw new ApiError(
      'FORBIDDEN',
      'A change made with a console session needs the X-CSRF-Token header with the session’s CSRF token.',
    );
}
