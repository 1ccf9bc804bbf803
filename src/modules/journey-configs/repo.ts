// Journey configs in the database. Every function takes the account: another tenant's config is not
// found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { Config, ConfigType } from './schemas.ts';

export type ConfigStatus = 'active' | 'paused';

export interface ConfigRow {
  id: string;
  account_id: string;
  name: string;
  type: ConfigType;
  config: Config;
  journey_id: string;
  status: ConfigStatus;
  created_at: Date;
  updated_at: Date;
}

export async function insertConfig(
  sql: Sql,
  row: Omit<ConfigRow, 'status' | 'created_at' | 'updated_at'>,
  now: Date,
): Promise<ConfigRow> {
  const { rows } = await sql.query<ConfigRow>(
    `INSERT INTO journey_configs (id, account_id, name, type, config, journey_id, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $7) RETURNING *`,
    [row.id, row.account_id, row.name, row.type, JSON.stringify(row.config), row.journey_id, now],
  );
  return rows[0]!;
}

export async function findConfig(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConfigRow | null> {
  const { rows } = await sql.query<ConfigRow>(
    `SELECT * FROM journey_configs WHERE id = $1 AND account_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export async function updateConfig(
  sql: Sql,
  id: string,
  values: Pick<ConfigRow, 'name' | 'config' | 'status'>,
  now: Date,
): Promise<ConfigRow> {
  const { rows } = await sql.query<ConfigRow>(
    `UPDATE journey_configs SET name = $2, config = $3, status = $4, updated_at = $5 WHERE id = $1 RETURNING *`,
    [id, values.name, JSON.stringify(values.config), values.status, now],
  );
  return rows[0]!;
}

export async function deleteConfig(sql: Sql, id: string): Promise<void> {
  await sql.query('DELETE FROM journey_configs WHERE id = $1', [id]);
}

export async function listConfigs(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { type?: string; status?: string },
): Promise<ConfigRow[]> {
  const { rows } = await sql.query<ConfigRow>(
    `SELECT * FROM journey_configs
      WHERE account_id = $1 AND ($2::text IS NULL OR id < $2)
        AND ($3::text IS NULL OR type = $3) AND ($4::text IS NULL OR status = $4)
      ORDER BY id DESC LIMIT $5`,
    [accountId, page.before, filters.type ?? null, filters.status ?? null, page.limit + 1],
  );
  return rows;
}
