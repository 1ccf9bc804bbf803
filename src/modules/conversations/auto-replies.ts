// The business's automatic replies claim their conversation once (modules/business-hours): the away
// message at most once per conversation per period, the greeting once per conversation, for its
// first customer message. Each claim is one UPDATE that only one transaction can win, so two
// workers taking the same message (or two messages of one burst) send one reply.
import type { Tx } from '../../kernel/database/db.ts';

/** Claims the away message for the conversation, if none was sent in the last `everyMs`. */
export async function claimAwayReply(
  tx: Tx,
  accountId: string,
  conversationId: string,
  now: Date,
  everyMs: number,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE conversations SET away_sent_at = $3
      WHERE account_id = $1 AND id = $2 AND status = 'open'
        AND (away_sent_at IS NULL OR away_sent_at <= $3::timestamptz - make_interval(secs => $4))`,
    [accountId, conversationId, now, everyMs / 1000],
  );
  return rowCount > 0;
}

/** Claims the greeting for the conversation, when `messageId` is its first customer message. */
export async function claimGreeting(
  tx: Tx,
  accountId: string,
  conversationId: string,
  messageId: string,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE conversations SET greeted_at = $4
      WHERE account_id = $1 AND id = $2 AND status = 'open' AND greeted_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM message_rows
                         WHERE account_id = $1 AND conversation_id = $2 AND direction = 'inbound' AND id < $3)`,
    [accountId, conversationId, messageId, now],
  );
  return rowCount > 0;
}
