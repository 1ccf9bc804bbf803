// An account's business hours in the database: one row, or none (never set).
import type { Sql } from '../../kernel/database/db.ts';
import type { BusinessHours } from '../automation/index.ts';
import type { MessageFieldsInput } from '../messages/index.ts';

export interface HoursRow extends BusinessHours {
  account_id: string;
  away_message: MessageFieldsInput | null;
  away_every_seconds: number;
  greeting: MessageFieldsInput | null;
  updated_at: Date;
}

export async function findHours(sql: Sql, accountId: string): Promise<HoursRow | null> {
  const { rows } = await sql.query<HoursRow>('SELECT * FROM account_business_hours WHERE account_id = $1', [
    accountId,
  ]);
  return rows[0] ?? null;
}

export async function writeHours(sql: Sql, row: HoursRow): Promise<HoursRow> {
  const { rows } = await sql.query<HoursRow>(
    `INSERT INTO account_business_hours (account_id, timezone, weekly, holidays, away_message,
                                         away_every_seconds, greeting, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (account_id) DO UPDATE SET timezone = excluded.timezone, weekly = excluded.weekly,
       holidays = excluded.holidays, away_message = excluded.away_message,
       away_every_seconds = excluded.away_every_seconds, greeting = excluded.greeting,
       updated_at = excluded.updated_at
     RETURNING *`,
    [
      row.account_id,
      row.timezone,
      JSON.stringify(row.weekly),
      JSON.stringify(row.holidays),
      row.away_message === null ? null : JSON.stringify(row.away_message),
      row.away_every_seconds,
      row.greeting === null ? null : JSON.stringify(row.greeting),
      row.updated_at,
    ],
  );
  return rows[0]!;
}

export async function deleteHours(sql: Sql, accountId: string): Promise<void> {
  await sql.query('DELETE FROM account_business_hours WHERE account_id = $1', [accountId]);
}
