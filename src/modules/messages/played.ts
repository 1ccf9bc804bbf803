// WhatsApp's `played` status: the recipient played a voice message (or audio) the business sent.
// It is kept beside the message's status, which it does not move (a played message was read), and
// only its first report counts.
import type { ProviderUpdate } from '../../channels/types.ts';
import type { Tx } from '../../kernel/database/db.ts';

type Played = Extract<ProviderUpdate, { kind: 'message_played' }>;

/** Records when the message was played; answers whether this report was the first. */
export async function notePlayed(tx: Tx, accountId: string, update: Played): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE messages SET played_at = $4, updated_at = greatest(updated_at, $4)
      WHERE account_id = $1 AND direction = 'outbound' AND played_at IS NULL
        AND (id = $2 OR provider_message_id = $3)`,
    [accountId, update.messageId ?? null, update.providerMessageId, update.at],
  );
  return (rowCount ?? 0) > 0;
}
