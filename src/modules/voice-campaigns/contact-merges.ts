// A merged contact's voice campaign rows become the survivor's (campaign-shared/contact-merges.ts
// says how: where both were in a campaign, the survivor's row stays).
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { subscribeCampaignContactMerges } from '../campaign-shared/index.ts';

export function subscribeVoiceCampaignMerges(hooks: Hooks): void {
  subscribeCampaignContactMerges(hooks, { campaigns: 'voice_campaigns', rows: 'voice_campaign_contacts' });
}
