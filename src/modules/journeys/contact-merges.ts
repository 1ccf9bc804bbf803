// A merged contact's journey runs become the survivor's (contacts/merge.ts, hook
// `contacts.merging`). Where both had a run going in the same journey, the merged contact's run
// ends (`canceled`, error `contact_merged`): one customer, one run of a journey at a time.
import type { Hooks } from '../../kernel/outbox/hooks.ts';

export function subscribeJourneyRunMerges(hooks: Hooks, now: () => Date): void {
  hooks.on('contacts.merging', async (tx, { accountId, survivorId, mergedId }) => {
    await tx.query(
      `UPDATE journey_runs m
          SET status = 'canceled', resume_at = NULL, ended_at = $4, updated_at = $4,
              error = jsonb_build_object('code', 'contact_merged',
                                         'message', 'The contact was merged into one that runs this journey.')
        WHERE m.account_id = $1 AND m.contact_id = $2 AND m.status IN ('running', 'waiting')
          AND EXISTS (SELECT 1 FROM journey_runs s
                       WHERE s.contact_id = $3 AND s.journey_id = m.journey_id AND s.status IN ('running', 'waiting'))`,
      [accountId, mergedId, survivorId, now()],
    );
    await tx.query('UPDATE journey_runs SET contact_id = $3 WHERE contact_id = $2 AND account_id = $1', [
      accountId,
      mergedId,
      survivorId,
    ]);
  });
}
