// The face of messages: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export type { AcceptServices } from './accept.ts';
export { insufficientBalance } from './accept.ts';
export type { SendRequest, SendResult } from './accept-batch.ts';
export { acceptBatch, wakeDispatchers } from './accept-batch.ts';
export { AcceptQueue, lanesFor } from './accept-queue.ts';
export type { RecipientInput } from './batch.ts';
export { prepareRecipients } from './batch.ts';
export { moveConversationMessages, subscribeMessageMerges } from './contact-merges.ts';
export type { MessageFieldsInput, SendFieldsInput } from './content.ts';
export { checkContent } from './content.ts';
export { dispatchJob } from './dispatch.ts';
export { recordFirstResponse } from './first-response.ts';
export { notePlayed } from './played.ts';
export type { PreparedMessage } from './prepare.ts';
export { prepareMessage, templateLookup } from './prepare.ts';
export type { HistoryRow, MessageContext, MessageRow, OutboundContent, StoredContent } from './repo.ts';
export {
  adoptIntoConversation,
  contactIdsOf,
  findByProviderId,
  findMessage,
  idsByProviderIds,
  insertEcho,
  insertHistory,
  insertInbound,
  messageFromJson,
  placeInConversation,
} from './repo.ts';
export { messageRoutes } from './routes.ts';
export { sandboxStatusJob } from './sandbox-job.ts';
export { releaseJob } from './schedule.ts';
export {
  chatSendFields,
  ErrorInfo,
  MessageSchema,
  MessageStatusSchema,
  messageFields,
  Phone,
  RecipientSchema,
  recipientFields,
  scheduleFields,
  templateSendFields,
} from './schemas.ts';
export type { SendContext } from './send-request.ts';
export { sendForRequest } from './send-request.ts';
export type { TargetedChange } from './status.ts';
export { applyStatuses } from './status.ts';
export { toMessage } from './view.ts';
