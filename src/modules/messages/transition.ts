// One outbound message's next state, given one report about it: a pure function, so the rules are
// stated and tested apart from the batch SQL of status.ts. The rules:
//
// - `accepted` (the provider's answer to the hand-over) records when and under which id the
//   provider took the message, and its word on it (Meta's message_status: accepted,
//   held_for_quality_assessment, paused). It moves no status: a hand-over is not a send.
// - Statuses move forward: queued → sent → delivered → read. One that arrives after a later one
//   (delivered after read: callbacks are not ordered) only fills in its time; no event. One that
//   skips ahead (read with no delivered) fills in the times it skipped and is one event.
// - `failed` comes from queued or sent; after delivered or read it is ignored.
// - A `delivered` or `read` after `failed` is recorded: the provider changed its mind (a customer
//   with several devices), and the message did reach them. It is an event like any move; the
//   error stays, as what was said before. (The charge follows: settlement.ts.)
// - What the provider reports beside the status (pricing, conversation) replaces what it said
//   before; a report changing only that is still a change (written, no event).
// - The time of each status is the first report of it; `sent_at` is the provider's `sent`, or the
//   time of the first later status when `sent` never came.
// - Nothing the provider reports moves a `scheduled` message (it was never handed over: a report
//   for it is not about it) or a `canceled` one (never handed over, and final): the report is
//   ignored. Only the release job (schedule.ts) moves `scheduled`, to `queued` or `failed`, and
//   only the cancel, to `canceled`.
import type {
  MessageStatusUpdate,
  ProviderConversation,
  ProviderError,
  ProviderPricing,
} from '../../channels/types.ts';
import { canonicalJson } from '../../kernel/values/canonical-json.ts';
import type { MessageRow, MessageStatus } from './repo.ts';

export interface StatusChange {
  /** A status the provider reports, or `accepted`: the provider's answer to the hand-over. */
  status: MessageStatusUpdate | 'accepted';
  /** When it happened, as the provider reports it. */
  at: Date;
  /** The provider's id, learnt when it takes the message. */
  providerMessageId?: string;
  /** For `accepted`: the provider's word on the hand-over. */
  providerStatus?: string;
  error?: ProviderError;
  /** What the provider says it bills for the message, and the conversation it counted it in. */
  pricing?: ProviderPricing;
  conversation?: ProviderConversation;
}

const RANK: Record<MessageStatus, number> = {
  scheduled: 0,
  canceled: 4,
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
  received: 4,
};

/** The provider's reports a change carries, laid over the row's (the latest report wins). */
function withReports(row: MessageRow, change: StatusChange): MessageRow {
  const { pricing, conversation } = change;
  if (!pricing && !conversation) return row;
  return {
    ...row,
    provider_pricing: pricing ?? row.provider_pricing,
    provider_conversation: conversation
      ? { ...conversation, expiresAt: conversation.expiresAt?.toISOString() ?? null }
      : row.provider_conversation,
  };
}

// Compared key order aside: a jsonb column gives its keys back in an order of its own.
const sameJson = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

const FIELDS = [
  'status',
  'provider_message_id',
  'provider_status',
  'accepted_at',
  'sent_at',
  'delivered_at',
  'read_at',
  'failed_at',
  'error',
  'provider_pricing',
  'provider_conversation',
] as const;

function differs(a: MessageRow, b: MessageRow): boolean {
  return FIELDS.some((f) => !sameJson(a[f], b[f]));
}

/** The state after an accepted hand-over, a failure, or a forward status; null for what is moot. */
function apply(row: MessageRow, change: StatusChange): MessageRow | null {
  const at = change.at;
  const providerMessageId = row.provider_message_id ?? change.providerMessageId ?? null;
  if (row.status === 'received' || row.status === 'scheduled' || row.status === 'canceled') return null;
  if (change.status === 'accepted') {
    return {
      ...row,
      provider_message_id: providerMessageId,
      accepted_at: row.accepted_at ?? at,
      provider_status: change.providerStatus ?? row.provider_status,
    };
  }
  if (change.status === 'failed') {
    if (row.status !== 'queued' && row.status !== 'sent') return null;
    return {
      ...row,
      status: 'failed',
      failed_at: at,
      error: change.error ?? null,
      provider_message_id: providerMessageId,
    };
  }
  const rank = RANK[change.status];
  // After a failure only a delivery counts (the message reached the customer after all).
  if (row.status === 'failed' && rank < 2) return null;
  const moves = row.status === 'failed' || rank > RANK[row.status];
  return {
    ...row,
    status: moves ? change.status : row.status,
    provider_message_id: providerMessageId,
    accepted_at: row.accepted_at ?? at,
    sent_at: row.sent_at ?? at,
    delivered_at: rank >= 2 ? (row.delivered_at ?? at) : row.delivered_at,
    read_at: rank >= 3 ? (row.read_at ?? at) : row.read_at,
  };
}

/** The row after the change, and whether its status moved (then an event is due); null when moot. */
export function nextState(
  before: MessageRow,
  change: StatusChange,
): { row: MessageRow; moved: boolean } | null {
  const after = apply(withReports(before, change), change);
  if (!after || !differs(after, before)) return null;
  return { row: after, moved: after.status !== before.status };
}
