// The face of whatsapp-channel: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.

export type { HistoryNote } from './coexistence-sync.ts';
export { coexistenceSyncJob, noteHistory } from './coexistence-sync.ts';
export { onboardingResumeJob } from './embedded-signup.ts';
export { embeddedSignupRoutes } from './embedded-signup-routes.ts';
export { disconnectChannel, moveChannel } from './lifecycle.ts';
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
export { ChannelSchema, toChannel } from './schemas.ts';
export { applyChannelSignal, channelRefreshJob, isChannelSignal, noteTokenRefused } from './signals.ts';
