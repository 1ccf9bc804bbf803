// SLA policies in the database. Every function takes the account: another tenant's is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { SlaRule } from './due.ts';

export interface SlaPolicyRow extends SlaRule {
  account_id: string;
  name: string;
  position: number;
  created_at: Date;
  updated_at: Date;
}

export type SlaPolicyValues = Pick<
  SlaPolicyRow,
  | 'name'
  | 'first_response_minutes'
  | 'resolution_minutes'
  | 'business_hours'
  | 'labels'
  | 'team_ids'
  | 'position'
>;

/** The account's policies in the order they are tried (lowest position, then oldest). */
export async function listPolicies(sql: Sql, accountId: string): Promise<SlaPolicyRow[]> {
  const { rows } = await sql.query<SlaPolicyRow>(
    'SELECT * FROM sla_policies WHERE account_id = $1 ORDER BY position, created_at, id',
    [accountId],
  );
  return rows;
}

export async function findPolicy(
  sql: Sql,
  accountId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<SlaPolicyRow | null> {
  const { rows } = await sql.query<SlaPolicyRow>(
    `SELECT * FROM sla_policies WHERE account_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export async function findPolicyByName(
  sql: Sql,
  accountId: string,
  name: string,
): Promise<SlaPolicyRow | null> {
  const { rows } = await sql.query<SlaPolicyRow>(
    'SELECT * FROM sla_policies WHERE account_id = $1 AND name = $2',
    [accountId, name],
  );
  return rows[0] ?? null;
}

export async function countPolicies(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM sla_policies WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

/** Inserts or replaces the policy's values. */
export async function writePolicy(
  sql: Sql,
  accountId: string,
  id: string,
  v: SlaPolicyValues,
  now: Date,
): Promise<SlaPolicyRow> {
  const { rows } = await sql.query<SlaPolicyRow>(
    `INSERT INTO sla_policies (id, account_id, name, first_response_minutes, resolution_minutes, business_hours,
                               labels, team_ids, position, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
     ON CONFLICT (id) DO UPDATE SET name = excluded.name,
       first_response_minutes = excluded.first_response_minutes, resolution_minutes = excluded.resolution_minutes,
       business_hours = excluded.business_hours, labels = excluded.labels, team_ids = excluded.team_ids,
       position = excluded.position, updated_at = excluded.updated_at
     RETURNING *`,
    [
      id,
      accountId,
      v.name,
      v.first_response_minutes,
      v.resolution_minutes,
      v.business_hours,
      v.labels,
      v.team_ids,
      v.position,
      now,
    ],
  );
  return rows[0]!;
}

export async function deletePolicy(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM sla_policies WHERE account_id = $1 AND id = $2', [
    accountId,
    id,
  ]);
  return rowCount > 0;
}
