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
import { ACTOR_COLUMNS, type ActorRow, actorFrom } from '../automation/effects.ts';
import { durationMs } from '../automation/time.ts';
import {
  INACTIVE_SINCE,
  occasionSql,
  UNANSWERED_FROM,
  UNANSWERED_WHERE,
} from '../automation/timed-occasions.ts';
import type { JourneyRow } from './repo.ts';
import { tryStart } from './start.ts';

/** Occasions of one journey started in one scan (the next scan takes the rest). */
const PER_SCAN = 200;

interface Occasion {
  id: string;
  contactId: string;
  data: Record<string, unknown>;
}

/** Contacts the journey's reentry lets start a run now, and whose occasion has none: SQL on `contact`. */
const STARTABLE = (occasion: string, contact: string) => `
  NOT EXISTS (SELECT 1 FROM journey_runs r
               WHERE r.journey_id = $3 AND r.contact_id = ${contact}
                 AND (r.trigger_event_id = ${occasion} OR $4 = 'never'
                      OR ($4 = 'after_exit' AND r.status IN ('running', 'waiting'))))`;

async function inactive(db: Database, journey: JourneyRow, cutoff: Date): Promise<Occasion[]> {
  const since = INACTIVE_SINCE;
  const occasion = occasionSql('inactive', 'c.id', since);
  const { rows } = await db.query<{ id: string; occasion: string; since: Date }>(
    `SELECT c.id, ${occasion} AS occasion, ${since} AS since FROM contacts c
      WHERE c.account_id = $1 AND ${since} <= $2 AND ${STARTABLE(occasion, 'c.id')}
      LIMIT ${PER_SCAN}`,
    [journey.account_id, cutoff, journey.id, journey.definition.entry.reentry],
  );
  return rows.map((r) => ({
    id: r.occasion,
    contactId: r.id,
    data: { id: r.id, inactiveSince: new Date(r.since).toISOString() },
  }));
}

async function unanswered(db: Database, journey: JourneyRow, cutoff: Date): Promise<Occasion[]> {
  const occasion = occasionSql('unanswered', 'c.id', 'w.since');
  const { rows } = await db.query<{ id: string; contact_id: string; occasion: string; since: Date }>(
    `SELECT c.id, c.contact_id, ${occasion} AS occasion, w.since
       FROM ${UNANSWERED_FROM}
      WHERE c.account_id = $1 AND ${UNANSWERED_WHERE} AND w.since <= $2
        AND ${STARTABLE(occasion, 'c.contact_id')}
      LIMIT ${PER_SCAN}`,
    [journey.account_id, cutoff, journey.id, journey.definition.entry.reentry],
  );
  return rows.map((r) => ({
    id: r.occasion,
    contactId: r.contact_id,
    data: { id: r.id, contactId: r.contact_id, waitingSince: new Date(r.since).toISOString() },
  }));
}

/** Starts a run for every due occasion of the published journeys with a timed entry; answers how many. */
export async function scanTimedEntries(s: { db: Database; now: () => Date }): Promise<number> {
  const { rows: journeys } = await s.db.query<JourneyRow & ActorRow & { account_status: string }>(
    `SELECT j.*, ${ACTOR_COLUMNS.replace('a.status', 'a.status AS account_status')}
       FROM journeys j JOIN accounts a ON a.id = j.account_id
       LEFT JOIN account_channels c ON c.account_id = j.account_id
      WHERE j.status = 'published' AND j.definition->'entry'->>'after' IS NOT NULL AND a.status = 'ACTIVE'`,
  );
  let started = 0;
  for (const journey of journeys) {
    // An account whose plan lost automation starts nothing.
    if (!actorFrom(journey.account_id, { ...journey, status: journey.account_status })) continue;
    const { event, after } = journey.definition.entry;
    const cutoff = new Date(s.now().getTime() - durationMs(after!));
    const due = event === 'conversation.unanswered' ? unanswered : inactive;
    const occasions = await due(s.db, journey, cutoff);
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
