export { loadVoiceChannel } from './repo.ts';
export { voiceChannelRoutes } from './routes.ts';
export { callUrls, voiceCallbackBase } from './urls.ts';
