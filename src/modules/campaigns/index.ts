// The face of campaigns: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.

export { subscribeRecipientMerges } from './contact-merges.ts';
export { subscribeCampaignFeedback } from './feedback.ts';
export { campaignRoutes } from './routes.ts';
export { CampaignSender } from './sender.ts';
