// The bulk contact import, run by a job worker. Items are applied in order, a chunk per
// transaction: the chunk's contacts, their events, their outcomes and the job's `processed` cursor
// commit together. A worker that dies loses only its open chunk, and whichever worker resumes the
// job (pg-boss retries it) starts at the cursor: no item is applied twice or skipped. Two runs that
// overlap (a slow run outliving its expiry) take turns on the job's row lock.
import type { Tx } from '../../kernel/database/db.ts';
import type { ApiError } from '../../kernel/http/errors.ts';
import type { JobDefinition } from '../../kernel/jobs/jobs.ts';
import type { EventInput, EventOutbox } from '../../kernel/outbox/events.ts';
import type { NormalizedFields } from '../contacts/index.ts';
import { applyContactRows, checkRow, toContact } from '../contacts/index.ts';
import { type ChunkedJobDeps, chunkedJob, endForAccount } from './chunked-job.ts';
import { type BulkJobRow, type ItemResult, type JobError, lockJob, recordChunk } from './repo.ts';
import { toJobSummary } from './schemas.ts';

export const BULK_CONTACTS_JOB = 'bulk.contacts';

export interface BulkWorkerDeps extends ChunkedJobDeps {
  events: EventOutbox;
  chunkSize: number;
}

function jobErrorOf(err: ApiError): JobError {
  const details = Array.isArray(err.details) ? (err.details as JobError['details']) : undefined;
  return { code: err.code, message: err.message, ...(details ? { details } : {}) };
}

async function emitCompleted(deps: BulkWorkerDeps, tx: Tx, job: BulkJobRow): Promise<void> {
  await deps.events.emit(tx, {
    type: 'bulk_job.completed',
    accountId: job.account_id,
    data: { kind: job.kind, ...toJobSummary(job) },
  });
}

/** Rows checked and written per statement inside a chunk. */
const BATCH = 250;

/** Writes rows of distinct phones and emits their events; answers their outcomes. */
async function writeBatch(
  deps: BulkWorkerDeps,
  tx: Tx,
  accountId: string,
  mode: 'upsert' | 'create',
  rows: { index: number; fields: NormalizedFields & { phone: string } }[],
  now: Date,
): Promise<ItemResult[]> {
  const applied = await applyContactRows(tx, accountId, rows, mode, now);
  const events: EventInput[] = [];
  const results: ItemResult[] = applied.map((a) => {
    if (a.contact) {
      const type = a.outcome === 'created' ? 'contact.created' : 'contact.updated';
      events.push({ type, accountId, data: toContact(a.contact) });
    }
    return {
      index: a.index,
      outcome: a.outcome,
      resourceId: a.contact?.id ?? null,
      error: a.error ? jobErrorOf(a.error) : null,
    };
  });
  await deps.events.emitMany(tx, events);
  return results;
}

/** Applies the next chunk; answers whether the job has ended. */
async function processChunk(deps: BulkWorkerDeps, tx: Tx, jobId: string, items: unknown[]): Promise<boolean> {
  const job = await lockJob(tx, jobId);
  if (!job || job.status === 'completed' || job.status === 'failed') return true;
  const now = deps.now();
  if (job.account_status !== 'ACTIVE') {
    await emitCompleted(deps, tx, await endForAccount(tx, job, now, 'items were not processed'));
    return true;
  }

  // The chunk ends early before a phone that repeats one of its own rows: the repeat is applied
  // in the next chunk, after the first, exactly as if the rows were sent one at a time.
  //
  // Checking a row (mostly parsing its phone) is CPU work in this process; writing is work in the
  // database. They overlap: every BATCH checked rows are sent off to be written (the connection
  // runs statements in order) while the next rows are checked, with a pause every few rows that
  // lets the replies of the statements in flight through. The phones of a chunk are all different,
  // so the order in which its batches land does not matter.
  const results: ItemResult[] = [];
  const writes: Promise<ItemResult[]>[] = [];
  const phones = new Set<string>();
  let batch: { index: number; fields: NormalizedFields & { phone: string } }[] = [];
  const send = () => {
    if (batch.length > 0)
      writes.push(writeBatch(deps, tx, job.account_id, job.options.mode ?? 'upsert', batch, now));
    batch = [];
  };
  let next = job.processed;
  for (; next < job.total && next - job.processed < deps.chunkSize; next++) {
    if ((next - job.processed) % 25 === 24) await new Promise((resolve) => setImmediate(resolve));
    const checked = checkRow(items[next], job.country_code);
    if ('error' in checked) {
      results.push({ index: next, outcome: 'failed', resourceId: null, error: jobErrorOf(checked.error) });
      continue;
    }
    if (phones.has(checked.fields.phone)) break;
    phones.add(checked.fields.phone);
    batch.push({ index: next, fields: checked.fields });
    if (batch.length === BATCH) send();
  }
  send();
  for (const written of await Promise.all(writes)) results.push(...written);
  results.sort((a, b) => a.index - b.index);
  const end = next >= job.total ? { status: 'completed' as const, error: null } : null;
  const row = await recordChunk(tx, jobId, results, now, end);
  if (end) await emitCompleted(deps, tx, row);
  return end !== null;
}

export function bulkContactsJob(deps: BulkWorkerDeps): JobDefinition<{ jobId: string }> {
  return chunkedJob<unknown>(deps, {
    name: BULK_CONTACTS_JOB,
    label: 'bulk contact job',
    chunk: (tx, jobId, items) => processChunk(deps, tx, jobId, items),
    giveUpMessage: 'The job failed repeatedly and was stopped; items not processed were not imported.',
    ended: (tx, row) => emitCompleted(deps, tx, row),
  });
}
