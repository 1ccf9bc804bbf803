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
import { accessSync, constants, createReadStream, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse } from 'csv-parse';
import type { Config } from '../../config.ts';
import { resolveConnection } from '../profiles.ts';
import { BulkClient, type ClientOptions } from './bulk-client.ts';
import { type Chunk, type ChunkContext, type ChunkTally, type Row, runChunk } from './chunks.ts';
import { barProgress, lineProgress, type Progress, type Totals } from './progress.ts';
import { describeError, RejectsFile } from './rejects.ts';
import { type Columns, mapHeader, toContactInput } from './rows.ts';
import { MAX_CHUNK_SIZE, type Mode, type RowError, StopError, UsageError } from './types.ts';

export interface ImportOptions {
  file: string;
  /** Sent as X-Account-Id (needed with a partner key). */
  accountId: string | null;
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
    .update(
      [resolve(options.file), stats.size, stats.mtimeMs, options.accountId ?? '', options.mode].join('\n'),
    )
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
  account?: string;
  apiKey?: string;
  key?: string;
  url?: string;
  profile?: string;
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

/** The server, key and account: flags, then the environment, then the profile (tidings login). */
function importOptionsOf(file: string, opts: CommandOptions, cfg: Config): ImportOptions {
  const connection = resolveConnection(
    { url: opts.url, key: opts.key ?? opts.apiKey, account: opts.account, profile: opts.profile },
    process.env,
    { defaultUrl: cfg.publicBaseUrl, keyFlag: '--api-key' },
  );
  return {
    file,
    accountId: connection.accountId,
    apiKey: connection.apiKey,
    baseUrl: connection.baseUrl,
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
    .argument(
      '<file>',
      'CSV with a header row: phone (required), name, email, tags, optedIn, marketingOptOut, attributes…',
    )
    .option('--profile <name>', 'the saved profile to use (default: TIDINGS_PROFILE, or "default")')
    .option(
      '--account <accountId>',
      'with a partner key: the account to import into (default: TIDINGS_ACCOUNT_ID, or the profile’s)',
    )
    .option(
      '--api-key <key>',
      "the account's key, or a partner key (default: TIDINGS_API_KEY, or the profile’s)",
    )
    .option('--key <key>', 'the same as --api-key')
    .option('--url <base>', 'the server (default: TIDINGS_URL, the profile’s, or PUBLIC_BASE_URL)')
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
