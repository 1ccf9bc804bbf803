// Teams and their memberships in the database. Every function takes the account: another tenant's
// team is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';

export type AssignmentMode = 'manual' | 'round_robin' | 'least_busy';
export type OnOffline = 'requeue' | 'keep';

export interface TeamRow {
  id: string;
  account_id: string;
  name: string;
  mode: AssignmentMode;
  capacity: number | null;
  is_default: boolean;
  on_offline: OnOffline;
  last_assigned_id: string | null;
  created_at: Date;
  updated_at: Date;
  /** In round robin's order. */
  members: string[];
}

export type TeamValues = Pick<
  TeamRow,
  'name' | 'mode' | 'capacity' | 'is_default' | 'on_offline' | 'members'
>;

const SELECT = `SELECT t.*, coalesce((SELECT array_agg(m.member_id ORDER BY m.position) FROM team_memberships m
                                      WHERE m.team_id = t.id), '{}') AS members
                  FROM teams t`;

export async function findTeam(
  sql: Sql,
  accountId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<TeamRow | null> {
  const { rows } = await sql.query<TeamRow>(
    `${SELECT} WHERE t.account_id = $1 AND t.id = $2 ${options.lock ? 'FOR UPDATE OF t' : ''}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

/** A team by id alone, locked (the drain: one of a team at a time, whichever process). */
export async function lockTeam(sql: Sql, id: string): Promise<TeamRow | null> {
  const { rows } = await sql.query<TeamRow>(`${SELECT} WHERE t.id = $1 FOR UPDATE OF t`, [id]);
  return rows[0] ?? null;
}

/**
 * A team's id and mode alone, without its members (the path that opens conversations asks it):
 * the team of that id, or with null the account's default team; null when there is none.
 */
export async function teamRef(
  sql: Sql,
  accountId: string,
  id: string | null,
): Promise<Pick<TeamRow, 'id' | 'mode'> | null> {
  const { rows } = await sql.query<Pick<TeamRow, 'id' | 'mode'>>(
    `SELECT id, mode FROM teams
      WHERE account_id = $1 AND CASE WHEN $2::text IS NULL THEN is_default ELSE id = $2 END`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

/** Which of these ids are the account's teams. */
export async function existingTeams(sql: Sql, accountId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await sql.query<{ id: string }>(
    'SELECT id FROM teams WHERE account_id = $1 AND id = ANY($2::text[])',
    [accountId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

export async function findTeamByName(
  sql: Sql,
  accountId: string,
  name: string,
): Promise<{ id: string } | null> {
  const { rows } = await sql.query<{ id: string }>(
    'SELECT id FROM teams WHERE account_id = $1 AND name = $2',
    [accountId, name],
  );
  return rows[0] ?? null;
}

export async function countTeams(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM teams WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

/** The teams a member is in, of those with this on-offline setting (any when left out), by id. */
export async function teamsOfMember(sql: Sql, memberId: string, onOffline?: OnOffline): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT t.id FROM teams t JOIN team_memberships m ON m.team_id = t.id
      WHERE m.member_id = $1 ${onOffline ? 'AND t.on_offline = $2' : ''} ORDER BY t.id`,
    onOffline ? [memberId, onOffline] : [memberId],
  );
  return rows.map((r) => r.id);
}

export async function listTeams(sql: Sql, accountId: string, page: Page): Promise<TeamRow[]> {
  const params: unknown[] = [accountId];
  const before = page.before ? `AND t.id < $${params.push(page.before)}` : '';
  const { rows } = await sql.query<TeamRow>(
    `${SELECT} WHERE t.account_id = $1 ${before} ORDER BY t.id DESC LIMIT ${page.limit + 1}`,
    params,
  );
  return rows;
}

/** Writes a team's values (inserting it when `insert`), its members replaced in the order given. */
export async function writeTeam(
  sql: Sql,
  accountId: string,
  id: string,
  values: TeamValues,
  now: Date,
  insert: boolean,
): Promise<void> {
  // One default per account: the one set now takes it from the other.
  if (values.is_default)
    await sql.query('UPDATE teams SET is_default = false WHERE account_id = $1 AND is_default AND id <> $2', [
      accountId,
      id,
    ]);
  const v = [
    id,
    accountId,
    values.name,
    values.mode,
    values.capacity,
    values.is_default,
    values.on_offline,
    now,
  ];
  if (insert) {
    await sql.query(
      `INSERT INTO teams (id, account_id, name, mode, capacity, is_default, on_offline, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
      v,
    );
  } else {
    await sql.query(
      `UPDATE teams SET name = $3, mode = $4, capacity = $5, is_default = $6, on_offline = $7, updated_at = $8
        WHERE id = $1 AND account_id = $2`,
      v,
    );
  }
  await sql.query('DELETE FROM team_memberships WHERE team_id = $1 AND NOT (member_id = ANY($2::text[]))', [
    id,
    values.members,
  ]);
  await sql.query(
    `INSERT INTO team_memberships (team_id, member_id, position)
     SELECT $1, m.id, m.position FROM unnest($2::text[]) WITH ORDINALITY AS m (id, position)
     ON CONFLICT (team_id, member_id) DO UPDATE SET position = excluded.position`,
    [id, values.members],
  );
}

export async function deleteTeam(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM teams WHERE account_id = $1 AND id = $2', [
    accountId,
    id,
  ]);
  return rowCount > 0;
}

export async function noteAssigned(sql: Sql, teamId: string, memberId: string): Promise<void> {
  await sql.query('UPDATE teams SET last_assigned_id = $2 WHERE id = $1', [teamId, memberId]);
}
