// The face of voice-channel: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { loadVoiceChannel } from './repo.ts';
export { voiceChannelRoutes } from './routes.ts';
export { callUrls, voiceCallbackBase } from './urls.ts';
