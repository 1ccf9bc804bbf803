// A merged contact's messages become the survivor's (contacts/merge.ts runs the hook
// `contacts.merging` in the merge's transaction). Found through the merged contact's addresses,
// which every message of it carries (its number, or its user id: messages_account_phone and
// messages_account_user_id), not by contact id, which no index of messages leads with.
import type { Sql } from '../../kernel/database/db.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';

/** Wired in app.ts, before the modules that move conversations (which move messages between them). */
export function subscribeMessageMerges(hooks: Hooks): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId, merged }) => {
    await tx.query(
      `UPDATE messages SET contact_id = $3
        WHERE account_id = $1 AND (phone = $4 OR whatsapp_user_id = $5) AND contact_id = $2`,
      [accountId, mergedId, survivorId, merged.phone, merged.whatsappUserId],
    );
  });
}

/** Moves a conversation's messages into another (two conversations of one customer become one). */
export async function moveConversationMessages(
  sql: Sql,
  accountId: string,
  fromConversationId: string,
  toConversationId: string,
): Promise<void> {
  await sql.query('UPDATE messages SET conversation_id = $3 WHERE account_id = $1 AND conversation_id = $2', [
    accountId,
    fromConversationId,
    toConversationId,
  ]);
}
