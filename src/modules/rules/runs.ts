// A rule's run records (GET /rules/{id}/runs) and its dry run (POST /rules/{id}/test): the run
// record a given event would make, with nothing executed and nothing stored.
import type { Database } from '../../kernel/database/db.ts';
import { notFound } from '../../kernel/http/errors.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { CausedBy, EventEnvelope, EventType } from '../../kernel/outbox/events.ts';
import type { TriggerEvent } from '../automation/index.ts';
import { loadScope } from '../automation/index.ts';
import { isErasedEvent } from '../erasure/index.ts';
import { type RuleRunRow, runRule } from './engine.ts';
import { findRule } from './repo.ts';

export async function listRuns(
  db: Database,
  accountId: string,
  ruleId: string,
  page: Page,
  filters: { status?: string },
): Promise<RuleRunRow[]> {
  if (!(await findRule(db, accountId, ruleId))) throw notFound('rule');
  const { rows } = await db.query<RuleRunRow>(
    `SELECT * FROM rule_runs
      WHERE rule_id = $1 AND account_id = $2 AND ($3::text IS NULL OR id < $3) AND ($4::text IS NULL OR status = $4)
      ORDER BY id DESC LIMIT $5`,
    [ruleId, accountId, page.before, filters.status ?? null, page.limit + 1],
  );
  return rows;
}

export interface TestEvent {
  /** A stored event of the account, run as it was. */
  eventId?: string;
  /** Or an event as it would arrive. */
  event?: { type: TriggerEvent; data: Record<string, unknown> };
}

/**
 * Evaluates the rule on the event without running anything: the conditions with
 * their trace, and the actions it would run (`skipped`), whatever the rule's status.
 */
export async function dryRun(
  s: { db: Database; now: () => Date },
  accountId: string,
  ruleId: string,
  input: TestEvent,
): Promise<RuleRunRow> {
  const rule = await findRule(s.db, accountId, ruleId);
  if (!rule) throw notFound('rule');
  let event: EventEnvelope & { causedBy?: CausedBy };
  if (input.eventId) {
    const { rows } = await s.db.query<{ payload: string }>(
      'SELECT payload FROM events WHERE id = $1 AND account_id = $2',
      [input.eventId, accountId],
    );
    // An erased event's data is gone: there is nothing left to run the rule on.
    if (!rows[0] || isErasedEvent(rows[0].payload)) throw notFound('event');
    event = JSON.parse(rows[0].payload);
  } else {
    event = {
      id: 'evt_test',
      type: input.event!.type as EventType,
      createdAt: s.now().toISOString(),
      accountId,
      data: input.event!.data,
    };
  }
  const now = s.now();
  // A dry run returns before any action (runRule), so this transaction only reads.
  return s.db.transaction(async (tx) =>
    runRule(tx, rule, event, await loadScope(tx, event, now), {
      act: async () => ({ status: 'skipped' }),
      actor: { accountId, countryCode: 'US', channelProvider: 'sandbox', mode: 'sandbox' },
      now,
      dryRun: true,
    }),
  );
}
