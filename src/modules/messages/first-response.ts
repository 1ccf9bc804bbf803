// The business's reply in a conversation `cv` (its SLA: conversations/sla.ts, modules/sla): its first
// response since the SLA clock started, which meets that target when in time, so the next due time
// to judge is then the resolution's. Written here, where a send writes the conversation's last
// activity (accept-batch.ts, schedule.ts), and for the Business app's echoes (recordFirstResponse,
// from conversations/echoes.ts); a reply late leaves the due time for the breach scan to find missed.
import type { Sql } from '../../kernel/database/db.ts';

/** SET clauses for a reply at `at` (SQL), when `replies` (SQL: a boolean) holds. */
export const firstResponseSql = (at: string, replies = 'true') => `
  first_response_at = CASE WHEN ${replies} THEN coalesce(cv.first_response_at, ${at}) ELSE cv.first_response_at END,
  sla_next_due_at = CASE WHEN ${replies} AND cv.first_response_at IS NULL
                              AND cv.sla_next_due_at = cv.sla_first_response_due_at
                              AND ${at} <= cv.sla_first_response_due_at
                         THEN CASE WHEN cv.sla_resolution_breached_at IS NULL THEN cv.sla_resolution_due_at END
                         ELSE cv.sla_next_due_at END`;

/** A reply at `at` in the conversation, written apart (the Business app's echoes). */
export async function recordFirstResponse(sql: Sql, accountId: string, conversationId: string, at: Date) {
  await sql.query(
    `UPDATE conversations cv SET ${firstResponseSql('$3::timestamptz')} WHERE account_id = $1 AND id = $2`,
    [accountId, conversationId, at],
  );
}
