// The HTTP API as the import uses it: the bulk endpoints, with retries, over the CLI's client.
import { API_PREFIX, type ApiTarget, transportFor } from '../api-client.ts';
import {
  errorPayload,
  parseRetryAfter,
  TidingsConnectionError,
  TidingsError,
  type Transport,
} from '../sdk.ts';
import { type ContactInput, type Mode, type RowError, StopError, UsageError } from './types.ts';

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

export type { ApiTarget };

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

/** `HTTP 503 CODE: message`, or the status alone when the answer carries no documented error. */
function describeReply(err: TidingsError): string {
  return errorPayload(err.body) ? `HTTP ${err.status} ${err.code}: ${err.message}` : `HTTP ${err.status}`;
}

/** What became of a request that got no answer: `fetch failed (other side closed)`, a timeout. */
function describeLost(err: unknown): string {
  const lost = (err instanceof TidingsConnectionError ? err.cause : err) as Error & { cause?: Error };
  return `${lost.message}${lost.cause?.message ? ` (${lost.cause.message})` : ''}`;
}

/** Calls the bulk endpoints, waiting out 429s and retrying 5xx and network errors. */
export class BulkClient {
  readonly #transport: Transport;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #attempts: number;
  readonly #maxRetryAfterMs: number;
  readonly #onRetry: (message: string) => void;
  /** Whether the API has answered once: until it has, an unreachable address fails fast. */
  #reached = false;

  constructor(target: ApiTarget, options: ClientOptions = {}) {
    this.#transport = transportFor(target, { fetch: options.fetch, timeoutMs: options.timeoutMs });
    this.#sleep = options.sleep ?? sleep;
    this.#attempts = options.attempts ?? 8;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 300_000;
    this.#onRetry = options.onRetry ?? (() => {});
  }

  /**
   * One request, tried again while the answer says "later": 429, 5xx, a request still in progress.
   * Answers the success's body; any other answer is thrown as the SDK's TidingsError.
   */
  async request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    idempotencyKey?: string,
  ): Promise<unknown> {
    for (let failures = 0; ; ) {
      let problem: string;
      let waitMs: number | null = null;
      try {
        const answer = await this.#transport.send(method === 'GET' ? 'get' : 'post', `${API_PREFIX}${path}`, {
          body,
          idempotencyKey,
        });
        this.#reached = true;
        return answer;
      } catch (err) {
        if (!(err instanceof TidingsError) || err instanceof TidingsConnectionError) {
          problem = describeLost(err);
        } else {
          this.#reached = true;
          const later = parseRetryAfter(err.headers.get('retry-after'));
          if (err.status === 429) {
            const wait = later ?? 1000;
            if (wait > this.#maxRetryAfterMs) {
              throw new StopError(`${method} ${path}: ${describeReply(err)} (retry after ${wait / 1000} s)`);
            }
            this.#onRetry(`${method} ${path}: ${describeReply(err)}; retrying in ${wait / 1000} s`);
            await this.#sleep(wait);
            continue;
          }
          const inProgress = err.status === 409 && err.code === 'IDEMPOTENCY_IN_PROGRESS';
          if (err.status < 500 && !inProgress) throw err;
          problem = describeReply(err);
          waitMs = later;
        }
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
    try {
      return (await this.request('POST', '/bulk/contacts', { contacts, mode }, idempotencyKey)) as BulkJob;
    } catch (err) {
      if (err instanceof TidingsError && err.status === 413) return 'too-large';
      throw refusal('POST /bulk/contacts', err);
    }
  }

  /** Polls the job until it has ended (completed or failed). */
  async waitForJob(jobId: string): Promise<BulkJob> {
    const path = `/bulk/contacts/${encodeURIComponent(jobId)}`;
    for (let delay = 200; ; delay = Math.min(delay * 1.5, 2000)) {
      let job: BulkJob;
      try {
        job = (await this.request('GET', path)) as BulkJob;
      } catch (err) {
        throw refusal(`GET ${path}`, err);
      }
      if (job.status === 'completed' || job.status === 'failed') return job;
      await this.#sleep(delay);
    }
  }
}

/** An answer that no retry changes: a bad key or account is a usage error; anything else stops. */
function refusal(what: string, err: unknown): unknown {
  if (!(err instanceof TidingsError)) return err;
  if (err.status === 401 || err.status === 403) {
    return new UsageError(`the API refused the request (${describeReply(err)})`);
  }
  return new StopError(`${what}: ${describeReply(err)}`);
}
