// Enrolling up to 1,000 contacts at once (`POST /sequences/{id}/enrollments {contactIds}`): a bulk
// job (bulk_jobs, kind `enrollments`) run by a job worker, a chunk per transaction: the chunk's
// enrollments, their outcomes and the job's cursor commit together, as for contact imports
// (bulk/contacts-job.ts), so a retried job neither skips nor repeats a contact. Each contact is
// enrolled by the same function as one at a time (enroll.ts), its refusal recorded as its outcome.
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import {
  type BulkJobRow,
  type ChunkedJobDeps,
  chunkedJob,
  endForAccount,
  fairPriority,
  type ItemResult,
  insertJob,
  lockJob,
  recordChunk,
  toJobBase,
} from '../bulk/index.ts';
import { tryEnroll } from './enroll.ts';
import { findSequence, type SequenceRow } from './repo.ts';

export const BULK_ENROLL_JOB = 'bulk.enrollments';
const CHUNK = 100;

export interface EnrollJobOptions {
  sequenceId: string;
  sandbox: boolean;
}

export async function acceptEnrollJob(
  s: { db: Database; jobs: Jobs; now: () => Date },
  sequence: SequenceRow,
  contactIds: string[],
  sandbox: boolean,
): Promise<BulkJobRow> {
  return s.db.transaction(async (tx) => {
    const job = await insertJob(tx, {
      id: newId('bulkJob'),
      accountId: sequence.account_id,
      kind: 'enrollments',
      options: { sequenceId: sequence.id, sandbox } satisfies EnrollJobOptions,
      items: contactIds,
      now: s.now(),
    });
    await s.jobs.enqueue(tx, BULK_ENROLL_JOB, { jobId: job.id }, { priority: fairPriority(job) });
    return job;
  });
}

export function toEnrollJob(row: BulkJobRow, results: ItemResult[]) {
  return {
    ...toJobBase(row),
    sequenceId: (row.options as unknown as EnrollJobOptions).sequenceId,
    results: results.map((r) => ({
      index: r.index,
      outcome: r.outcome as 'enrolled' | 'failed',
      enrollmentId: r.resourceId,
      error: r.error ? { code: r.error.code, message: r.error.message } : null,
    })),
  };
}

interface Deps extends ChunkedJobDeps {
  events: EventOutbox;
}

async function completed(deps: Deps, tx: Tx, job: BulkJobRow): Promise<void> {
  await deps.events.emit(tx, {
    type: 'bulk_job.completed',
    accountId: job.account_id,
    data: { kind: job.kind, ...toJobBase(job) },
  });
}

/** Enrols the next chunk; answers whether the job has ended. */
async function processChunk(deps: Deps, tx: Tx, jobId: string, items: string[]): Promise<boolean> {
  const job = await lockJob(tx, jobId);
  if (!job || job.status === 'completed' || job.status === 'failed') return true;
  const now = deps.now();
  if (job.account_status !== 'ACTIVE') {
    await completed(deps, tx, await endForAccount(tx, job, now, 'contacts were not enrolled'));
    return true;
  }
  const options = job.options as unknown as EnrollJobOptions;
  const sequence = await findSequence(tx, job.account_id, options.sequenceId);
  const results: ItemResult[] = [];
  let next = job.processed;
  for (; next < job.total && next - job.processed < CHUNK; next++) {
    const outcome = sequence
      ? await tryEnroll(tx, deps, sequence, items[next]!, { sandbox: options.sandbox })
      : { error: { code: 'RESOURCE_NOT_FOUND', message: 'The sequence was deleted.' } };
    results.push(
      'enrollment' in outcome
        ? { index: next, outcome: 'enrolled', resourceId: outcome.enrollment.id, error: null }
        : {
            index: next,
            outcome: 'failed',
            resourceId: null,
            error: { code: outcome.error.code, message: outcome.error.message },
          },
    );
  }
  const end = next >= job.total ? { status: 'completed' as const, error: null } : null;
  const row = await recordChunk(tx, jobId, results, now, end);
  if (end) await completed(deps, tx, row);
  return end !== null;
}

export function bulkEnrollJob(deps: Deps): JobDefinition<{ jobId: string }> {
  return chunkedJob<string>(deps, {
    name: BULK_ENROLL_JOB,
    label: 'bulk enrollment job',
    chunk: (tx, jobId, items) => processChunk(deps, tx, jobId, items),
    giveUpMessage: 'The job failed repeatedly and was stopped; contacts not processed were not enrolled.',
    ended: (tx, row) => completed(deps, tx, row),
  });
}
