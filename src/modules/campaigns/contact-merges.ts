// A merged contact's campaign recipient rows become the survivor's (campaign-shared/contact-merges.ts
// says how: where both were recipients, the survivor's row stays).
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { subscribeCampaignContactMerges } from '../campaign-shared/index.ts';

export function subscribeRecipientMerges(hooks: Hooks): void {
  subscribeCampaignContactMerges(hooks, { campaigns: 'campaigns', rows: 'campaign_recipients' });
}
