// Accepting bulk jobs and reading them back. The job row and its queue entry commit together:
// an accepted job always runs, and a failed accept leaves neither.
import type { Database } from '../../kernel/database/db.ts';
import { notFound } from '../../kernel/http/errors.ts';
import type { Jobs } from '../../kernel/jobs/jobs.ts';
import { newId } from '../../kernel/values/ids.ts';
import { BULK_CONTACTS_JOB } from './contacts-job.ts';
import { type BulkJobRow, fairPriority, findJob, type ItemResult, insertJob, resultsOf } from './repo.ts';

export interface BulkServices {
  db: Database;
  jobs: Jobs;
  now: () => Date;
}

export async function acceptContactsJob(
  s: BulkServices,
  accountId: string,
  body: { contacts: unknown[]; mode?: 'upsert' | 'create' },
): Promise<BulkJobRow> {
  return s.db.transaction(async (tx) => {
    const job = await insertJob(tx, {
      id: newId('bulkJob'),
      accountId,
      kind: 'contacts',
      options: { mode: body.mode ?? 'upsert' },
      items: body.contacts,
      now: s.now(),
    });
    await s.jobs.enqueue(tx, BULK_CONTACTS_JOB, { jobId: job.id }, { priority: fairPriority(job) });
    return job;
  });
}

export async function getContactsJob(
  s: BulkServices,
  accountId: string,
  jobId: string,
): Promise<{ job: BulkJobRow; results: ItemResult[] }> {
  const job = await findJob(s.db, accountId, 'contacts', jobId);
  if (!job) throw notFound('bulk contact job');
  return { job, results: await resultsOf(s.db, job.id, job.processed) };
}
