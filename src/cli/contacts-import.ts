// `tidings contacts import FILE.csv`: streams a CSV of contacts through the HTTP bulk endpoint,
// a chunk of rows per job, never holding more than two chunks of the file. One job is in flight
// while the next chunk is read; jobs run in file order, so a phone that repeats later in the file
// is applied after its first row, as if the rows were sent one at a time.
//
// Each POST carries an Idempotency-Key derived from the run, the file's identity, the chunk's
// number and its content: a POST retried after a 5xx or a network error replays the first answer
// instead of making a second job. The run's own random part makes a new run of the same file a
// new import (an upsert re-run updates the contacts; it does not replay the first run's jobs).
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  type Stats,
  statSync,
  type WriteStream,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import cliProgress from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse } from 'csv-parse';
import { API_PREFIX } from '../app.ts';
import type { Config } from '../config.ts';
import { ATTRIBUTE_NAME } from '../modules/contacts/fields.ts';

export const MAX_CHUNK_SIZE = 1000;
export type Mode = 'upsert' | 'create';

/** A problem with how the command was called: exit code 2, nothing imported. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A problem that stops an import part-way (the API unreachable, a malformed CSV): exit code 1. */
class StopError extends Error {
  override name = 'StopError';
}

export interface RowError {
  code: string;
  message: string;
  details?: { field: string; issue: string }[];
}

export interface ContactInput {
  phone?: string;
  name?: string;
  email?: string;
  tags?: string[];
  attributes?: Record<string, string>;
  optedIn?: boolean;
}

// ---------------------------------------------------------------------------------------------
// The header and the rows

type Field = 'phone' | 'name' | 'email' | 'tags' | 'optedIn';

const FIELD_COLUMNS: Record<string, Field> = {
  phone: 'phone',
  name: 'name',
  email: 'email',
  tags: 'tags',
  optedin: 'optedIn',
  opted_in: 'optedIn',
};

export interface Columns {
  fields: Partial<Record<Field, number>>;
  attributes: { name: string; index: number }[];
  width: number;
}

/** Which column gives what: the known fields by name (any case), every other column an attribute. */
export function mapHeader(header: string[]): Columns {
  const fields: Partial<Record<Field, number>> = {};
  const attributes: Columns['attributes'] = [];
  const seen = new Set<string>();
  header.forEach((raw, index) => {
    const name = raw.trim();
    if (name === '') throw new UsageError(`column ${index + 1} of the header has no name`);
    if (seen.has(name.toLowerCase())) throw new UsageError(`the header names the column "${name}" twice`);
    seen.add(name.toLowerCase());
    const field = FIELD_COLUMNS[name.toLowerCase()];
    if (field && fields[field] !== undefined) {
      throw new UsageError(`the columns "${header[fields[field]]?.trim()}" and "${name}" both give ${field}`);
    }
    if (field) fields[field] = index;
    else if (ATTRIBUTE_NAME.test(name)) attributes.push({ name, index });
    else {
      throw new UsageError(
        `the column "${name}" cannot be an attribute: attribute names start with a letter or _ and hold at most 40 letters, digits or _`,
      );
    }
  });
  if (fields.phone === undefined) throw new UsageError('the header row has no "phone" column');
  return { fields, attributes, width: header.length };
}

const TRUE_WORDS = new Set(['true', 'yes', '1']);
const FALSE_WORDS = new Set(['false', 'no', '0']);

/** true/false/yes/no/1/0 (any case); undefined for an empty cell; null for anything else. */
export function parseFlag(raw: string): boolean | undefined | null {
  const word = raw.trim().toLowerCase();
  if (word === '') return undefined;
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return null;
}

/** Tags separated by ; or |, trimmed, empty ones left out. */
export function splitTags(raw: string): string[] {
  return raw
    .split(/[;|]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

/** The contact a CSV row describes (empty cells left out), or why the row cannot be sent. */
export function toContactInput(
  record: string[],
  columns: Columns,
): { contact: ContactInput } | { error: RowError } {
  if (record.length > columns.width) {
    return {
      error: {
        code: 'INVALID_CSV_ROW',
        message: `The row has ${record.length} fields; the header has ${columns.width}.`,
      },
    };
  }
  const cell = (index: number | undefined) => (index === undefined ? '' : (record[index] ?? '').trim());
  const contact: ContactInput = {};
  for (const field of ['phone', 'name', 'email'] as const) {
    const value = cell(columns.fields[field]);
    if (value !== '') contact[field] = value;
  }
  const tags = splitTags(cell(columns.fields.tags));
  if (tags.length > 0) contact.tags = tags;
  const optedIn = parseFlag(cell(columns.fields.optedIn));
  if (optedIn === null) {
    const issue = 'must be true, false, yes, no, 1 or 0';
    return {
      error: {
        code: 'INVALID_REQUEST',
        message: `Invalid request: optedIn ${issue}.`,
        details: [{ field: 'optedIn', issue }],
      },
    };
  }
  if (optedIn !== undefined) contact.optedIn = optedIn;
  const attributes: Record<string, string> = {};
  for (const { name, index } of columns.attributes) {
    const value = cell(index);
    if (value !== '') attributes[name] = value;
  }
  if (Object.keys(attributes).length > 0) contact.attributes = attributes;
  return { contact };
}

// ---------------------------------------------------------------------------------------------
// The HTTP API

export interface BulkJob {
  jobId: string;
  status: 'queued' | 'processing' | 'completed' | 'failed';
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  error: RowError | null;
  results: {
    index: number;
    outcome: 'created' | 'updated' | 'failed';
    contactId: string | null;
    error: RowError | null;
  }[];
}

interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface ApiTarget {
  baseUrl: string;
  apiKey: string;
  accountId: string;
}

export interface ClientOptions {
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Tries of one request that fails with a 5xx or a network error. */
  attempts?: number;
  timeoutMs?: number;
  /** The longest Retry-After waited for; a longer one (a spent monthly quota) stops the import. */
  maxRetryAfterMs?: number;
  /** Told of each wait before a retry. */
  onRetry?: (message: string) => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Retry-After in milliseconds (delay-seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function errorOf(reply: Reply): RowError | null {
  const error = (reply.body as { error?: RowError } | null)?.error;
  return error && typeof error.code === 'string' ? error : null;
}

function describeReply(reply: Reply): string {
  const error = errorOf(reply);
  return error ? `HTTP ${reply.status} ${error.code}: ${error.message}` : `HTTP ${reply.status}`;
}

async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** Calls the bulk endpoints, waiting out 429s and retrying 5xx and network errors. */
export class BulkClient {
  readonly #target: ApiTarget;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #attempts: number;
  readonly #timeoutMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #onRetry: (message: string) => void;
  /** Whether the API has answered once: until it has, an unreachable address fails fast. */
  #reached = false;

  constructor(target: ApiTarget, options: ClientOptions = {}) {
    this.#target = { ...target, baseUrl: target.baseUrl.replace(/\/+$/, '') };
    this.#fetch = options.fetch ?? fetch;
    this.#sleep = options.sleep ?? sleep;
    this.#attempts = options.attempts ?? 8;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 300_000;
    this.#onRetry = options.onRetry ?? (() => {});
  }

  async #once(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<Reply> {
    const headers: Record<string, string> = {
      'x-api-key': this.#target.apiKey,
      'x-account-id': this.#target.accountId,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const res = await this.#fetch(`${this.#target.baseUrl}${API_PREFIX}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    this.#reached = true;
    return { status: res.status, headers: res.headers, body: await bodyOf(res) };
  }

  /** One request, tried again while the answer says "later": 429, 5xx, a request still in progress. */
  async request(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<Reply> {
    for (let failures = 0; ; ) {
      let problem: string;
      let waitMs: number | null = null;
      try {
        const reply = await this.#once(method, path, body, idempotencyKey);
        const later = retryAfterMs(reply.headers.get('retry-after'));
        if (reply.status === 429) {
          const wait = later ?? 1000;
          if (wait > this.#maxRetryAfterMs) {
            throw new StopError(`${method} ${path}: ${describeReply(reply)} (retry after ${wait / 1000} s)`);
          }
          this.#onRetry(`${method} ${path}: ${describeReply(reply)}; retrying in ${wait / 1000} s`);
          await this.#sleep(wait);
          continue;
        }
        const inProgress = reply.status === 409 && errorOf(reply)?.code === 'IDEMPOTENCY_IN_PROGRESS';
        if (reply.status < 500 && !inProgress) return reply;
        problem = describeReply(reply);
        waitMs = later;
      } catch (err) {
        if (err instanceof StopError) throw err;
        const cause = (err as Error & { cause?: Error }).cause;
        problem = `${(err as Error).message}${cause?.message ? ` (${cause.message})` : ''}`;
      }
      failures++;
      if (failures >= (this.#reached ? this.#attempts : Math.min(3, this.#attempts))) {
        throw new StopError(`${method} ${path}: ${problem}, ${failures} times; giving up`);
      }
      const wait = Math.min(waitMs ?? 500 * 2 ** (failures - 1), 30_000);
      this.#onRetry(`${method} ${path}: ${problem}; retrying in ${wait / 1000} s`);
      await this.#sleep(wait);
    }
  }

  /** Queues a job for these contacts; 'too-large' when the server refuses the body's size. */
  async startJob(
    contacts: ContactInput[],
    mode: Mode,
    idempotencyKey: string,
  ): Promise<BulkJob | 'too-large'> {
    const reply = await this.request('POST', '/bulk/contacts', { contacts, mode }, idempotencyKey);
    if (reply.status === 202) return reply.body as BulkJob;
    if (reply.status === 413) return 'too-large';
    throw refusal('POST /bulk/contacts', reply);
  }

  /** Polls the job until it has ended (completed or failed). */
  async waitForJob(jobId: string): Promise<BulkJob> {
    const path = `/bulk/contacts/${encodeURIComponent(jobId)}`;
    for (let delay = 200; ; delay = Math.min(delay * 1.5, 2000)) {
      const reply = await this.request('GET', path);
      if (reply.status !== 200) throw refusal(`GET ${path}`, reply);
      const job = reply.body as BulkJob;
      if (job.status === 'completed' || job.status === 'failed') return job;
      await this.#sleep(delay);
    }
  }
}

/** An answer that no retry changes: a bad key or account is a usage error; anything else stops. */
function refusal(what: string, reply: Reply): Error {
  if (reply.status === 401 || reply.status === 403) {
    return new UsageError(`the API refused the request (${describeReply(reply)})`);
  }
  return new StopError(`${what}: ${describeReply(reply)}`);
}

// ---------------------------------------------------------------------------------------------
// Chunks: a few rows sent as one job

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

interface ChunkContext {
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

// ---------------------------------------------------------------------------------------------
// The rejects file

/** One CSV line; fields with a comma, quote or line break are quoted. */
export function csvLine(values: string[]): string {
  return `${values.map((v) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v)).join(',')}\n`;
}

/** `CODE: message`, plus the field issues the message does not already say. */
export function describeError(error: RowError): string {
  const issues = (error.details ?? []).filter((d) => !error.message.includes(`${d.field} ${d.issue}`));
  const extra = issues.map((d) => `${d.field} ${d.issue}`).join('; ');
  return `${error.code}: ${error.message}${extra ? ` (${extra})` : ''}`;
}

/** The rejected rows as the original columns plus `line` and `error`; created at the first reject. */
class RejectsFile {
  readonly path: string;
  readonly #header: string[];
  #stream: WriteStream | null = null;
  count = 0;

  constructor(path: string, header: string[]) {
    this.path = path;
    this.#header = header;
  }

  async #write(text: string): Promise<void> {
    if (!this.#stream) {
      this.#stream = createWriteStream(this.path);
      // Errors reach the awaits below (once, finished); this keeps them from crashing the process.
      this.#stream.on('error', () => {});
      await once(this.#stream, 'open');
      this.#stream.write(csvLine([...this.#header, 'line', 'error']));
    }
    if (!this.#stream.write(text)) await once(this.#stream, 'drain');
  }

  async add(row: Row, error: RowError): Promise<void> {
    const cells = this.#header.map((_, i) => row.record[i] ?? '');
    this.count++;
    await this.#write(csvLine([...cells, String(row.line), describeError(error)]));
  }

  async close(): Promise<void> {
    if (!this.#stream) return;
    this.#stream.end();
    await finished(this.#stream);
  }
}

// ---------------------------------------------------------------------------------------------
// Progress on stderr

export interface Totals {
  rows: number;
  created: number;
  updated: number;
  failed: number;
  jobs: number;
}

interface Progress {
  chunkDone(chunk: Chunk, tally: ChunkTally, totals: Totals): void;
  /** A request is waited out (shown only without a bar, which the line would break). */
  retrying(message: string): void;
  stop(): void;
}

const rowsDone = (t: Totals) => t.created + t.updated + t.failed;

function barProgress(stream: NodeJS.WriteStream, totalBytes: number): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format:
        ' {bar} {percentage}% | {rows} rows done | {created} created, {updated} updated, {failed} failed | ETA {eta_formatted}',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(totalBytes, 1), 0, { rows: 0, created: 0, updated: 0, failed: 0 });
  return {
    chunkDone: (chunk, _tally, totals) => bar.update(chunk.endByte, { ...totals, rows: rowsDone(totals) }),
    retrying: () => {},
    stop: () => bar.stop(),
  };
}

function lineProgress(stream: NodeJS.WritableStream): Progress {
  return {
    chunkDone: (chunk, tally, totals) => {
      const first = chunk.rows[0]?.line;
      const last = chunk.rows.at(-1)?.line;
      stream.write(
        `chunk ${chunk.number}: lines ${first}–${last}, ${chunk.rows.length} rows: ${tally.created} created, ` +
          `${tally.updated} updated, ${tally.rejects.length} failed (${tally.jobIds.join(', ') || 'no job'}); ` +
          `${rowsDone(totals)} rows done\n`,
      );
    },
    retrying: (message) => stream.write(`${message}\n`),
    stop: () => {},
  };
}

// ---------------------------------------------------------------------------------------------
// The import

export interface ImportOptions {
  file: string;
  accountId: string;
  apiKey: string;
  baseUrl: string;
  mode: Mode;
  rejectsPath: string;
  chunkSize: number;
  stderr: NodeJS.WriteStream;
  client?: ClientOptions;
}

export interface ImportSummary extends Totals {
  file: string;
  mode: Mode;
  failedJobs: { jobId: string; error: RowError | null }[];
  rejectsPath: string | null;
  elapsedMs: number;
  /** Why the import stopped before the end of the file, if it did. */
  stopped: string | null;
}

function fileStats(file: string): Stats {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch {
    throw new UsageError(`no such file: ${file}`);
  }
  if (!stats.isFile()) throw new UsageError(`not a file: ${file}`);
  return stats;
}

/** The rejects file must not be the input, and its folder must be writable (before any import). */
function checkRejectsPath(path: string, file: string): void {
  if (resolve(path) === resolve(file)) throw new UsageError('the rejects file cannot be the file imported');
  try {
    accessSync(dirname(resolve(path)), constants.W_OK);
  } catch {
    throw new UsageError(`cannot write the rejects file ${path}: its folder is missing or read-only`);
  }
}

/** The run's part of the Idempotency-Keys: the file's identity, the target and this run. */
function runKeyOf(options: ImportOptions, stats: Stats): string {
  return createHash('sha256')
    .update([resolve(options.file), stats.size, stats.mtimeMs, options.accountId, options.mode].join('\n'))
    .update(randomBytes(16))
    .digest('base64url');
}

type Settled = { tally: ChunkTally; chunk: Chunk } | { error: unknown };

class Importer {
  readonly #options: ImportOptions;
  readonly #ctx: ChunkContext;
  readonly #progress: Progress;
  readonly totals: Totals = { rows: 0, created: 0, updated: 0, failed: 0, jobs: 0 };
  readonly failedJobs: ImportSummary['failedJobs'] = [];
  rejects: RejectsFile | null = null;
  #columns: Columns | null = null;
  #rows: Row[] = [];
  #chunks = 0;
  #inFlight: Promise<Settled> | null = null;

  constructor(options: ImportOptions, ctx: ChunkContext, progress: Progress) {
    this.#options = options;
    this.#ctx = ctx;
    this.#progress = progress;
  }

  /** Takes one CSV record: the header first, then rows, sent a chunk at a time. */
  async add(record: string[], line: number, endByte: number): Promise<void> {
    if (!this.#columns) {
      this.#columns = mapHeader(record);
      this.rejects = new RejectsFile(this.#options.rejectsPath, record);
      return;
    }
    this.totals.rows++;
    const read = toContactInput(record, this.#columns);
    this.#rows.push({
      line,
      record,
      contact: 'contact' in read ? read.contact : null,
      error: 'error' in read ? read.error : null,
    });
    if (this.#rows.length >= this.#options.chunkSize) await this.flush(endByte);
  }

  /** Sends the rows read so far as the next chunk, once the chunk before it has been recorded. */
  async flush(endByte: number): Promise<void> {
    if (!this.#columns)
      throw new UsageError('the file is empty: it needs a header row with a "phone" column');
    if (this.#rows.length === 0) return;
    const chunk: Chunk = { number: ++this.#chunks, rows: this.#rows, endByte };
    this.#rows = [];
    await this.settle();
    this.#inFlight = runChunk(this.#ctx, chunk).then(
      (tally) => ({ tally, chunk }),
      (error) => ({ error }),
    );
  }

  /** Waits for the chunk in flight and records its outcome. */
  async settle(): Promise<void> {
    const inFlight = this.#inFlight;
    if (!inFlight) return;
    this.#inFlight = null;
    const settled = await inFlight;
    if ('error' in settled) throw settled.error;
    const { tally, chunk } = settled;
    this.totals.created += tally.created;
    this.totals.updated += tally.updated;
    this.totals.failed += tally.rejects.length;
    this.totals.jobs += tally.jobIds.length;
    this.failedJobs.push(...tally.failedJobs);
    for (const { row, error } of tally.rejects) await this.rejects!.add(row, error);
    this.#progress.chunkDone(chunk, tally, this.totals);
  }
}

function csvRecords(file: string) {
  const source = createReadStream(file);
  const parser = source.pipe(
    parse({
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      record_delimiter: ['\r\n', '\n', '\r'],
    }),
  );
  source.on('error', (err) => parser.destroy(err));
  return parser;
}

/** Reads the file and sends it chunk by chunk; answers why it stopped early, if it did. */
async function readAll(importer: Importer, file: string): Promise<string | null> {
  const parser = csvRecords(file);
  let endLine = 0;
  let emptyLines = 0;
  let endByte = 0;
  try {
    for await (const { record, info } of parser) {
      // info.lines is the line the record ends on; it starts after the blank lines skipped.
      const line = endLine + 1 + (info.empty_lines - emptyLines);
      endLine = info.lines;
      emptyLines = info.empty_lines;
      endByte = info.bytes;
      await importer.add(record, line, endByte);
    }
    await importer.flush(endByte);
    await importer.settle();
    return null;
  } catch (err) {
    parser.destroy();
    if (err instanceof UsageError) throw err;
    const reason =
      err instanceof StopError ? err.message : `the CSV could not be read: ${(err as Error).message}`;
    await importer.settle().catch(() => {});
    return reason;
  }
}

function progressFor(stderr: NodeJS.WriteStream, totalBytes: number): Progress {
  return stderr.isTTY ? barProgress(stderr, totalBytes) : lineProgress(stderr);
}

export async function importContacts(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const stats = fileStats(options.file);
  checkRejectsPath(options.rejectsPath, options.file);
  const progress = progressFor(options.stderr, stats.size);
  const client = new BulkClient(options, { onRetry: (m) => progress.retrying(m), ...options.client });
  const importer = new Importer(
    options,
    { client, mode: options.mode, runKey: runKeyOf(options, stats) },
    progress,
  );
  let stopped: string | null;
  try {
    stopped = await readAll(importer, options.file);
  } finally {
    progress.stop();
    await importer.rejects?.close();
  }
  const rejects = importer.rejects;
  return {
    ...importer.totals,
    file: options.file,
    mode: options.mode,
    failedJobs: importer.failedJobs,
    rejectsPath: rejects && rejects.count > 0 ? rejects.path : null,
    elapsedMs: Date.now() - started,
    stopped,
  };
}

export function formatSummary(s: ImportSummary): string {
  const label = (name: string, value: string | number) => `  ${name.padEnd(10)} ${value}`;
  const notSent = s.rows - s.created - s.updated - s.failed;
  const jobErrors = s.failedJobs.map((j) => `${j.jobId}${j.error ? ` ${describeError(j.error)}` : ''}`);
  const lines = [
    `${s.stopped ? 'Stopped importing' : 'Imported'} ${s.file} (${s.mode})`,
    label('rows read', s.rows),
    label('created', s.created),
    label('updated', s.updated),
    label('failed', s.failed),
    ...(notSent > 0 ? [label('not sent', notSent)] : []),
    label(
      'jobs',
      `${s.jobs}${jobErrors.length ? ` (${jobErrors.length} failed: ${jobErrors.join('; ')})` : ''}`,
    ),
    label('elapsed', `${(s.elapsedMs / 1000).toFixed(1)} s`),
    label('rejects', s.rejectsPath ? `${s.failed} rows written to ${s.rejectsPath}` : 'none'),
    ...(s.stopped ? [label('stopped', s.stopped)] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/** 0 when every row went in; 1 when some were rejected, a job failed or the import stopped. */
export function exitCodeOf(s: ImportSummary): number {
  return s.failed === 0 && s.failedJobs.length === 0 && !s.stopped && s.rows === s.created + s.updated
    ? 0
    : 1;
}

// ---------------------------------------------------------------------------------------------
// The command

interface CommandOptions {
  account: string;
  apiKey?: string;
  url?: string;
  mode: Mode;
  rejects?: string;
  chunkSize: number;
}

function chunkSizeOf(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_CHUNK_SIZE) {
    throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_CHUNK_SIZE}.`);
  }
  return n;
}

/** FILE.csv → FILE.rejected.csv (any other name gets .rejected.csv added). */
export function defaultRejectsPath(file: string): string {
  return `${file.replace(/\.csv$/i, '')}.rejected.csv`;
}

function baseUrlOf(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be a URL (got ${JSON.stringify(raw)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError('--url must use http or https');
  return raw.replace(/\/+$/, '');
}

function importOptionsOf(file: string, opts: CommandOptions, cfg: Config): ImportOptions {
  const apiKey = opts.apiKey ?? cfg.apiKey;
  if (!apiKey) throw new UsageError('no API key: pass --api-key or set TIDINGS_API_KEY');
  return {
    file,
    accountId: opts.account,
    apiKey,
    baseUrl: baseUrlOf(opts.url ?? cfg.publicBaseUrl),
    mode: opts.mode,
    rejectsPath: opts.rejects ?? defaultRejectsPath(file),
    chunkSize: opts.chunkSize,
    stderr: process.stderr,
  };
}

/** Runs the command and answers its exit code. */
export async function runContactsImport(file: string, opts: CommandOptions, cfg: Config): Promise<number> {
  try {
    const summary = await importContacts(importOptionsOf(file, opts, cfg));
    process.stdout.write(formatSummary(summary));
    if (summary.stopped) process.stderr.write(`tidings contacts import: ${summary.stopped}\n`);
    return exitCodeOf(summary);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`tidings contacts import: ${err.message}\n`);
    return 2;
  }
}

/** `contacts import`; `config` reads the configuration (the API key and base URL defaults). */
export function contactsImportCommand(config: () => Config): Command {
  return new Command('import')
    .description('import contacts from a CSV file through the HTTP bulk API, 1,000 rows per job')
    .argument('<file>', 'CSV with a header row: phone (required), name, email, tags, optedIn, attributes…')
    .requiredOption('--account <accountId>', 'the account to import into')
    .option('--api-key <key>', "the account's key, or a partner key (default: TIDINGS_API_KEY)")
    .option('--url <base>', 'the API base URL (default: PUBLIC_BASE_URL)')
    .addOption(
      new Option('--mode <mode>', 'upsert updates a phone the account has; create rejects it')
        .choices(['upsert', 'create'])
        .default('upsert'),
    )
    .option('--rejects <file>', 'where rejected rows are written (default: FILE.rejected.csv)')
    .option('--chunk-size <n>', `rows per job (1–${MAX_CHUNK_SIZE})`, chunkSizeOf, MAX_CHUNK_SIZE)
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (file: string, opts: CommandOptions) => {
      process.exitCode = await runContactsImport(file, opts, config());
    });
}
