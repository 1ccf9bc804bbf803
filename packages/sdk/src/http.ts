// The transport under every method: builds the URL from the document's path and parameters, sends
// with the configured fetch, retries what may be retried (retry.ts) with the same Idempotency-Key,
// and turns answers into values or TidingsErrors. Only fetch, URL, Headers and globalThis.crypto: it
// runs on Node >= 20, Bun, Deno and in browsers.
import { TidingsConnectionError, TidingsError } from './errors.ts';
import { type BackoffPolicy, DEFAULT_BACKOFF, RETRYABLE_STATUSES, retryDelay, sleep } from './retry.ts';
import type { AnswerOf, HttpMethod, PathsFor, RequestInit } from './types.ts';

export const SDK_VERSION = '0.1.0';

const SAFE_METHODS = new Set<string>(['get', 'head', 'options']);

export interface TidingsOptions {
  /** The API key: `tdg_live_…`, a sandbox key, or a partner key (`tdg_partner_…`). */
  apiKey?: string;
  /**
   * The server's origin, e.g. `https://tidings.example.com` (paths start with /api/v1/…). Required
   * with a key; in cookie mode it defaults to '' (the page's own origin).
   */
  baseUrl?: string;
  /** The fetch to use (defaults to globalThis.fetch): for proxies, instrumentation or tests. */
  fetch?: typeof fetch;
  /** Retries after the first attempt on 429/502/503/504 and network errors (default 2). */
  maxRetries?: number;
  /** Per-attempt timeout in ms (default 30 000). */
  timeoutMs?: number;
  /** Sent as X-Account-Id on every call (a partner key acting on one account); see forAccount. */
  accountId?: string;
  /** Headers added to every call. */
  headers?: Record<string, string>;
  /**
   * Cookie mode (the console in a browser): no API key; the session cookie goes with every call
   * (`credentials: 'same-origin'`) and each unsafe call (not GET/HEAD/OPTIONS) carries
   * X-CSRF-Token from `csrfToken()`, read at call time so a new sign-in's token is used at once.
   */
  cookie?: { csrfToken: () => string | null | undefined };
  /** Backoff tuning; `sleep` replaces the timer (tests use it to observe waits). */
  backoff?: Partial<BackoffPolicy> & { sleep?: (ms: number, signal?: AbortSignal) => Promise<void> };
}

type AnyInit = {
  params?: Record<string, string | number>;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
};

export class Transport {
  readonly options: Readonly<TidingsOptions>;
  readonly #fetch: typeof fetch;
  readonly #policy: BackoffPolicy;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: TidingsOptions) {
    if (options.cookie && options.apiKey) throw new TypeError('Tidings: cookie mode takes no apiKey');
    // Cookie mode calls the page's own origin: relative URLs.
    const baseUrl = options.baseUrl ?? (options.cookie ? '' : undefined);
    if (baseUrl === undefined || (!baseUrl && !options.cookie))
      throw new TypeError('Tidings: baseUrl is required');
    this.options = { ...options, baseUrl: baseUrl.replace(/\/+$/, '') };
    // Bound, so a fetch taken from globalThis keeps its receiver (browsers require it).
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#policy = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#sleep = options.backoff?.sleep ?? sleep;
  }

  async request<M extends HttpMethod, P extends PathsFor<M>>(
    method: M,
    path: P,
    // biome-ignore lint/complexity/noBannedTypes: an init with no required key may be left out
    ...[init]: {} extends RequestInit<M, P> ? [init?: RequestInit<M, P>] : [init: RequestInit<M, P>]
  ): Promise<AnswerOf<M, P>> {
    return (await this.send(method, path, (init ?? {}) as AnyInit)) as AnswerOf<M, P>;
  }

  /** The untyped core (request() is its typed face). */
  async send(method: HttpMethod, path: string, init: AnyInit): Promise<unknown> {
    const url = this.url(path, init);
    const headers = this.#headers(method, 'application/json');
    let body: FormData | Blob | string | undefined;
    if (init.body instanceof FormData || init.body instanceof Blob) body = init.body;
    else if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers.set('content-type', 'application/json');
    }
    for (const [k, v] of Object.entries(init.headers ?? {})) headers.set(k, v);
    // One key per logical POST, the same on every attempt: the server answers a retry of a request
    // it already ran with the first answer instead of running it twice.
    if (method === 'post' && !headers.has('idempotency-key')) {
      headers.set('idempotency-key', init.idempotencyKey ?? globalThis.crypto.randomUUID());
    }
    const maxRetries = init.maxRetries ?? this.options.maxRetries ?? 2;
    const timeoutMs = init.timeoutMs ?? this.options.timeoutMs ?? 30_000;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = init.signal ? anySignal([init.signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await this.#fetch(url, {
          method: method.toUpperCase(),
          headers,
          body,
          signal,
          ...this.#credentials(),
        });
      } catch (err) {
        // The caller's own abort ends it; a timeout or network failure may be tried again.
        if (init.signal?.aborted) throw init.signal.reason;
        const timedOut = timeout.aborted;
        if (attempt < maxRetries) {
          await this.#sleep(retryDelay(attempt, null, this.#policy), init.signal);
          continue;
        }
        const what = timedOut ? `timed out after ${timeoutMs} ms` : `failed: ${describe(err)}`;
        throw new TidingsConnectionError(`${method.toUpperCase()} ${path} ${what}`, err, timedOut);
      }
      if (response.ok) {
        // The server has acted: a body cut off now is reported, not retried.
        try {
          return await readAnswer(response);
        } catch (err) {
          if (init.signal?.aborted) throw init.signal.reason;
          throw new TidingsConnectionError(
            `${method.toUpperCase()} ${path}: the answer was cut off (${describe(err)})`,
            err,
            timeout.aborted,
          );
        }
      }
      if (RETRYABLE_STATUSES.has(response.status) && attempt < maxRetries) {
        // The body is not needed; release the connection.
        await response.body?.cancel().catch(() => {});
        await this.#sleep(
          retryDelay(attempt, response.headers.get('retry-after'), this.#policy),
          init.signal,
        );
        continue;
      }
      throw TidingsError.fromResponse(response, await readBody(response));
    }
  }

  /**
   * Opens a long-lived GET (the event stream): the answer's headers are awaited, its body is the
   * caller's to read. Nothing is retried here; the stream reconnects on its own terms.
   */
  async open(path: string, init: AnyInit & { accept: string }): Promise<Response> {
    const headers = this.#headers('get', init.accept);
    for (const [k, v] of Object.entries(init.headers ?? {})) headers.set(k, v);
    let response: Response;
    try {
      response = await this.#fetch(this.url(path, init), {
        method: 'GET',
        headers,
        signal: init.signal,
        ...this.#credentials(),
      });
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason;
      throw new TidingsConnectionError(`GET ${path} failed: ${describe(err)}`, err, false);
    }
    if (!response.ok) throw TidingsError.fromResponse(response, await readBody(response));
    return response;
  }

  /** The headers every call starts from: the client's own, the key or the CSRF token, the account. */
  #headers(method: HttpMethod, accept: string): Headers {
    const headers = new Headers(this.options.headers);
    headers.set('accept', accept);
    if (this.options.apiKey) headers.set('x-api-key', this.options.apiKey);
    if (this.options.accountId) headers.set('x-account-id', this.options.accountId);
    if (this.options.cookie && !SAFE_METHODS.has(method)) {
      const token = this.options.cookie.csrfToken();
      if (token) headers.set('x-csrf-token', token);
    }
    return headers;
  }

  /** Cookie mode sends the session cookie (same origin only); key mode leaves fetch's default. */
  #credentials(): { credentials?: 'same-origin' } {
    return this.options.cookie ? { credentials: 'same-origin' } : {};
  }

  /** Waits as the client's backoff does (so tests can observe it), ended early by `signal`. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#sleep(ms, signal);
  }

  /** How long to wait before attempt `attempt + 1`, honouring a Retry-After value. */
  delay(attempt: number, retryAfter: string | null): number {
    return retryDelay(attempt, retryAfter, this.#policy);
  }

  /** The absolute URL of a document path with its path and query parameters. */
  url(path: string, init: Pick<AnyInit, 'params' | 'query'> = {}): string {
    const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = init.params?.[name];
      if (value === undefined || value === '')
        throw new TypeError(`Tidings: ${path} needs the ${name} parameter`);
      return encodeURIComponent(String(value));
    });
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(init.query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v])
        search.append(k, item instanceof Date ? item.toISOString() : String(item));
    }
    const qs = search.toString();
    return `${this.options.baseUrl}${filled}${qs ? `?${qs}` : ''}`;
  }
}

/** AbortSignal.any (Node ≥ 20.3, current browsers), or the same by hand where it is missing. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function readAnswer(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    const text = await response.text();
    return text ? JSON.parse(text) : undefined;
  }
  // A file (media content): handed over as it came.
  return response.blob();
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
