// Applying what is learnt about a call (a provider's callback, the dialler's outcome, a cancel) to
// its locked row: the pure rules of transition.ts decide, this file writes the row and emits
// `call.status_changed` in the same transaction, once per move. When a call ends its billing is
// settled here (billing.ts), so a call is charged exactly when, and only if, its end is recorded.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { settleCall } from './billing.ts';
import { type CallChange, type CallRow, updateCall } from './repo.ts';
import { toCall } from './schemas.ts';
import { type CallReport, ENDED, nextCallState } from './transition.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /**
     * A call reached its end, in the transaction that recorded it: its owner goes on (a voice
     * campaign's contact is retried or done; a journey run waiting at its place_call node resumes).
     */
    'calls.ended': { call: CallRow };
  }
}

export interface StatusServices {
  events: EventOutbox;
  now: () => Date;
  prices: { currency: string };
}

export interface CallUpdate extends CallReport {
  answeredBy?: 'human' | 'machine' | 'unknown' | null;
  providerCallId?: string;
  error?: { code: string; message: string; providerCode: string | number | null };
}

/** Applies one report to a locked call; answers the call as it now is, and whether its status moved. */
export async function applyCallUpdate(
  tx: Tx,
  s: StatusServices,
  call: CallRow,
  update: CallUpdate,
): Promise<{ call: CallRow; moved: boolean }> {
  const { call: next, moved } = nextCallState(call, update);
  const change: CallChange = {};
  // Learnt whatever the status says (a late callback still names the call and who answered).
  if (update.providerCallId && !call.provider_call_id) change.provider_call_id = update.providerCallId;
  if (update.answeredBy && !call.answered_by) change.answered_by = update.answeredBy;
  if (moved) {
    Object.assign(change, {
      status: next.status,
      initiated_at: next.initiated_at,
      ringing_at: next.ringing_at,
      answered_at: next.answered_at,
      ended_at: next.ended_at,
      duration_seconds: next.duration_seconds,
      lease_until: null,
    } satisfies CallChange);
    if (update.error) {
      change.error_code = update.error.code;
      change.error_message = update.error.message;
      change.provider_error_code =
        update.error.providerCode === null ? null : String(update.error.providerCode);
    }
  }
  if (Object.keys(change).length === 0) return { call, moved: false };
  let row: CallRow = { ...call, ...change };
  if (moved && ENDED.includes(row.status)) {
    Object.assign(row, await settleCall(tx, s, row));
    change.billable_minutes = row.billable_minutes;
    change.charged_micros = row.charged_micros;
    change.held_micros = row.held_micros;
  }
  await updateCall(tx, call.id, change, s.now());
  row = { ...row, updated_at: s.now() };
  if (moved && ENDED.includes(row.status)) await s.events.hook(tx, 'calls.ended', { call: row });
  if (moved) {
    await s.events.emit(tx, {
      type: 'call.status_changed',
      accountId: call.account_id,
      data: { ...toCall(row, s.prices.currency), previousStatus: call.status },
      ...(call.caused_by ? { causedBy: call.caused_by as never } : {}),
    });
  }
  return { call: row, moved };
}
