// Bulk job rows and their per-item results, scoped by account.
import type { Sql } from '../../kernel/database/db.ts';

export type BulkJobStatus = 'queued' | 'processing' | 'completed' | 'failed';

export interface JobError {
  code: string;
  message: string;
  details?: { field: string; issue: string }[];
}

export interface BulkJobRow {
  id: string;
  account_id: string;
  kind: 'contacts' | 'messages' | 'enrollments';
  options: { mode?: 'upsert' | 'create' };
  status: BulkJobStatus;
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  error: JobError | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

/** One item's outcome, as stored in its chunk's row. */
export interface ItemResult {
  index: number;
  outcome: string;
  resourceId: string | null;
  error: JobError | null;
}

export const JOB_COLUMNS =
  'id, account_id, kind, options, status, total, processed, succeeded, failed, error, created_at, started_at, completed_at';

/**
 * A queued job with its round (migrations/029): the round being served now (the lowest of the
 * kind's unfinished jobs), or the account's next after its own unfinished jobs if that is later.
 * Two jobs of one account accepted at the same instant may share a round: a tie, not a loss.
 */
export async function insertJob(
  sql: Sql,
  job: {
    id: string;
    accountId: string;
    kind: 'contacts' | 'enrollments';
    options: object;
    items: unknown[];
    now: Date;
  },
): Promise<BulkJobRow & { fair_round: number }> {
  const { rows } = await sql.query<BulkJobRow & { fair_round: number }>(
    `INSERT INTO bulk_jobs (id, account_id, kind, options, total, items, created_at, updated_at, fair_round)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, greatest(0,
       (SELECT min(fair_round) FROM bulk_jobs WHERE kind = $3 AND status IN ('queued', 'processing')),
       (SELECT max(fair_round) + 1 FROM bulk_jobs
         WHERE account_id = $2 AND kind = $3 AND status IN ('queued', 'processing'))))
     RETURNING ${JOB_COLUMNS}, fair_round`,
    [
      job.id,
      job.accountId,
      job.kind,
      JSON.stringify(job.options),
      job.items.length,
      JSON.stringify(job.items),
      job.now,
    ],
  );
  return rows[0]!;
}

export async function findJob(
  sql: Sql,
  accountId: string,
  kind: string,
  id: string,
): Promise<BulkJobRow | null> {
  const { rows } = await sql.query<BulkJobRow>(
    `SELECT ${JOB_COLUMNS} FROM bulk_jobs WHERE account_id = $1 AND kind = $2 AND id = $3`,
    [accountId, kind, id],
  );
  return rows[0] ?? null;
}

/**
 * The outcomes of the first `processed` items: the count the job row was read with. A chunk that
 * commits between the two reads adds results past it, which would not match the job's counts.
 */
export async function resultsOf(sql: Sql, jobId: string, processed: number): Promise<ItemResult[]> {
  const { rows } = await sql.query<{ results: ItemResult[] }>(
    'SELECT results FROM bulk_job_chunks WHERE job_id = $1 AND first_index < $2 ORDER BY first_index',
    [jobId, processed],
  );
  return rows.flatMap((r) => r.results).filter((r) => r.index < processed);
}

/** The job and its account's state, locked: one chunk at a time, whichever worker runs it. */
export async function lockJob(
  sql: Sql,
  id: string,
): Promise<(BulkJobRow & { account_status: string; country_code: string }) | null> {
  const { rows } = await sql.query<BulkJobRow & { account_status: string; country_code: string }>(
    `SELECT ${JOB_COLUMNS.split(', ')
      .map((c) => `j.${c}`)
      .join(', ')}, a.status AS account_status, a.country_code
       FROM bulk_jobs j JOIN accounts a ON a.id = j.account_id
      WHERE j.id = $1 FOR UPDATE OF j`,
    [id],
  );
  return rows[0] ?? null;
}

export async function accountOfJob(sql: Sql, id: string): Promise<string | null> {
  const { rows } = await sql.query<{ account_id: string }>('SELECT account_id FROM bulk_jobs WHERE id = $1', [
    id,
  ]);
  return rows[0]?.account_id ?? null;
}

export async function itemsOf(sql: Sql, id: string): Promise<unknown[] | null> {
  const { rows } = await sql.query<{ items: string | null }>('SELECT items FROM bulk_jobs WHERE id = $1', [
    id,
  ]);
  const items = rows[0]?.items;
  return items ? (JSON.parse(items) as unknown[]) : null;
}

/**
 * Records a chunk's outcomes and moves the cursor past it, in the chunk's transaction. With `end`,
 * the job ends (completed or failed) and its items are let go.
 */
export async function recordChunk(
  sql: Sql,
  id: string,
  results: ItemResult[],
  now: Date,
  end: { status: 'completed' | 'failed'; error: JobError | null } | null,
): Promise<BulkJobRow> {
  const succeeded = results.filter((r) => r.outcome !== 'failed').length;
  const { rows } = await sql.query<BulkJobRow>(
    `WITH chunk AS (
       INSERT INTO bulk_job_chunks (job_id, first_index, results)
       SELECT $1, processed, $2::jsonb FROM bulk_jobs WHERE id = $1 AND $3 > 0
     )
     UPDATE bulk_jobs
        SET processed = processed + $3, succeeded = succeeded + $4, failed = failed + $5,
            status = coalesce($7, CASE WHEN status = 'queued' THEN 'processing' ELSE status END),
            started_at = coalesce(started_at, $6), updated_at = $6,
            completed_at = CASE WHEN $7::text IS NULL THEN NULL ELSE $6 END,
            error = $8, items = CASE WHEN $7::text IS NULL THEN items ELSE NULL END
      WHERE id = $1
      RETURNING ${JOB_COLUMNS}`,
    [
      id,
      JSON.stringify(results),
      results.length,
      succeeded,
      results.length - succeeded,
      now,
      end?.status ?? null,
      end?.error ? JSON.stringify(end.error) : null,
    ],
  );
  return rows[0]!;
}

/** The queue priority of a job of this round: pg-boss fetches the highest first. */
export const fairPriority = (job: { fair_round: number }): number => -job.fair_round;
