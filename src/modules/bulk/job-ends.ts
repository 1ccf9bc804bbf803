// How a bulk job ends other than by finishing its items, whatever its kind (contacts-job.ts,
// sequences/bulk-enroll-job.ts): its account stopped being active, or its retries were used up.
// Either way the job ends `failed` with what it did so far kept, and its kind's end event is emitted.
import type { Database, Tx } from '../../kernel/db.ts';
import { type BulkJobRow, lockJob, recordChunk } from './repo.ts';

/** Ends the (locked) job of an account that is suspended or closed; `items` names what was left. */
export function endForAccount(
  tx: Tx,
  job: BulkJobRow & { account_status: string },
  now: Date,
  items: string,
): Promise<BulkJobRow> {
  return recordChunk(tx, job.id, [], now, {
    status: 'failed',
    error: {
      code: 'ACCOUNT_SUSPENDED',
      message: `The account is ${job.account_status.toLowerCase()}; the remaining ${job.total - job.processed} ${items}.`,
    },
  });
}

/** Ends a job whose retries are used up (unless it ended meanwhile), then `ended` with its row. */
export async function giveUpJob(
  db: Database,
  jobId: string,
  now: () => Date,
  message: string,
  ended: (tx: Tx, row: BulkJobRow) => Promise<void>,
): Promise<void> {
  await db.transaction(async (tx) => {
    const job = await lockJob(tx, jobId);
    if (!job || job.status === 'completed' || job.status === 'failed') return;
    const row = await recordChunk(tx, jobId, [], now(), {
      status: 'failed',
      error: { code: 'INTERNAL_ERROR', message },
    });
    await ended(tx, row);
  });
}
