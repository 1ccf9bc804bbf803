// Timed entries: journeys whose entry is a timed trigger, `contact.inactive` or
// `conversation.unanswered` with `after` (as rules have them, rules/timed.ts), are started by the
// automation worker's periodic scan (AutomationWorker.scan), not by an event: such a trigger is no
// event of the outbox. Each wait is an occasion, named as rules name it
// (`occ_inactive_<contact>_<ms>`, `occ_unanswered_<conversation>_<ms>`), and an occasion starts at
// most one run of a journey:
//   - the run keeps the occasion as its trigger_event_id, unique per journey for `occ_` ids
//     (migration 016): a second process starting the same occasion fails on that index, and the
//     start is undone alone (start.ts's savepoint) and skipped;
//   - the scan leaves out occasions that have their run, and contacts whose reentry forbids a run
//     now (never: one run ever; after_exit: none while one is going), so they are not looked at
//     again and again; start.ts decides the rest, under its lock.
// Runs start live, as a rule's timed run acts live: a timed trigger comes from no sandbox key.
import type { Database } from '../../kernel/database/db.ts';
import { sqlState, UNIQUE_VIOLATION } from '../../kernel/database/db.ts';
import { actorsOf, durationMs, findOccasions } from '../automation/index.ts';
import type { JourneyRow } from './repo.ts';
import { tryStart } from './start.ts';

/** Occasions of one journey started in one scan (the next scan takes the rest). */
const PER_SCAN = 200;

interface Occasion {
  id: string;
  contactId: string;
  data: Record<string, unknown>;
}

/**
 * A journey's due waits of a kind: those of contacts its reentry lets start a run now ($4), whose
 * occasion ($3: the journey) has no run yet.
 */
async function due(
  db: Database,
  kind: 'unanswered' | 'inactive',
  journey: JourneyRow,
  cutoff: Date,
): Promise<Occasion[]> {
  const found = await findOccasions(db, kind, {
    accountId: journey.account_id,
    cutoff,
    limit: PER_SCAN,
    untaken: (occasion, contact) => `
      NOT EXISTS (SELECT 1 FROM journey_runs r
                   WHERE r.journey_id = $3 AND r.contact_id = ${contact}
                     AND (r.trigger_event_id = ${occasion} OR $4 = 'never'
                          OR ($4 = 'after_exit' AND r.status IN ('running', 'waiting'))))`,
    params: [journey.id, journey.definition.entry.reentry],
  });
  return found.map((f) => ({
    id: f.occasion,
    contactId: f.contactId,
    data:
      kind === 'unanswered'
        ? { id: f.subjectId, contactId: f.contactId, waitingSince: f.since.toISOString() }
        : { id: f.subjectId, inactiveSince: f.since.toISOString() },
  }));
}

/** Starts a run for every due occasion of the published journeys with a timed entry; answers how many. */
export async function scanTimedEntries(s: { db: Database; now: () => Date }): Promise<number> {
  const { rows: journeys } = await s.db.query<JourneyRow>(
    `SELECT j.* FROM journeys j JOIN accounts a ON a.id = j.account_id
      WHERE j.status = 'published' AND j.definition->'entry'->>'after' IS NOT NULL AND a.status = 'ACTIVE'`,
  );
  const actors = await actorsOf(
    s.db,
    journeys.map((j) => j.account_id),
  );
  let started = 0;
  for (const journey of journeys) {
    // An account whose plan lost automation starts nothing.
    if (!actors.get(journey.account_id)) continue;
    const { event, after } = journey.definition.entry;
    const cutoff = new Date(s.now().getTime() - durationMs(after!));
    const kind = event === 'conversation.unanswered' ? 'unanswered' : 'inactive';
    const occasions = await due(s.db, kind, journey, cutoff);
    if (occasions.length === 0) continue;
    started += await s.db.transaction(async (tx) => {
      let n = 0;
      for (const occasion of occasions) {
        try {
          const result = await tryStart(tx, s, journey, occasion.contactId, {
            sandbox: false,
            triggerEventId: occasion.id,
            triggerData: occasion.data,
          });
          if ('run' in result) n++;
        } catch (err) {
          // Another process started this occasion first; tryStart undid this start alone.
          if (sqlState(err) !== UNIQUE_VIOLATION) throw err;
        }
      }
      return n;
    });
  }
  return started;
}
