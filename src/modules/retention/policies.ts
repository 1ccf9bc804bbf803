// What the hourly retention prune deletes (docs/operations.md § Retention), table by table. Each
// policy is one DELETE of at most BATCH rows, run again until it deletes fewer, so no statement
// holds its locks for long and the API's own statements slip in between. Every policy selects
// through the primary key's range first ("made before the cutoff": ids sort by creation time), then
// the row's own time column, so a row is judged by when it ended, not only when it began.
//
// Kept whatever their age:
//   - anything still going: running or waiting journey runs, active enrollments, pending automation
//     calls, queued or processing bulk jobs, callbacks of calls not yet ended, queued messages;
//   - a contact's latest run of each journey and latest enrollment in each sequence: reentry rules
//     ("never", "after exit") read them, and pruning them would let a contact in again;
//   - runs of timed triggers (`occ_…` occasions, rules/timed.ts and journeys/timed.ts): they are what
//     stops an occasion that is still true (a contact still inactive) from firing a second time;
//   - the wallet ledger, always (money records), and messages unless TIDINGS_MESSAGE_RETENTION_DAYS.
// Other tables have their own: events and deliveries (webhooks/retention.ts), media (media/service.ts),
// idempotency keys (kernel/http/idempotency.ts); automation_inbox rows are deleted once processed and go
// with their event otherwise (ON DELETE CASCADE).
import type { Config } from '../../config.ts';
import { type IdKind, idAt } from '../../kernel/values/ids.ts';

/** Rows one statement deletes at most. */
export const BATCH = 1000;

export interface Policy {
  /** The table it deletes from (the metric's label). */
  table: string;
  /** Days kept, from the configuration; null: kept for ever. */
  days: (config: Config) => number | null;
  /**
   * The DELETE, whose rowCount is the rows it deleted: $1 the cutoff's id (an id of `kind` made at
   * the cutoff), $2 the cutoff; a table without ids (kind null) has the cutoff alone, as $1.
   */
  sql: string;
  kind: IdKind | null;
}

const automation = (c: Config) => c.automationRetentionDays;
const NOT_OCCASION = (column: string) => `coalesce(${column}, '') NOT LIKE 'occ\\_%'`;

export const POLICIES: readonly Policy[] = [
  {
    table: 'rule_runs',
    days: automation,
    kind: 'ruleRun',
    sql: `DELETE FROM rule_runs WHERE id IN (
            SELECT id FROM rule_runs WHERE id < $1 AND created_at < $2 AND ${NOT_OCCASION('event_id')}
             LIMIT ${BATCH})`,
  },
  {
    // Its steps go with it (ON DELETE CASCADE).
    table: 'journey_runs',
    days: automation,
    kind: 'journeyRun',
    sql: `DELETE FROM journey_runs WHERE id IN (
            SELECT r.id FROM journey_runs r
             WHERE r.id < $1 AND r.status IN ('completed', 'failed', 'canceled', 'expired') AND r.ended_at < $2
               AND ${NOT_OCCASION('r.trigger_event_id')}
               AND EXISTS (SELECT 1 FROM journey_runs n
                            WHERE n.contact_id = r.contact_id AND n.journey_id = r.journey_id AND n.id > r.id)
             LIMIT ${BATCH})`,
  },
  {
    table: 'sequence_enrollments',
    days: automation,
    kind: 'enrollment',
    sql: `DELETE FROM sequence_enrollments WHERE id IN (
            SELECT e.id FROM sequence_enrollments e
             WHERE e.id < $1 AND e.status <> 'active' AND coalesce(e.ended_at, e.updated_at) < $2
               AND EXISTS (SELECT 1 FROM sequence_enrollments n
                            WHERE n.contact_id = e.contact_id AND n.sequence_id = e.sequence_id AND n.id > e.id)
             LIMIT ${BATCH})`,
  },
  {
    table: 'automation_calls',
    days: automation,
    kind: 'automationCall',
    sql: `DELETE FROM automation_calls WHERE id IN (
            SELECT id FROM automation_calls WHERE id < $1 AND status <> 'pending' AND updated_at < $2
             LIMIT ${BATCH})`,
  },
  {
    // The results first, then the jobs left without any (bulk_job_chunks has no foreign key).
    table: 'bulk_job_chunks',
    days: (c) => c.bulkRetentionDays,
    kind: 'bulkJob',
    sql: `DELETE FROM bulk_job_chunks WHERE (job_id, first_index) IN (
            SELECT c.job_id, c.first_index FROM bulk_jobs j JOIN bulk_job_chunks c ON c.job_id = j.id
             WHERE j.id < $1 AND j.status IN ('completed', 'failed') AND coalesce(j.completed_at, j.updated_at) < $2
             LIMIT ${BATCH})`,
  },
  {
    table: 'bulk_jobs',
    days: (c) => c.bulkRetentionDays,
    kind: 'bulkJob',
    sql: `DELETE FROM bulk_jobs WHERE id IN (
            SELECT j.id FROM bulk_jobs j
             WHERE j.id < $1 AND j.status IN ('completed', 'failed') AND coalesce(j.completed_at, j.updated_at) < $2
               AND NOT EXISTS (SELECT 1 FROM bulk_job_chunks c WHERE c.job_id = j.id)
             LIMIT ${BATCH})`,
  },
  {
    table: 'call_callbacks',
    days: (c) => c.callCallbackRetentionDays,
    kind: 'call',
    sql: `DELETE FROM call_callbacks WHERE (call_id, kind, key) IN (
            SELECT cb.call_id, cb.kind, cb.key FROM calls c JOIN call_callbacks cb ON cb.call_id = c.id
             WHERE c.id < $1 AND c.status IN ('completed', 'busy', 'no_answer', 'failed', 'canceled')
               AND cb.received_at < $2
             LIMIT ${BATCH})`,
  },
  {
    table: 'api_usage_daily',
    days: (c) => c.usageRetentionDays,
    kind: null,
    sql: `DELETE FROM api_usage_daily WHERE (account_id, day) IN (
            SELECT account_id, day FROM api_usage_daily WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date
             LIMIT ${BATCH})`,
  },
  {
    // As a deleted conversation's messages go (conversations/repo.ts): a campaign recipient keeps
    // the status its message had, and the customers' files the messages carried go with them.
    // Queued messages (not handed over yet) stay, and so do those a status change holds (next
    // hour). Conversations stay, with their counts. The DELETE is the statement itself, not a CTE,
    // so its row count is the messages deleted on both databases.
    table: 'messages',
    days: (c) => c.messageRetentionDays,
    kind: 'message',
    sql: `WITH doomed AS (
            SELECT id, account_id, status, campaign_id, contact_id FROM messages
             WHERE id < $1 AND created_at < $2 AND status <> 'queued'
             LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
          ), kept AS (
            UPDATE campaign_recipients r SET kept_status = d.status FROM doomed d
             WHERE d.campaign_id IS NOT NULL AND r.campaign_id = d.campaign_id AND r.contact_id = d.contact_id
               AND r.message_id = d.id
          ), files AS (
            DELETE FROM media f USING doomed d WHERE f.account_id = d.account_id AND f.message_id = d.id
          )
          DELETE FROM messages m USING doomed d WHERE m.id = d.id`,
  },
];

/** The statement's parameters for a cutoff. */
export function paramsOf(policy: Policy, cutoff: Date): unknown[] {
  return policy.kind ? [idAt(policy.kind, cutoff), cutoff] : [cutoff];
}
