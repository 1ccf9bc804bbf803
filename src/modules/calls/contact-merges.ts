// Calls made to a merged contact name the survivor (contacts/merge.ts, hook `contacts.merging`).
// Found by the number they went to: a contact without one was never called.
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeCallMerges(hooks: Hooks): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId, merged }) => {
    if (!merged.phone) return;
    await tx.query(
      'UPDATE calls SET contact_id = $3 WHERE account_id = $1 AND to_number = $4 AND contact_id = $2',
      [accountId, mergedId, survivorId, merged.phone],
    );
  });
}
