// What every kind of bulk job (contacts-job.ts, sequences/bulk-enroll-job.ts) runs the same way:
// its items applied a chunk per transaction until the chunk that ends it (chunkedJob), retried by
// the job queue, and its ends other than by finishing its items: its account stopped being active,
// or its retries were used up. Either way the job ends `failed` with what it did so far kept, and
// its kind's end event is emitted.
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { JobDefinition } from '../../kernel/jobs/jobs.ts';
import { holdAgainstErasure } from '../erasure/index.ts';
import { accountOfJob, type BulkJobRow, itemsOf, lockJob, recordChunk } from './repo.ts';

export interface ChunkedJobDeps {
  db: Database;
  now: () => Date;
  log: FastifyBaseLogger;
  expireInSeconds: number;
}

/**
 * A bulk job's definition: `chunk` applies the next chunk in its transaction and answers whether
 * the job has ended; `ended` emits the kind's end event for a job given up.
 */
export function chunkedJob<Item>(
  deps: ChunkedJobDeps,
  spec: {
    name: string;
    /** What the job is called in the logs ("bulk contact job"). */
    label: string;
    chunk: (tx: Tx, jobId: string, items: Item[]) => Promise<boolean>;
    /** Why a job given up ended, naming what was not done. */
    giveUpMessage: string;
    ended: (tx: Tx, row: BulkJobRow) => Promise<void>;
  },
): JobDefinition<{ jobId: string }> {
  return {
    name: spec.name,
    retryLimit: 5,
    retryDelaySeconds: 5,
    expireInSeconds: deps.expireInSeconds,
    handle: async ({ jobId }, meta) => {
      try {
        const accountId = await accountOfJob(deps.db, jobId);
        if (!accountId) return;
        // Each chunk reads the items afresh once no erasure of the account is under way
        // (erasure/lock.ts): one that erased a number of the job meanwhile took it out of them.
        const chunk = async (tx: Tx) => {
          await holdAgainstErasure(tx, [accountId]);
          const items = (await itemsOf(tx, jobId)) as Item[] | null;
          return items ? spec.chunk(tx, jobId, items) : true;
        };
        while (!(await deps.db.transaction(chunk))) {
          // Let the event loop run between chunks: on PGlite a query never waits for I/O, so the
          // whole job would otherwise run without the process serving a single request.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } catch (err) {
        deps.log.error(
          { err, jobId, retryCount: meta.retryCount },
          `${spec.label} failed; it will be retried`,
        );
        throw err;
      }
    },
    // Retries used up (or workers kept dying): the job ends failed, with what it did so far kept.
    onGiveUp: ({ jobId }) => giveUpJob(deps.db, jobId, deps.now, spec.giveUpMessage, spec.ended),
  };
}

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
async function giveUpJob(
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
