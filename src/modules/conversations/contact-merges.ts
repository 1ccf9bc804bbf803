// A merged contact's conversations become the survivor's (contacts/merge.ts, hook
// `contacts.merging`). A contact has one open conversation at most: when both had one, the merged
// one's messages join the survivor's, which takes its unread count and latest activity, and the
// merged one is deleted (one customer, one chat; its notes and labels join the survivor's); its closed conversations just change contact.
import type { Tx } from '../../kernel/database/db.ts';
import { moveConversationMessages } from '../messages/index.ts';
import { MAX_LABELS } from './limits.ts';
import { CONVERSATION_COLUMNS, type ConversationRow } from './repo.ts';

export async function mergeConversationsOf(
  tx: Tx,
  accountId: string,
  survivorId: string,
  mergedId: string,
  now: Date,
): Promise<void> {
  const { rows: open } = await tx.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations
      WHERE account_id = $1 AND contact_id = ANY($2::text[]) AND status = 'open'
      ORDER BY id FOR UPDATE`,
    [accountId, [survivorId, mergedId]],
  );
  const kept = open.find((c) => c.contact_id === survivorId);
  const joining = open.find((c) => c.contact_id === mergedId);
  if (kept && joining) {
    await moveConversationMessages(tx, accountId, joining.id, kept.id);
    const latest = joining.last_message_at > kept.last_message_at ? joining : kept;
    await tx.query(
      `UPDATE conversations
          SET unread_count = unread_count + $3, last_message_at = $4, last_message_id = $5,
              last_inbound_at = greatest(last_inbound_at, $6::timestamptz),
              assignee_id = coalesce(assignee_id, $7), labels = $9, updated_at = $8
        WHERE account_id = $1 AND id = $2`,
      [
        accountId,
        kept.id,
        joining.unread_count,
        latest.last_message_at,
        latest.last_message_id,
        joining.last_inbound_at,
        joining.assignee_id,
        now,
        [...new Set([...kept.labels, ...joining.labels])].slice(0, MAX_LABELS),
      ],
    );
    // The merged one's notes stay with its messages.
    await tx.query(
      'UPDATE conversation_notes SET conversation_id = $3 WHERE account_id = $1 AND conversation_id = $2',
      [accountId, joining.id, kept.id],
    );
    await tx.query('DELETE FROM conversations WHERE account_id = $1 AND id = $2', [accountId, joining.id]);
  }
  await tx.query('UPDATE conversations SET contact_id = $3 WHERE account_id = $1 AND contact_id = $2', [
    accountId,
    mergedId,
    survivorId,
  ]);
  // An imported history's conversation (history-import.ts) goes with its contact, unless the
  // survivor has one: later chunks then add to the survivor's.
  await tx.query(
    `UPDATE history_threads SET contact_id = $3
      WHERE account_id = $1 AND contact_id = $2
        AND NOT EXISTS (SELECT 1 FROM history_threads WHERE account_id = $1 AND contact_id = $3)`,
    [accountId, mergedId, survivorId],
  );
  await tx.query('DELETE FROM history_threads WHERE account_id = $1 AND contact_id = $2', [
    accountId,
    mergedId,
  ]);
}
