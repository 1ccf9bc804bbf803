// Timed triggers: rules that fire when a time has passed without something happening.
//   conversation.unanswered  an open conversation's customer has waited `after` for a reply: since
//                            the first message they sent after the business last wrote;
//   contact.inactive         a contact has sent nothing for `after` (since their last message, or
//                            since they were added if they never wrote).
// Each such wait is an occasion, named by its rule's subject and the time it counts from
// (`occ_unanswered_<conversation>_<ms>`); a rule fires once per occasion. The worker scans for due
// occasions every TIDINGS_AUTOMATION_SCAN_MS. Each occasion runs in a transaction that first
// claims its run record (rule_runs is unique on rule and occasion): a process that finds it
// claimed by another, committed or not, waits for it or skips it, so an occasion fires once
// across any number of processes. A reply, or a new message, ends the occasion; the next wait is
// another one.
import type { Database } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import type { Act } from '../automation/index.ts';
import { actorOf, durationMs, findOccasions, loadScope, occasionId } from '../automation/index.ts';
import { holdAgainstErasure } from '../erasure/index.ts';
import { recordRuns, runRule } from './engine.ts';
import type { RuleRow } from './repo.ts';

/** Occasions of one rule taken in one scan (the next scan takes the rest). */
const PER_SCAN = 200;

interface Occasion {
  id: string;
  subjectId: string;
  contactId: string | null;
  since: Date;
}

/** A rule's due waits of a kind: those it has not run for (its rule_runs keep the occasion's id). */
async function due(
  db: Database,
  kind: 'unanswered' | 'inactive',
  rule: RuleRow,
  cutoff: Date,
): Promise<Occasion[]> {
  const found = await findOccasions(db, kind, {
    accountId: rule.account_id,
    cutoff,
    limit: PER_SCAN,
    untaken: (occasion) =>
      `NOT EXISTS (SELECT 1 FROM rule_runs r WHERE r.rule_id = $3 AND r.event_id = ${occasion})`,
    params: [rule.id],
  });
  return found.map((f) => ({
    id: occasionId(kind, f.subjectId, f.since),
    subjectId: f.subjectId,
    contactId: f.contactId,
    since: f.since,
  }));
}

export interface TimedServices {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}

/** Fires one occasion of a rule, unless another run of it claimed it first. */
async function fire(s: TimedServices, rule: RuleRow, occasion: Occasion, act: Act): Promise<boolean> {
  return s.db.transaction(async (tx) => {
    // The contact is read after any erasure of it under way committed (erasure/lock.ts).
    await holdAgainstErasure(tx, [rule.account_id]);
    const now = s.now();
    const actor = await actorOf(tx, rule.account_id);
    if (!actor) return false;
    const runId = newId('ruleRun');
    const claimed = await tx.query(
      `INSERT INTO rule_runs (id, account_id, rule_id, event_id, contact_id, status, depth, conditions, actions, created_at)
       VALUES ($1, $2, $3, $4, $5, 'not_matched', 1, '[]', '[]', $6)
       ON CONFLICT (rule_id, event_id) DO NOTHING RETURNING id`,
      [runId, rule.account_id, rule.id, occasion.id, occasion.contactId, now],
    );
    if (claimed.rows.length === 0) return false;
    const data =
      rule.trigger_event === 'conversation.unanswered'
        ? {
            id: occasion.subjectId,
            contactId: occasion.contactId,
            waitingSince: occasion.since.toISOString(),
          }
        : { id: occasion.subjectId, inactiveSince: occasion.since.toISOString() };
    // A timed trigger is no event of the outbox: its occasion stands for one.
    const event = {
      id: occasion.id,
      type: rule.trigger_event,
      createdAt: now.toISOString(),
      accountId: rule.account_id,
      data,
    } as never;
    const scope = await loadScope(tx, event, now);
    const run = await runRule(tx, rule, event, scope, { act, actor: { ...actor, mode: 'live' }, now, runId });
    await recordRuns(tx, s.events, [run]);
    return true;
  });
}

/** Fires every due occasion of the active timed rules; answers how many fired. */
export async function scanTimed(s: TimedServices, act: Act): Promise<number> {
  const { rows: rules } = await s.db.query<RuleRow>(
    `SELECT r.* FROM rules r JOIN accounts a ON a.id = r.account_id
      WHERE r.status = 'active' AND r.trigger_after IS NOT NULL AND a.status = 'ACTIVE'`,
  );
  let fired = 0;
  for (const rule of rules) {
    const cutoff = new Date(s.now().getTime() - durationMs(rule.trigger_after!));
    const kind = rule.trigger_event === 'conversation.unanswered' ? 'unanswered' : 'inactive';
    for (const occasion of await due(s.db, kind, rule, cutoff)) {
      if (await fire(s, rule, occasion, act)) fired++;
    }
  }
  return fired;
}
