export { receiveInbound } from './inbound.ts';
export { conversationRoutes } from './routes.ts';
export { sandboxRoutes } from './sandbox-routes.ts';
export type { ConversationServices } from './service.ts';
export { assignConversation, closeConversation, subscribeConversationCleanup } from './service.ts';
