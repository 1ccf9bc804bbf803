// The reads and the delete every campaign table answers alike (`campaigns`, `voice_campaigns`):
// each read takes the account, so another tenant's campaign is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';

export function campaignTable<Row>(table: 'campaigns' | 'voice_campaigns') {
  return {
    async find(sql: Sql, accountId: string, id: string, options: { forUpdate?: boolean } = {}) {
      const { rows } = await sql.query<Row>(
        `SELECT * FROM ${table} WHERE id = $1 AND account_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
        [id, accountId],
      );
      return rows[0] ?? null;
    },

    /** Newest first, a page (and one more row, for the cursor); only `status` if given. */
    async list(sql: Sql, accountId: string, page: Page, status?: string) {
      const { rows } = await sql.query<Row>(
        `SELECT * FROM ${table}
          WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) AND ($3::text IS NULL OR status = $3)
          ORDER BY id DESC LIMIT $4`,
        [accountId, page.before, status ?? null, page.limit + 1],
      );
      return rows;
    },

    async count(sql: Sql, accountId: string) {
      const { rows } = await sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`,
        [accountId],
      );
      return rows[0]!.n;
    },

    async remove(sql: Sql, id: string) {
      await sql.query(`DELETE FROM ${table} WHERE id = $1`, [id]);
    },
  };
}
