// Chunks: a few rows sent as one job, and the tally of their outcomes.
import { createHash } from 'node:crypto';
import type { BulkClient, BulkJob } from './bulk-client.ts';
import type { ContactInput, Mode, RowError } from './types.ts';

export interface Row {
  /** The line of the file the row starts on (the header is line 1). */
  line: number;
  record: string[];
  contact: ContactInput | null;
  error: RowError | null;
}

export interface Chunk {
  number: number;
  rows: Row[];
  /** Bytes of the file read up to the end of this chunk's last row. */
  endByte: number;
}

export interface ChunkTally {
  created: number;
  updated: number;
  rejects: { row: Row; error: RowError }[];
  jobIds: string[];
  failedJobs: { jobId: string; error: RowError | null }[];
}

export interface ChunkContext {
  client: BulkClient;
  mode: Mode;
  /** The run's part of every Idempotency-Key. */
  runKey: string;
}

export function idempotencyKey(runKey: string, label: string, body: unknown): string {
  const hash = createHash('sha256').update(`${runKey}\n${label}\n`).update(JSON.stringify(body));
  return `tidings-import-${hash.digest('base64url')}`;
}

/** Counts a finished job's outcomes; the items a failed job never reached fail with its error. */
function recordJob(job: BulkJob, rows: Row[], tally: ChunkTally): void {
  tally.jobIds.push(job.jobId);
  const reached = new Set<number>();
  for (const result of job.results) {
    reached.add(result.index);
    const row = rows[result.index];
    if (!row) continue;
    if (result.outcome === 'created') tally.created++;
    else if (result.outcome === 'updated') tally.updated++;
    else tally.rejects.push({ row, error: result.error ?? { code: 'FAILED', message: 'The row failed.' } });
  }
  if (job.status !== 'failed') return;
  tally.failedJobs.push({ jobId: job.jobId, error: job.error });
  const error = job.error ?? { code: 'JOB_FAILED', message: `Job ${job.jobId} failed.` };
  rows.forEach((row, index) => {
    if (!reached.has(index)) tally.rejects.push({ row, error });
  });
}

/** Sends rows as one job and waits for it; a body too large for the server goes as two halves. */
async function sendRows(ctx: ChunkContext, rows: Row[], label: string, tally: ChunkTally): Promise<void> {
  const contacts = rows.map((r) => r.contact!);
  const key = idempotencyKey(ctx.runKey, label, { contacts, mode: ctx.mode });
  const accepted = await ctx.client.startJob(contacts, ctx.mode, key);
  if (accepted !== 'too-large') {
    recordJob(await ctx.client.waitForJob(accepted.jobId), rows, tally);
    return;
  }
  if (rows.length === 1) {
    const error = { code: 'PAYLOAD_TOO_LARGE', message: 'The row alone is larger than the API accepts.' };
    tally.rejects.push({ row: rows[0]!, error });
    return;
  }
  const half = Math.ceil(rows.length / 2);
  await sendRows(ctx, rows.slice(0, half), `${label}.1`, tally);
  await sendRows(ctx, rows.slice(half), `${label}.2`, tally);
}

/** Sends a chunk's good rows as a job; its rows that could not be read fail as they are. */
export async function runChunk(ctx: ChunkContext, chunk: Chunk): Promise<ChunkTally> {
  const tally: ChunkTally = { created: 0, updated: 0, rejects: [], jobIds: [], failedJobs: [] };
  for (const row of chunk.rows) if (row.error) tally.rejects.push({ row, error: row.error });
  const sendable = chunk.rows.filter((r) => r.contact);
  if (sendable.length > 0) await sendRows(ctx, sendable, String(chunk.number), tally);
  tally.rejects.sort((a, b) => a.row.line - b.row.line);
  return tally;
}
