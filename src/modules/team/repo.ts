// Team members in the database. Every function takes the account, so another tenant's member is
// not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';

export type Role = 'admin' | 'agent';
export type Availability = 'online' | 'away' | 'offline';

export interface MemberRow {
  id: string;
  account_id: string;
  name: string;
  email: string;
  role: Role;
  availability: Availability;
  availability_changed_at: Date | null;
  created_at: Date;
}

export async function insertMember(
  sql: Sql,
  row: Omit<MemberRow, 'created_at' | 'availability' | 'availability_changed_at'>,
  now: Date,
): Promise<MemberRow> {
  const { rows } = await sql.query<MemberRow>(
    `INSERT INTO team_members (id, account_id, name, email, role, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [row.id, row.account_id, row.name, row.email, row.role, now],
  );
  return rows[0]!;
}

export async function findMember(
  sql: Sql,
  accountId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<MemberRow | null> {
  const { rows } = await sql.query<MemberRow>(
    `SELECT * FROM team_members WHERE id = $1 AND account_id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export async function findMemberByEmail(
  sql: Sql,
  accountId: string,
  email: string,
): Promise<MemberRow | null> {
  const { rows } = await sql.query<MemberRow>(
    'SELECT * FROM team_members WHERE account_id = $1 AND email = $2',
    [accountId, email],
  );
  return rows[0] ?? null;
}

export async function countMembers(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM team_members WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

export async function listMembers(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { role?: Role },
): Promise<MemberRow[]> {
  const params: unknown[] = [accountId, page.limit + 1];
  let where = 'account_id = $1';
  if (page.before) where += ` AND id < $${params.push(page.before)}`;
  if (filters.role) where += ` AND role = $${params.push(filters.role)}`;
  const { rows } = await sql.query<MemberRow>(
    `SELECT * FROM team_members WHERE ${where} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows;
}

/** Sets a member's availability; answers the row, or null (not the account's member). */
export async function setAvailability(
  sql: Sql,
  accountId: string,
  id: string,
  availability: Availability,
  now: Date,
): Promise<MemberRow | null> {
  const { rows } = await sql.query<MemberRow>(
    `UPDATE team_members SET availability = $3,
            availability_changed_at = CASE WHEN availability = $3 THEN availability_changed_at ELSE $4 END
      WHERE id = $1 AND account_id = $2 RETURNING *`,
    [id, accountId, availability, now],
  );
  return rows[0] ?? null;
}

export async function deleteMember(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM team_members WHERE id = $1 AND account_id = $2', [
    id,
    accountId,
  ]);
  return rowCount > 0;
}

/** Of these ids, those of the account's members. */
export async function existingMembers(sql: Sql, accountId: string, ids: string[]): Promise<Set<string>> {
  const { rows } = await sql.query<{ id: string }>(
    'SELECT id FROM team_members WHERE account_id = $1 AND id = ANY($2::text[])',
    [accountId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** Of these members of the account, those online now (who take new conversations). */
export async function onlineMembers(sql: Sql, accountId: string, ids: string[]): Promise<Set<string>> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM team_members WHERE account_id = $1 AND id = ANY($2::text[]) AND availability = 'online'`,
    [accountId, ids],
  );
  return new Set(rows.map((r) => r.id));
}
