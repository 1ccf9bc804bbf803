export { subscribeCampaignCallOutcomes } from './outcome.ts';
export { advanceCampaigns } from './pacer.ts';
export { voiceCampaignRoutes } from './routes.ts';
