// The face of conversations: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.

export { conversationAgentRoutes } from './agent-routes.ts';
export type { Assignment, AssignReason } from './assignment.ts';
export {
  forgetTeam,
  openCounts,
  requeueMember,
  setAssignment,
  setAssignments,
  setTeam,
  takeQueued,
  teamsWithQueues,
} from './assignment.ts';
export { claimAwayReply, claimGreeting } from './auto-replies.ts';
export { emitEachOfAccounts } from './bulk-events.ts';
export { claimSurvey, openCommentWindow, surveyOptionId } from './csat.ts';
export { recordEchoes } from './echoes.ts';
export { historyImportJob, storeHistoryChunk } from './history-import.ts';
export { receiveInbound } from './inbound.ts';
export { addLabels, removeLabel } from './labels.ts';
export type { ConversationRow } from './repo.ts';
export { conversationRoutes } from './routes.ts';
export { sandboxRoutes } from './sandbox-routes.ts';
export type { AssignTo, ConversationServices } from './service.ts';
export {
  assignConversation,
  closeConversation,
  showConversation,
  subscribeConversationCleanup,
} from './service.ts';
export type { SlaDue, SlaJudgement } from './sla.ts';
export { dropSlaOfPolicy, recordSlaJudgements, setSlaDue, takeSlaDue } from './sla.ts';
export { wakeSnoozed } from './snooze.ts';
