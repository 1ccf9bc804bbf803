// Accounts in the database. Every function that reads one account for a partner takes the partner
// id, so another partner's account is simply not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import { newId } from '../../kernel/values/ids.ts';

export type AccountStatus = 'ACTIVE' | 'SUSPENDED' | 'CLOSED';

export interface AccountRow {
  id: string;
  partner_id: string | null;
  name: string;
  country_code: string;
  plan_code: string;
  addons: string[];
  external_ref: string | null;
  status: AccountStatus;
  wallet_balance_micros: number;
  currency: string;
  low_balance_threshold_micros: number | null;
  created_at: Date;
  updated_at: Date;
  closed_at: Date | null;
}

export interface NewAccount {
  partnerId: string | null;
  name: string;
  countryCode: string;
  planCode: string;
  addons: string[];
  externalRef: string | null;
}

export async function insertAccount(sql: Sql, input: NewAccount): Promise<AccountRow> {
  const { rows } = await sql.query<AccountRow>(
    `INSERT INTO accounts (id, partner_id, name, country_code, plan_code, addons, external_ref)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [
      newId('account'),
      input.partnerId,
      input.name,
      input.countryCode,
      input.planCode,
      input.addons,
      input.externalRef,
    ],
  );
  return rows[0];
}

/** One account; with `partnerId` given, only if that partner owns it. `forUpdate` locks the row. */
export async function findAccount(
  sql: Sql,
  id: string,
  options: { partnerId?: string; forUpdate?: boolean } = {},
): Promise<AccountRow | null> {
  const params: unknown[] = [id];
  let where = 'id = $1';
  if (options.partnerId !== undefined) {
    params.push(options.partnerId);
    where += ' AND partner_id = $2';
  }
  const { rows } = await sql.query<AccountRow>(
    `SELECT * FROM accounts WHERE ${where}${options.forUpdate ? ' FOR UPDATE' : ''}`,
    params,
  );
  return rows[0] ?? null;
}

export async function listAccounts(
  sql: Sql,
  partnerId: string | null,
  page: Page,
  filters: { status?: AccountStatus; externalRef?: string },
): Promise<AccountRow[]> {
  const params: unknown[] = [page.limit + 1];
  const where: string[] = [];
  if (partnerId === null) where.push('partner_id IS NULL');
  else where.push(`partner_id = $${params.push(partnerId)}`);
  if (page.before) where.push(`id < $${params.push(page.before)}`);
  if (filters.status) where.push(`status = $${params.push(filters.status)}`);
  if (filters.externalRef) where.push(`external_ref = $${params.push(filters.externalRef)}`);
  const { rows } = await sql.query<AccountRow>(
    `SELECT * FROM accounts WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $1`,
    params,
  );
  return rows;
}

export interface AccountChanges {
  name?: string;
  planCode?: string;
  addons?: string[];
  externalRef?: string | null;
  status?: AccountStatus;
}

const COLUMN_OF: Record<keyof AccountChanges, string> = {
  name: 'name',
  planCode: 'plan_code',
  addons: 'addons',
  externalRef: 'external_ref',
  status: 'status',
};

export async function updateAccount(sql: Sql, id: string, changes: AccountChanges): Promise<AccountRow> {
  const params: unknown[] = [id];
  const sets = ['updated_at = now()'];
  for (const [field, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    sets.push(`${COLUMN_OF[field as keyof AccountChanges]} = $${params.push(value)}`);
  }
  if (changes.status === 'CLOSED') sets.push('closed_at = now()');
  const { rows } = await sql.query<AccountRow>(
    `UPDATE accounts SET ${sets.join(', ')} WHERE id = $1 RETURNING *`,
    params,
  );
  return rows[0];
}
