// A merged contact's rows in a campaign's per-contact table become the survivor's (contacts/merge.ts,
// hook `contacts.merging`), for message campaigns (campaign_recipients) and voice campaigns
// (voice_campaign_contacts) alike. A campaign has a contact once: where both were in it, the
// survivor's row stays and the merged contact's goes (nobody is messaged, called or counted twice).
// Found campaign by campaign through the primary key (campaign_id, contact_id): the tables have no
// index by contact.
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeCampaignContactMerges(
  hooks: Hooks,
  tables: {
    campaigns: 'campaigns' | 'voice_campaigns';
    rows: 'campaign_recipients' | 'voice_campaign_contacts';
  },
): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId }) => {
    const campaigns = `(SELECT id FROM ${tables.campaigns} WHERE account_id = $1)`;
    await tx.query(
      `DELETE FROM ${tables.rows} m
        WHERE m.campaign_id IN ${campaigns} AND m.contact_id = $2
          AND EXISTS (SELECT 1 FROM ${tables.rows} s WHERE s.campaign_id = m.campaign_id AND s.contact_id = $3)`,
      [accountId, mergedId, survivorId],
    );
    await tx.query(
      `UPDATE ${tables.rows} SET contact_id = $3 WHERE campaign_id IN ${campaigns} AND contact_id = $2`,
      [accountId, mergedId, survivorId],
    );
  });
}
