// A bulk send's progress: each message counts as processed once it is handed over to the provider
// (succeeded) or has failed, in the transaction that records that; the job completes, and emits
// `bulk_job.completed`, with its last message. Recipients refused at accept were counted then.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { type BulkJobRow, JOB_COLUMNS } from './repo.ts';
import { toJobBase } from './schemas.ts';

/** Counts what the send path reports (messages' `messages.bulk-counted` hook), wired in app.ts. */
export function subscribeBulkProgress(hooks: Hooks, now: () => Date): void {
  hooks.on('messages.bulk-counted', async (tx, jobs, events) => {
    for (const { jobId, sent, failed } of jobs)
      await noteHandedOver({ events, now }, tx, jobId, { sent, failed });
  });
}

export async function noteHandedOver(
  s: { events: EventOutbox; now: () => Date },
  tx: Tx,
  jobId: string,
  counts: { sent: number; failed: number },
): Promise<void> {
  const now = s.now();
  const { rows } = await tx.query<BulkJobRow>(
    `UPDATE bulk_jobs
        SET processed = processed + $2 + $3, succeeded = succeeded + $2, failed = failed + $3,
            status = CASE WHEN processed + $2 + $3 >= total THEN 'completed' ELSE 'processing' END,
            started_at = coalesce(started_at, $4),
            completed_at = CASE WHEN processed + $2 + $3 >= total THEN $4 ELSE NULL END,
            updated_at = $4
      WHERE id = $1 AND status NOT IN ('completed', 'failed')
      RETURNING ${JOB_COLUMNS}`,
    [jobId, counts.sent, counts.failed, now],
  );
  const job = rows[0];
  if (job?.status === 'completed') await emitSendCompleted(s, tx, job);
}

export async function emitSendCompleted(s: { events: EventOutbox }, tx: Tx, job: BulkJobRow): Promise<void> {
  await s.events.emit(tx, {
    type: 'bulk_job.completed',
    accountId: job.account_id,
    data: { kind: job.kind, ...toJobBase(job) },
  });
}
