// The HTTP API as the import uses it: the bulk endpoints, with retries, over the CLI's client.
import { type ApiReply, type ApiTarget, apiRequest, errorOf } from '../api-client.ts';
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

type Reply = ApiReply;

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

/** Retry-After in milliseconds (delay-seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function describeReply(reply: Reply): string {
  const error = errorOf(reply.body);
  return error ? `HTTP ${reply.status} ${error.code}: ${error.message}` : `HTTP ${reply.status}`;
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
    const reply = await apiRequest(this.#target, method, path, {
      body,
      idempotencyKey,
      fetch: this.#fetch,
      timeoutMs: this.#timeoutMs,
    });
    this.#reached = true;
    return reply;
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
        const inProgress = reply.status === 409 && errorOf(reply.body)?.code === 'IDEMPOTENCY_IN_PROGRESS';
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
