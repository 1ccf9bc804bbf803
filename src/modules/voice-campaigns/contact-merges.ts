// A merged contact's voice campaign rows become the survivor's (contacts/merge.ts, hook
// `contacts.merging`), as campaigns/contact-merges.ts does for message campaigns: where both were in
// a campaign, the survivor's row stays.
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeVoiceCampaignMerges(hooks: Hooks): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId }) => {
    const campaigns = '(SELECT id FROM voice_campaigns WHERE account_id = $1)';
    await tx.query(
      `DELETE FROM voice_campaign_contacts m
        WHERE m.campaign_id IN ${campaigns} AND m.contact_id = $2
          AND EXISTS (SELECT 1 FROM voice_campaign_contacts s WHERE s.campaign_id = m.campaign_id AND s.contact_id = $3)`,
      [accountId, mergedId, survivorId],
    );
    await tx.query(
      `UPDATE voice_campaign_contacts SET contact_id = $3 WHERE campaign_id IN ${campaigns} AND contact_id = $2`,
      [accountId, mergedId, survivorId],
    );
  });
}
