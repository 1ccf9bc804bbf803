// The face of automation: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export type { Action, ActionChecks, ActionTargets } from './action-checks.ts';
export { actionProblems, contactChange } from './action-checks.ts';
export { actor } from './action-handlers.ts';
export { ActionSchema, CONTACT_CHANGE, MAX_ACTIONS } from './action-schema.ts';
export type { AccountActor, ActorRow } from './actors.ts';
export { actorFrom, actorOf, actorsOf, inboxActorFrom } from './actors.ts';
export { batchOrOneByOne, runDueBatch } from './batches.ts';
export type { BusinessHours, OpeningRange } from './business-hours.ts';
export {
  addOpenMinutes,
  businessHoursProblems,
  isOpenAt,
  MAX_HOLIDAYS,
  MAX_RANGES,
} from './business-hours.ts';
export type { Condition, Conditions, TraceEntry } from './conditions.ts';
export {
  conditionProblems,
  evaluate,
  fieldType,
  JOURNEY_PREFIXES,
  OPS,
  triggerConditionProblems,
} from './conditions.ts';
export { ConditionsSchema } from './conditions-schema.ts';
export type { ConversationRef, RunScope } from './context.ts';
export { conditionContext, contactIdOf, fieldValue, loadScope, scopeFor, scopeOf } from './context.ts';
export { sendInboxReply } from './inbox-reply.ts';
export { EXIT_EVENTS, refreshInterest } from './interest.ts';
export type { KeywordMatch } from './keywords.ts';
export { matchesKeyword } from './keywords.ts';
export { liquidData, liquidDataIssue } from './liquid-data.ts';
export { AUTOMATION_CHANNEL, AUTOMATION_DUE_CHANNEL, automationInbox, dueEverywhere } from './outbox.ts';
export type { FieldSchema } from './render-fields.ts';
export { bodyBudget, dataBudget, renderFields, renderMessage, renderWhole } from './render-fields.ts';
export type { Act, ActionResult, Actor, EffectServices, OwnedActions } from './run-actions.ts';
export {
  automatedSendsLastHour,
  failed,
  failureOf,
  joinTransaction,
  markCausedBy,
  ok,
  runActions,
} from './run-actions.ts';
export {
  isTemplated,
  OutputBudget,
  RenderLimitError,
  render,
  TemplateError,
  templateProblem,
} from './templating.ts';
export type { SendWindow, Weekday } from './time.ts';
export {
  contactZone,
  durationMs,
  durationProblem,
  MAX_DELAY,
  nextOpening,
  sendWindowProblems,
  signedDurationMs,
  WEEKDAYS,
  windowZone,
} from './time.ts';
export { findOccasions, occasionId } from './timed-occasions.ts';
export type { TriggerEvent } from './triggers.ts';
export { MAX_DEPTH, TIMED_TRIGGERS, TRIGGER_EVENTS } from './triggers.ts';
export type { CallState } from './webhook-calls.ts';
export { CallSender, callStates, queueCall } from './webhook-calls.ts';
