export {
  allPartnerApps,
  configurePartnerApp,
  loadPartnerApp,
  partnerAppOfAccount,
  toPartnerApp,
} from './partner-app.ts';
export type { ChannelDestination, ChannelRow } from './repo.ts';
export { channelsOfPartner, loadChannel, toChannelConfig } from './repo.ts';
export { channelRoutes } from './routes.ts';
export { applyChannelSignal, channelRefreshJob, isChannelSignal } from './signals.ts';
