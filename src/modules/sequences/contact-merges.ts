// A merged contact's enrollments become the survivor's (contacts/merge.ts, hook
// `contacts.merging`). One customer walks a sequence once: where both were enrolled and active in
// the same sequence, the merged contact's enrollment ends (`canceled`, reason `contact_merged`).
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeEnrollmentMerges(hooks: Hooks, now: () => Date): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId }) => {
    await tx.query(
      `UPDATE sequence_enrollments m
          SET status = 'canceled', reason = 'contact_merged', next_run_at = NULL, ended_at = $4, updated_at = $4
        WHERE m.account_id = $1 AND m.contact_id = $2 AND m.status = 'active'
          AND EXISTS (SELECT 1 FROM sequence_enrollments s
                       WHERE s.contact_id = $3 AND s.sequence_id = m.sequence_id AND s.status = 'active')`,
      [accountId, mergedId, survivorId, now()],
    );
    await tx.query(
      'UPDATE sequence_enrollments SET contact_id = $3 WHERE contact_id = $2 AND account_id = $1',
      [accountId, mergedId, survivorId],
    );
  });
}
