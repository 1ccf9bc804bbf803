// The face of calls: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { voiceCallbackRoutes } from './callback-routes.ts';
export { subscribeCallMerges } from './contact-merges.ts';
export { VoiceDialer } from './dialer.ts';
export { callActions } from './owned-actions.ts';
export type { CallRow } from './repo.ts';
export { listCalls } from './repo.ts';
export { callRoutes } from './routes.ts';
export { CallSchema, toCall } from './schemas.ts';
export { NO_PHONE, placeCallIn } from './service.ts';
export { applyCallUpdate } from './status.ts';
export { billableMinutes } from './transition.ts';
