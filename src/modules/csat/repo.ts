// An account's satisfaction survey setting in the database: one row, or none (no survey).
import type { Sql } from '../../kernel/database/db.ts';

export interface CsatRow {
  account_id: string;
  scale: 'five' | 'faces';
  question: string;
  comment_prompt: string | null;
  thanks: string | null;
  updated_at: Date;
}

export async function findCsat(sql: Sql, accountId: string): Promise<CsatRow | null> {
  const { rows } = await sql.query<CsatRow>('SELECT * FROM account_csat WHERE account_id = $1', [accountId]);
  return rows[0] ?? null;
}

export async function writeCsat(sql: Sql, row: CsatRow): Promise<CsatRow> {
  const { rows } = await sql.query<CsatRow>(
    `INSERT INTO account_csat (account_id, scale, question, comment_prompt, thanks, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (account_id) DO UPDATE SET scale = excluded.scale, question = excluded.question,
       comment_prompt = excluded.comment_prompt, thanks = excluded.thanks, updated_at = excluded.updated_at
     RETURNING *`,
    [row.account_id, row.scale, row.question, row.comment_prompt, row.thanks, row.updated_at],
  );
  return rows[0]!;
}

export async function deleteCsat(sql: Sql, accountId: string): Promise<void> {
  await sql.query('DELETE FROM account_csat WHERE account_id = $1', [accountId]);
}
