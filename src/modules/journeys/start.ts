// Starting runs (docs/automation.md § Journeys), whoever starts them: POST /journeys/{id}/trigger,
// an entry event (engine.ts) or a rule's trigger_journey. Every path ends in startRun, in the
// caller's transaction, so the rules hold whoever starts:
//   - only a published journey starts runs;
//   - reentry `never`: once per contact; `after_exit`: not while one is running or waiting;
//     `always`: any time; checked under a lock on (journey, contact), so two starts at once cannot
//     both pass;
//   - a run runs on the version current when it started, and expires after maxRunDuration.
// A run is written at its start node with `resume_at` now: the runner (runner.ts) executes it.
import type { Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import { newId } from '../../kernel/values/ids.ts';
import { durationMs } from '../automation/index.ts';
import { findContact } from '../contacts/index.ts';
import { insertRun, type JourneyRow, type RunRow } from './repo.ts';

export interface StartOptions {
  sandbox: boolean;
  triggerData?: Record<string, unknown>;
  triggerEventId?: string | null;
  /** The automation chain the start belongs to (1 when started by the API). */
  depth?: number;
}

/** Starts a run for the contact, or throws why not (404 no such contact, 409 a rule of entry). */
export async function startRun(
  tx: Tx,
  s: { now: () => Date },
  journey: JourneyRow,
  contactId: string,
  options: StartOptions,
): Promise<RunRow> {
  // Read again, shared-locked: archiving (which locks the row) cannot miss this run.
  const { rows: current } = await tx.query<Pick<JourneyRow, 'status' | 'version' | 'definition'>>(
    'SELECT status, version, definition FROM journeys WHERE id = $1 FOR SHARE',
    [journey.id],
  );
  const status = current[0]?.status ?? 'deleted';
  if (status !== 'published')
    throw conflict(`The journey is ${status}: only a published journey starts runs.`);
  const { version, definition } = current[0]!;
  const contact = await findContact(tx, journey.account_id, contactId);
  if (!contact) throw notFound('contact');
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('journey:' || $1 || ':' || $2, 0))`, [
    journey.id,
    contactId,
  ]);
  const policy = definition.entry.reentry;
  if (policy !== 'always') {
    const { rows } = await tx.query<{ live: boolean }>(
      `SELECT status IN ('running', 'waiting') AS live FROM journey_runs WHERE journey_id = $1 AND contact_id = $2
        ORDER BY (status IN ('running', 'waiting')) DESC LIMIT 1`,
      [journey.id, contactId],
    );
    const earlier = rows[0];
    if (earlier?.live) throw conflict('The contact has a run of this journey going.');
    if (earlier && policy === 'never') {
      throw conflict('The contact has been through this journey, and its reentry is "never".');
    }
  }
  const now = s.now();
  return insertRun(tx, {
    id: newId('journeyRun'),
    account_id: journey.account_id,
    journey_id: journey.id,
    version,
    contact_id: contactId,
    status: 'running',
    current_node_id: definition.entry.start,
    resume_at: now,
    resume_edge: null,
    vars: {},
    trigger_data: options.triggerData ?? {},
    trigger_event_id: options.triggerEventId ?? null,
    depth: options.depth ?? 1,
    error: null,
    step_count: 0,
    last_node_id: null,
    repeat_count: 0,
    sandbox: options.sandbox,
    expires_at: new Date(now.getTime() + durationMs(definition.settings.maxRunDuration)),
    started_at: now,
    updated_at: now,
    ended_at: null,
  });
}

/** Starts a run, answering the refusal instead of throwing it (entry events, rules). */
export async function tryStart(
  tx: Tx,
  s: { now: () => Date },
  journey: JourneyRow,
  contactId: string,
  options: StartOptions,
): Promise<{ run: RunRow } | { error: ApiError }> {
  await tx.query('SAVEPOINT journey_start');
  try {
    const run = await startRun(tx, s, journey, contactId, options);
    await tx.query('RELEASE SAVEPOINT journey_start');
    return { run };
  } catch (err) {
    await tx.query('ROLLBACK TO SAVEPOINT journey_start');
    if (err instanceof ApiError) return { error: err };
    throw err;
  }
}
