export type { Audience } from './audience.ts';
export { AudienceSchema, audienceProblems, eachAudiencePage, unknownContactIds } from './audience.ts';
export { pruneSlots, takeSlots } from './rate-slots.ts';
export type { CampaignAction, CampaignStatus } from './states.ts';
export { assertAllowed, CAMPAIGN_STATUSES, goingStatus } from './states.ts';
export { campaignTable } from './table.ts';
