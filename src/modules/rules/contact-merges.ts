// A merged contact's rule runs become the survivor's (contacts/merge.ts, hook `contacts.merging`):
// a run's history is the customer's, and erasing the survivor finds it by the survivor's id. A run
// is one rule's answer to one event (unique by rule and event), so moving it settles nothing else.
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeRuleRunMerges(hooks: Hooks): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId }) => {
    await tx.query('UPDATE rule_runs SET contact_id = $3 WHERE contact_id = $2 AND account_id = $1', [
      accountId,
      mergedId,
      survivorId,
    ]);
  });
}
