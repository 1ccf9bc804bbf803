// Evaluating an event's rules (docs/automation.md § Rules), inside the worker's transaction:
// the account's active rules of the event's type, in position order. For each one, a run record:
//   suppressed (own_event)  the event was caused by this rule's own run: a rule never fires on it;
//   suppressed (loop)       the chain of automation that caused the event is already MAX_DEPTH deep;
//   not_matched             its conditions did not hold (the trace says which did not);
//   succeeded | failed      its actions ran, each recorded (failed: one failed, and the rest were skipped);
//   suppressed (contact_cap) a send would have passed the contact's hourly cap.
// A matched rule with stopProcessing ends the evaluation. Stats are counted in the same
// transaction. A failed run emits `rule.run_failed`.
import type { Tx } from '../../kernel/database/db.ts';
import type { CausedBy, EventEnvelope, EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import {
  type Act,
  type ActionResult,
  type Actor,
  conditionContext,
  evaluate,
  loadScope,
  MAX_DEPTH,
  type RunScope,
  runActions,
  type TraceEntry,
} from '../automation/index.ts';
import type { RuleRow } from './repo.ts';

export type RunStatus = 'not_matched' | 'succeeded' | 'failed' | 'suppressed';

export interface RuleRunRow {
  id: string;
  account_id: string;
  rule_id: string;
  event_id: string;
  contact_id: string | null;
  status: RunStatus;
  reason: string | null;
  depth: number;
  conditions: TraceEntry[];
  actions: ActionResult[];
  created_at: Date;
}

export async function activeRulesFor(tx: Tx, accountId: string, eventType: string): Promise<RuleRow[]> {
  const { rows } = await tx.query<RuleRow>(
    `SELECT * FROM rules WHERE account_id = $1 AND trigger_event = $2 AND status = 'active' ORDER BY position`,
    [accountId, eventType],
  );
  return rows;
}

/** One rule on one event: its run record, with its actions run unless `dryRun`. */
export async function runRule(
  tx: Tx,
  rule: RuleRow,
  event: EventEnvelope & { causedBy?: CausedBy },
  scope: RunScope,
  options: { act: Act; actor: Actor; now: Date; dryRun?: boolean; runId?: string },
): Promise<RuleRunRow> {
  const depth = (event.causedBy?.depth ?? 0) + 1;
  const run: RuleRunRow = {
    id: options.runId ?? newId('ruleRun'),
    account_id: rule.account_id,
    rule_id: rule.id,
    event_id: event.id,
    contact_id: scope.contact?.id ?? null,
    status: 'not_matched',
    reason: null,
    depth,
    conditions: [],
    actions: [],
    created_at: options.now,
  };
  if (event.causedBy?.kind === 'rule' && event.causedBy.id === rule.id) {
    return { ...run, status: 'suppressed', reason: 'own_event' };
  }
  if (depth > MAX_DEPTH) return { ...run, status: 'suppressed', reason: 'loop' };
  const { matched, trace } = evaluate(rule.conditions, conditionContext(scope));
  run.conditions = trace;
  if (!matched) return run;
  if (options.dryRun) {
    return {
      ...run,
      status: 'succeeded',
      actions: rule.actions.map((a) => ({ type: a.type, status: 'skipped' })),
    };
  }
  const causedBy: CausedBy = { kind: 'rule', id: rule.id, runId: run.id, depth };
  run.actions = await runActions(tx, rule.actions, options.act, {
    scope,
    actor: options.actor,
    causedBy,
    keyPrefix: `rule:${run.id}`,
  });
  const stop = run.actions.find((a) => a.status !== 'succeeded' && a.status !== 'skipped');
  if (stop?.status === 'suppressed') return { ...run, status: 'suppressed', reason: 'contact_cap' };
  if (stop) return { ...run, status: 'failed', reason: stop.error?.message ?? null };
  return { ...run, status: 'succeeded' };
}

/**
 * Stores the runs and counts them in their rules' stats; emits `rule.run_failed` for failures. A
 * run whose (rule, event) was claimed earlier in the transaction under the same id (a timed
 * occasion, timed.ts) completes that claim; one under another id was run already and is dropped.
 */
export async function recordRuns(tx: Tx, events: EventOutbox, runs: RuleRunRow[]): Promise<void> {
  if (runs.length === 0) return;
  await tx.query(
    `WITH runs AS (
       INSERT INTO rule_runs (id, account_id, rule_id, event_id, contact_id, status, reason, depth, conditions,
                              actions, created_at)
       SELECT r.id, r.account_id, r.rule_id, r.event_id, r.contact_id, r.status, r.reason, r.depth, r.conditions,
              r.actions, r.created_at
         FROM jsonb_to_recordset($1::jsonb) AS r (id text, account_id text, rule_id text, event_id text,
              contact_id text, status text, reason text, depth int, conditions jsonb, actions jsonb,
              created_at timestamptz)
       ON CONFLICT (rule_id, event_id) DO UPDATE
          SET contact_id = EXCLUDED.contact_id, status = EXCLUDED.status, reason = EXCLUDED.reason,
              depth = EXCLUDED.depth, conditions = EXCLUDED.conditions, actions = EXCLUDED.actions
        WHERE rule_runs.id = EXCLUDED.id
       RETURNING rule_id, status, reason, created_at
     )
     UPDATE rules u SET runs = u.runs + s.runs, matched = u.matched + s.matched, failed = u.failed + s.failed,
                        last_run_at = s.last_run_at
       FROM (SELECT rule_id, count(*)::int AS runs,
                    -- Matched: its conditions held (a run the cap suppressed had matched; one
                    -- suppressed as its own event or a loop was never evaluated).
                    count(*) FILTER (WHERE status IN ('succeeded', 'failed') OR reason = 'contact_cap')::int AS matched,
                    count(*) FILTER (WHERE status = 'failed')::int AS failed,
                    max(created_at) AS last_run_at
               FROM runs GROUP BY rule_id) s
      WHERE u.id = s.rule_id`,
    [JSON.stringify(runs)],
  );
  const failures = runs.filter((r) => r.status === 'failed');
  await events.emitMany(
    tx,
    failures.map((r) => ({ type: 'rule.run_failed' as const, accountId: r.account_id, data: toRun(r) })),
  );
}

export function toRun(row: RuleRunRow) {
  return {
    id: row.id,
    ruleId: row.rule_id,
    eventId: row.event_id,
    contactId: row.contact_id,
    status: row.status,
    reason: row.reason,
    depth: row.depth,
    conditions: row.conditions,
    actions: row.actions,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Evaluates every rule of the event, in order; answers the runs (not yet recorded). */
export async function runRulesFor(
  tx: Tx,
  event: EventEnvelope & { causedBy?: CausedBy },
  options: { act: Act; actor: Actor; now: Date; rules?: Map<string, RuleRow[]> },
): Promise<RuleRunRow[]> {
  // A batch of events shares one read of each account's rules of a type (options.rules).
  const key = `${event.accountId}:${event.type}`;
  let rules = options.rules?.get(key);
  if (!rules) {
    rules = await activeRulesFor(tx, event.accountId!, event.type);
    options.rules?.set(key, rules);
  }
  if (rules.length === 0) return [];
  let scope = await loadScope(tx, event, options.now);
  const runs: RuleRunRow[] = [];
  for (const [i, rule] of rules.entries()) {
    const run = await runRule(tx, rule, event, scope, options);
    runs.push(run);
    if (
      rule.stop_processing &&
      run.status !== 'not_matched' &&
      run.reason !== 'own_event' &&
      run.reason !== 'loop'
    ) {
      break;
    }
    // Later rules see what earlier ones changed (a tag added, a conversation closed).
    if (i < rules.length - 1 && run.actions.some((a) => a.status === 'succeeded')) {
      scope = await loadScope(tx, event, options.now);
    }
  }
  return runs;
}
