// Which event types an account's automation listens to (automation_interest), read by the outbox's
// automation subscriber (outbox.ts) to decide whether an event goes to the inbox: the triggers of
// its active rules, sequences and published journeys, and, while it has a sequence that may hold
// active enrollments (active or paused), the events that end enrollments (a reply, a tag, an
// opt-out), and while it has a journey that may hold waiting runs (published or paused), replies
// (wait_for_reply), and while its business hours have an away message or a greeting, customers'
// messages (modules/business-hours), and while it surveys, closes and answers (modules/csat). Rewritten whole for the account, in the transaction that changes a rule, a
// sequence or a journey, so the outbox never sees a half-changed set.
import type { Tx } from '../../kernel/database/db.ts';

/** The events that may end an enrollment (sequences/engine.ts). */
export const EXIT_EVENTS = ['message.received', 'contact.tagged', 'contact.untagged', 'contact.updated'];

export async function refreshInterest(tx: Tx, accountId: string): Promise<void> {
  await tx.query('DELETE FROM automation_interest WHERE account_id = $1', [accountId]);
  await tx.query(
    `INSERT INTO automation_interest (account_id, event_type)
     SELECT $1, trigger_event FROM rules
      WHERE account_id = $1 AND status = 'active' AND trigger_after IS NULL
     UNION
     SELECT $1, trigger_event FROM sequences
      WHERE account_id = $1 AND status = 'active' AND trigger_event IS NOT NULL
     UNION
     SELECT $1, trigger_event FROM journeys
      WHERE account_id = $1 AND status = 'published' AND trigger_event IS NOT NULL
     UNION
     SELECT $1, e.type FROM unnest($2::text[]) AS e (type)
      WHERE EXISTS (SELECT 1 FROM sequences WHERE account_id = $1 AND status IN ('active', 'paused'))
     UNION
     SELECT $1, 'message.received'
      WHERE EXISTS (SELECT 1 FROM journeys WHERE account_id = $1 AND status IN ('published', 'paused'))
     UNION
     SELECT $1, 'message.received'
      WHERE EXISTS (SELECT 1 FROM account_business_hours
                     WHERE account_id = $1 AND (away_message IS NOT NULL OR greeting IS NOT NULL))
     UNION
     SELECT $1, e.type FROM unnest(ARRAY['conversation.closed', 'csat.received']) AS e (type)
      WHERE EXISTS (SELECT 1 FROM account_csat WHERE account_id = $1)`,
    [accountId, EXIT_EVENTS],
  );
}
