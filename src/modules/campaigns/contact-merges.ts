// A merged contact's campaign recipient rows become the survivor's (contacts/merge.ts, hook
// `contacts.merging`). A campaign has a contact once: where both were recipients, the survivor's row
// stays and the merged contact's goes (nobody is messaged or counted twice). Found campaign by
// campaign through the primary key (campaign_id, contact_id): the table has no index by contact.
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeRecipientMerges(hooks: Hooks): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId }) => {
    const campaigns = '(SELECT id FROM campaigns WHERE account_id = $1)';
    await tx.query(
      `DELETE FROM campaign_recipients m
        WHERE m.campaign_id IN ${campaigns} AND m.contact_id = $2
          AND EXISTS (SELECT 1 FROM campaign_recipients s WHERE s.campaign_id = m.campaign_id AND s.contact_id = $3)`,
      [accountId, mergedId, survivorId],
    );
    await tx.query(
      `UPDATE campaign_recipients SET contact_id = $3 WHERE campaign_id IN ${campaigns} AND contact_id = $2`,
      [accountId, mergedId, survivorId],
    );
  });
}
