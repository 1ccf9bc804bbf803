// Which event types an account's automation listens to (automation_interest), read by the outbox's
// automation subscriber (outbox.ts) to decide whether an event goes to the inbox. Rewritten whole
// for the account, in the transaction that changes a rule (and, next, a sequence), so the outbox
// never sees a half-changed set.
import type { Tx } from '../../kernel/db.ts';

export async function refreshInterest(tx: Tx, accountId: string): Promise<void> {
  await tx.query('DELETE FROM automation_interest WHERE account_id = $1', [accountId]);
  await tx.query(
    `INSERT INTO automation_interest (account_id, event_type)
     SELECT DISTINCT account_id, trigger_event FROM rules
      WHERE account_id = $1 AND status = 'active' AND trigger_after IS NULL`,
    [accountId],
  );
}
