// Snooze: an agent puts an open conversation out of the inbox until a time (tomorrow morning, when
// the parcel should have arrived). Until then it is left out of `GET /conversations?status=open`
// (repo.ts: snoozed means "until a time still to come", so the list is exact whenever the scan last
// ran); it wakes at that time or when the customer writes, whichever comes first, each told once by
// `conversation.unsnoozed` with `reason`:
//   - `time`: wakeSnoozed, the automation worker's timed scan, takes the due ones in batches
//     (FOR UPDATE SKIP LOCKED, cleared in the same statement), so two processes scanning at once
//     wake each conversation once;
//   - `customer`: inbound.ts clears it in the transaction that stores the customer's message;
//   - `agent`: `POST /conversations/{id}/snooze {"until": null}`.
// Closing clears it without an event of its own (`conversation.closed` says it). Snoozing a closed
// conversation is 409: it is out of the inbox already.
import type { Database } from '../../kernel/database/db.ts';
import { conflict, invalid } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { emitEachOfAccounts } from './bulk-events.ts';
import { MAX_SNOOZE_DAYS } from './limits.ts';
import { CONVERSATION_COLUMNS, type ConversationRow } from './repo.ts';
import { type ConversationServices, changeConversation } from './service.ts';

const DAY_MS = 86_400_000;

export type WakeReason = 'time' | 'customer' | 'agent';

/** Snoozes an open conversation until `until`, or (null) wakes it now. */
export function snoozeConversation(
  s: ConversationServices,
  accountId: string,
  id: string,
  until: Date | null,
) {
  const now = s.now();
  if (until !== null && until.getTime() <= now.getTime()) throw invalid('until', 'must be in the future');
  if (until !== null && until.getTime() - now.getTime() > MAX_SNOOZE_DAYS * DAY_MS)
    throw invalid('until', `must be at most ${MAX_SNOOZE_DAYS} days ahead`);
  return changeConversation(s, accountId, id, async (tx, row, at) => {
    if (row.status !== 'open') throw conflict('The conversation is closed: only an open one is snoozed.');
    if (until === null) {
      if (row.snoozed_until === null) return null;
      await tx.query('UPDATE conversations SET snoozed_until = NULL, updated_at = $2 WHERE id = $1', [
        id,
        at,
      ]);
      return { type: 'conversation.unsnoozed' as const, extra: { reason: 'agent' satisfies WakeReason } };
    }
    await tx.query('UPDATE conversations SET snoozed_until = $2, updated_at = $3 WHERE id = $1', [
      id,
      until,
      at,
    ]);
    return {
      type: 'conversation.snoozed',
      extra: { previousSnoozedUntil: row.snoozed_until?.toISOString() ?? null },
    };
  });
}

const WAKE_BATCH = 200;

/**
 * Wakes the conversations whose snooze has run out, of every account, a batch per transaction;
 * answers how many. Each is cleared and told in one transaction, exactly once across processes.
 */
export async function wakeSnoozed(s: {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}): Promise<number> {
  let woken = 0;
  for (;;) {
    const now = s.now();
    const taken = await s.db.transaction(async (tx) => {
      const { rows } = await tx.query<ConversationRow>(
        `WITH due AS (
           SELECT id FROM conversations WHERE snoozed_until <= $1
            ORDER BY snoozed_until LIMIT ${WAKE_BATCH} FOR UPDATE SKIP LOCKED)
         UPDATE conversations c SET snoozed_until = NULL, updated_at = $1 FROM due WHERE c.id = due.id
         RETURNING ${CONVERSATION_COLUMNS.split(', ')
           .map((col) => `c.${col}`)
           .join(', ')}`,
        [now],
      );
      await emitEachOfAccounts(s, tx, rows, now, 'conversation.unsnoozed', { reason: 'time' });
      return rows.length;
    });
    woken += taken;
    if (taken < WAKE_BATCH) return woken;
  }
}
