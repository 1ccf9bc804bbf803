// Console logins, sessions and invitations in the database.
import type { Sql } from '../../kernel/database/db.ts';

export interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  kind: 'partner_admin' | 'member';
  partner_id: string | null;
  account_id: string | null;
  member_id: string | null;
  created_at: Date;
}

export interface InvitationRow {
  id: string;
  token_hash: string;
  kind: 'partner_admin' | 'member';
  email: string;
  name: string;
  partner_id: string | null;
  account_id: string | null;
  member_id: string | null;
  created_by: string;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
}

export async function insertUser(sql: Sql, row: Omit<UserRow, 'created_at'>, now: Date): Promise<UserRow> {
  const { rows } = await sql.query<UserRow>(
    `INSERT INTO console_users (id, email, name, password_hash, kind, partner_id, account_id, member_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
    [
      row.id,
      row.email,
      row.name,
      row.password_hash,
      row.kind,
      row.partner_id,
      row.account_id,
      row.member_id,
      now,
    ],
  );
  return rows[0]!;
}

export async function findUserByEmail(sql: Sql, email: string): Promise<UserRow | null> {
  const { rows } = await sql.query<UserRow>('SELECT * FROM console_users WHERE email = $1', [email]);
  return rows[0] ?? null;
}

export async function insertSession(
  sql: Sql,
  row: {
    id: string;
    userId: string;
    tokenHash: string;
    csrfToken: string;
    expiresAt: Date;
    address: string | null;
    userAgent: string | null;
  },
  now: Date,
): Promise<void> {
  await sql.query(
    `INSERT INTO console_sessions
       (id, user_id, token_hash, csrf_token, created_at, last_seen_at, expires_at, address, user_agent)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8)`,
    [row.id, row.userId, row.tokenHash, row.csrfToken, now, row.expiresAt, row.address, row.userAgent],
  );
}

export async function revokeSession(sql: Sql, sessionId: string, now: Date): Promise<void> {
  await sql.query('UPDATE console_sessions SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1', [
    sessionId,
    now,
  ]);
}

/** Ends every live session of the login; answers how many it ended. */
export async function revokeUserSessions(sql: Sql, userId: string, now: Date): Promise<number> {
  const { rowCount } = await sql.query(
    `UPDATE console_sessions SET revoked_at = $2
      WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2`,
    [userId, now],
  );
  return rowCount;
}

export async function insertInvitation(
  sql: Sql,
  row: Omit<InvitationRow, 'created_at' | 'accepted_at'>,
  now: Date,
): Promise<InvitationRow> {
  const { rows } = await sql.query<InvitationRow>(
    `INSERT INTO console_invitations
       (id, token_hash, kind, email, name, partner_id, account_id, member_id, created_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      row.id,
      row.token_hash,
      row.kind,
      row.email,
      row.name,
      row.partner_id,
      row.account_id,
      row.member_id,
      row.created_by,
      now,
      row.expires_at,
    ],
  );
  return rows[0]!;
}

/** The invitation of a token, as it stands. */
export async function findInvitation(sql: Sql, tokenHash: string): Promise<InvitationRow | null> {
  const { rows } = await sql.query<InvitationRow>('SELECT * FROM console_invitations WHERE token_hash = $1', [
    tokenHash,
  ]);
  return rows[0] ?? null;
}

/** The invitation of a token, locked for its one acceptance. */
export async function lockInvitation(sql: Sql, tokenHash: string): Promise<InvitationRow | null> {
  const { rows } = await sql.query<InvitationRow>(
    'SELECT * FROM console_invitations WHERE token_hash = $1 FOR UPDATE',
    [tokenHash],
  );
  return rows[0] ?? null;
}

export async function markAccepted(sql: Sql, id: string, now: Date): Promise<void> {
  await sql.query('UPDATE console_invitations SET accepted_at = $2 WHERE id = $1', [id, now]);
}
