// The face of voice-campaigns: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.

export { subscribeVoiceCampaignMerges } from './contact-merges.ts';
export { subscribeCampaignCallOutcomes } from './outcome.ts';
export { advanceCampaigns } from './pacer.ts';
export { voiceCampaignRoutes } from './routes.ts';
