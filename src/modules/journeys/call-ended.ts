// A journey's run waiting at its place_call node goes on when the call ends, along the edge the
// call's end names (calls' `calls.ended` hook, in the transaction that ends the call).
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import type { CallRow } from '../calls/index.ts';
import { toCall } from '../calls/index.ts';
import { resumeAfterCall } from './runs.ts';

/** How a call's end leads a journey on from its place_call node. */
function journeyEdge(call: CallRow): 'answered' | 'no_answer' | 'failed' {
  if (call.status === 'completed') return call.answered_at ? 'answered' : 'no_answer';
  return call.status === 'busy' || call.status === 'no_answer' ? 'no_answer' : 'failed';
}

/** Wired in app.ts, after voice campaigns' subscriber (the order the call's end was handled in). */
export function subscribeJourneyCallResumes(
  hooks: Hooks,
  s: { now: () => Date; prices: { currency: string } },
): void {
  hooks.on('calls.ended', async (tx, { call }) => {
    const cause = call.caused_by as { kind?: string; runId?: string } | null;
    if (!call.journey_node_id || cause?.kind !== 'journey' || !cause.runId) return;
    const { id, status, answeredBy, durationSeconds, digits } = toCall(call, s.prices.currency);
    await resumeAfterCall(
      tx,
      cause.runId,
      call.journey_node_id,
      journeyEdge(call),
      { callId: id, status, answeredBy, durationSeconds, digits },
      s.now(),
    );
  });
}
