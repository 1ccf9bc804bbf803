// The breach scan (the automation worker's timed scan): the conversations whose next SLA due time
// has passed, of every account, a batch per transaction, locked (FOR UPDATE SKIP LOCKED: another
// process takes the others). Each is judged (due.ts): a target missed now is recorded on it and told
// once, `conversation.sla_breached` with the target, its due time and the policy; its next due time
// is the soonest still to come. A restart loses nothing: what is due stays due until it is judged.
import type { Database } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import {
  type ConversationRow,
  emitEachOfAccounts,
  recordSlaJudgements,
  type SlaJudgement,
  takeSlaDue,
} from '../conversations/index.ts';
import { judge, type SlaTarget } from './due.ts';

const BATCH = 200;

const dueOf = (row: ConversationRow, target: SlaTarget) =>
  (target === 'first_response' ? row.sla_first_response_due_at : row.sla_resolution_due_at)!.toISOString();

/** Judges every conversation due by now; answers how many targets were missed. */
export async function judgeDueSla(s: {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}): Promise<number> {
  let missed = 0;
  for (;;) {
    const now = s.now();
    const { taken, told } = await s.db.transaction(async (tx) => {
      const rows = await takeSlaDue(tx, now, BATCH);
      const judged: SlaJudgement[] = rows.map((row) => {
        const j = judge(row, now);
        return {
          row,
          firstResponseBreached: j.missed.includes('first_response'),
          resolutionBreached: j.missed.includes('resolution'),
          nextDueAt: j.nextDueAt,
        };
      });
      await recordSlaJudgements(tx, judged, now);
      let count = 0;
      for (const target of ['first_response', 'resolution'] as const) {
        const those = judged
          .filter((j) => (target === 'first_response' ? j.firstResponseBreached : j.resolutionBreached))
          .map((j) => j.row);
        await emitEachOfAccounts(s, tx, those, now, 'conversation.sla_breached', (row) => ({
          target,
          dueAt: dueOf(row, target),
          policyId: row.sla_policy_id,
        }));
        count += those.length;
      }
      return { taken: rows.length, told: count };
    });
    missed += told;
    if (taken < BATCH) return missed;
  }
}
