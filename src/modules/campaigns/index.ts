export { subscribeCampaignFeedback } from './feedback.ts';
export { campaignRoutes } from './routes.ts';
export { CampaignSender } from './sender.ts';
