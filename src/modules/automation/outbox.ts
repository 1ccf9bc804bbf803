// Automation as a subscriber of the event outbox (kernel/outbox/events.ts): an event whose account has an
// active rule or sequence that listens to its type gets a row in `automation_inbox`, written in the
// emitting transaction; the worker (worker.ts) consumes the inbox. Which types an account listens
// to is kept in `automation_interest` by the modules that own rules and sequences (interest.ts), so
// an account without automation costs the outbox one indexed lookup and no row.
import type { Sql } from '../../kernel/database/db.ts';
import type { EventEnvelope, OutboxSubscriber } from '../../kernel/outbox/events.ts';

/** The channel the automation workers LISTEN on for new inbox events. */
export const AUTOMATION_CHANNEL = 'tidings_automation';
/** The channel that makes them look for due sequence steps and journey runs at once. */
export const AUTOMATION_DUE_CHANNEL = 'tidings_automation_due';

/**
 * Makes every process's automation worker look for due sequence steps and journey runs now (call it
 * after the commit that made them due): this process's at once, the others' when the NOTIFY arrives.
 */
export async function dueEverywhere(ctx: { automation: { dueNow(): void }; db: Sql }): Promise<void> {
  ctx.automation.dueNow();
  await ctx.db.query(`SELECT pg_notify('${AUTOMATION_DUE_CHANNEL}', '')`);
}

/** The event types an account's automation listens to. */
export type AutomationAudience = string[];

export const automationInbox: OutboxSubscriber<AutomationAudience> = {
  name: 'automation',
  lookup: 'SELECT jsonb_agg(i.event_type) FROM automation_interest i WHERE i.account_id = a.id',
  rows(event: EventEnvelope, audience: AutomationAudience | null) {
    if (!event.accountId || !audience?.includes(event.type)) return [];
    return [{ id: event.id, account_id: event.accountId }];
  },
  insert: `INSERT INTO automation_inbox (event_id, account_id, created_at)
           SELECT r.id, r.account_id, <now> FROM jsonb_to_recordset(<rows>) AS r (id text, account_id text)`,
  channel: AUTOMATION_CHANNEL,
};
