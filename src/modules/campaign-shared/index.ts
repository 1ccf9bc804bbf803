// The face of campaign-shared: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export type { Audience } from './audience.ts';
export { AudienceSchema, audienceProblems, eachAudiencePage, unknownContactIds } from './audience.ts';
export { subscribeCampaignContactMerges } from './contact-merges.ts';
export { pruneSlots, takeSlots } from './rate-slots.ts';
export type { CampaignAction, CampaignStatus } from './states.ts';
export { assertAllowed, CAMPAIGN_STATUSES, goingStatus } from './states.ts';
export { campaignTable } from './table.ts';
