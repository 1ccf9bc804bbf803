// Rules in the database. Every function takes the account: another tenant's rule is not found.
// Positions are dense (1 … n per account); the writers that move them hold the account's rules lock
// (lockRules) so that two writers never interleave their shifts.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { Action, Conditions, TriggerEvent } from '../automation/index.ts';

export interface RuleRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  status: 'active' | 'paused';
  position: number;
  trigger_event: TriggerEvent;
  trigger_after: string | null;
  conditions: Conditions;
  actions: Action[];
  stop_processing: boolean;
  runs: number;
  matched: number;
  failed: number;
  last_run_at: Date | null;
  /** call_webhook's signing secret, sealed (never shown after the write that made it). */
  signing_secret_sealed: string | null;
  created_at: Date;
  updated_at: Date;
}

export type RuleValues = Pick<
  RuleRow,
  | 'name'
  | 'description'
  | 'status'
  | 'trigger_event'
  | 'trigger_after'
  | 'conditions'
  | 'actions'
  | 'stop_processing'
>;

/** Serialises the writers of one account's rules (their positions) until the transaction ends. */
export async function lockRules(sql: Sql, accountId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('rules:' || $1, 0))`, [accountId]);
}

export async function countRules(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM rules WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

/** Moves the rules at `from` and after (or between two positions) by `by` places. */
export async function shiftPositions(
  sql: Sql,
  accountId: string,
  range: { from: number; to?: number },
  by: 1 | -1,
): Promise<void> {
  await sql.query(
    `UPDATE rules SET position = position + $4
      WHERE account_id = $1 AND position >= $2 AND ($3::int IS NULL OR position <= $3)`,
    [accountId, range.from, range.to ?? null, by],
  );
}

export async function insertRule(
  sql: Sql,
  row: RuleValues & { id: string; account_id: string; position: number },
  now: Date,
): Promise<RuleRow> {
  const { rows } = await sql.query<RuleRow>(
    `INSERT INTO rules (id, account_id, name, description, status, position, trigger_event, trigger_after,
                        conditions, actions, stop_processing, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING *`,
    [
      row.id,
      row.account_id,
      row.name,
      row.description,
      row.status,
      row.position,
      row.trigger_event,
      row.trigger_after,
      JSON.stringify(row.conditions),
      JSON.stringify(row.actions),
      row.stop_processing,
      now,
    ],
  );
  return rows[0]!;
}

export async function findRule(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<RuleRow | null> {
  const { rows } = await sql.query<RuleRow>(
    `SELECT * FROM rules WHERE id = $1 AND account_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export async function updateRule(
  sql: Sql,
  accountId: string,
  id: string,
  values: RuleValues & { position: number },
  now: Date,
): Promise<RuleRow> {
  const { rows } = await sql.query<RuleRow>(
    `UPDATE rules SET name = $3, description = $4, status = $5, position = $6, trigger_event = $7,
                      trigger_after = $8, conditions = $9, actions = $10, stop_processing = $11, updated_at = $12
      WHERE id = $1 AND account_id = $2 RETURNING *`,
    [
      id,
      accountId,
      values.name,
      values.description,
      values.status,
      values.position,
      values.trigger_event,
      values.trigger_after,
      JSON.stringify(values.conditions),
      JSON.stringify(values.actions),
      values.stop_processing,
      now,
    ],
  );
  return rows[0]!;
}

export async function deleteRule(sql: Sql, accountId: string, id: string): Promise<void> {
  await sql.query('DELETE FROM rules WHERE id = $1 AND account_id = $2', [id, accountId]);
}

/** A page of the account's rules in evaluation order; the cursor is the last rule's id. */
export async function listRules(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { status?: string; event?: string },
): Promise<RuleRow[]> {
  const { rows } = await sql.query<RuleRow>(
    `SELECT * FROM rules
      WHERE account_id = $1
        AND ($2::text IS NULL OR position > (SELECT position FROM rules WHERE id = $2 AND account_id = $1))
        AND ($3::text IS NULL OR status = $3)
        AND ($4::text IS NULL OR trigger_event = $4)
      ORDER BY position
      LIMIT $5`,
    [accountId, page.before, filters.status ?? null, filters.event ?? null, page.limit + 1],
  );
  return rows;
}
