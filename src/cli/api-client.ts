// The HTTP API as the CLI's commands call it (`send`, `contacts list|import`, `messages get`, `login`,
// `webhooks listen`): the SDK's transport (packages/sdk/src/http.ts, from its source: see sdk.ts)
// with what the CLI adds: a base URL given with or without /api/v1/public, its user agent, one
// attempt per call (the import retries on its own terms), and failures told as `CODE: message
// (req_…)` or `cannot reach <server> (ECONNREFUSED)`.
import { errorPayload, type HttpMethod, TidingsConnectionError, TidingsError, Transport } from './sdk.ts';
import { UsageError } from './usage-error.ts';

export const API_PREFIX = '/api/v1/public';

/** Where and as whom: the server, the key, and for a partner key the account it acts on. */
export interface ApiTarget {
  /** The server (http://localhost:3000); the API prefix is added when missing. */
  baseUrl: string;
  apiKey: string;
  /** Sent as X-Account-Id when set (needed with a partner key; an account key may leave it out). */
  accountId?: string | null;
}

/** The API's error (the `error` of its error body): a code, a message, the fields it names. */
export interface ApiErrorBody {
  code: string;
  message: string;
  details?: { field: string; issue: string }[];
}

/** A refusal by the API (a 4xx or 5xx with its error body), or a server that could not be reached. */
export class ApiCallError extends Error {
  override name = 'ApiCallError';
  readonly status: number | null;
  readonly code: string;
  readonly requestId: string | null;
  readonly details: ApiErrorBody['details'];

  constructor(status: number | null, error: ApiErrorBody, requestId: string | null) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.requestId = requestId;
    this.details = error.details;
  }

  /** `CODE: message (req_…)`, with the fields the API named. */
  describe(): string {
    const details = this.details?.length
      ? ` [${this.details.map((d) => `${d.field} ${d.issue}`).join('; ')}]`
      : '';
    return `${this.code}: ${this.message}${details}${this.requestId ? ` (${this.requestId})` : ''}`;
  }
}

/** The base URL checked (http or https) and without a trailing slash. */
export function checkBaseUrl(raw: string, what = '--url'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${what} must be a URL (got ${JSON.stringify(raw)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${what} must use http or https`);
  }
  return raw.replace(/\/+$/, '');
}

/** The API's root: the base URL with the prefix, whether or not it was given with it. */
export function apiBase(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith(API_PREFIX) ? trimmed : `${trimmed}${API_PREFIX}`;
}

/** The server's root (what the SDK's paths follow): the base URL without the API prefix. */
function serverRoot(baseUrl: string): string {
  return apiBase(baseUrl).slice(0, -API_PREFIX.length);
}

export interface TransportOptions {
  fetch?: typeof fetch;
  /** How long one call may take (default 60 s). */
  timeoutMs?: number;
}

/** The SDK's transport for a target: its key, its account, the CLI's user agent; no retries. */
export function transportFor(target: ApiTarget, options: TransportOptions = {}): Transport {
  return new Transport({
    baseUrl: serverRoot(target.baseUrl),
    apiKey: target.apiKey,
    accountId: target.accountId ?? undefined,
    headers: { 'user-agent': 'tidings-cli' },
    fetch: options.fetch,
    maxRetries: 0,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
}

/** A refusal as the CLI tells it: the API's error body, or one made of the status and the text. */
export function refusalOf(err: TidingsError): ApiCallError {
  const documented = errorPayload(err.body) !== null;
  const error: ApiErrorBody = documented
    ? { code: err.code, message: err.message, details: err.details as ApiErrorBody['details'] }
    : {
        code: err.code,
        message: typeof err.body === 'string' && err.body ? err.body.slice(0, 200) : 'no error body',
      };
  return new ApiCallError(err.status, error, err.requestId);
}

/** Why a server could not be reached, in a few words (ECONNREFUSED, a timeout, …). */
function networkProblem(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if ((err as Error).name === 'TimeoutError') return 'no answer in time';
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

export interface RequestOptions {
  body?: unknown;
  /** Query parameters; an array repeats the name (`tag=a&tag=b`); undefined ones are left out. */
  query?: Record<string, string | number | string[] | undefined>;
  idempotencyKey?: string;
}

/** A call whose success is a JSON body; a refusal or an unreachable server throws ApiCallError. */
export async function apiJson<T>(
  target: ApiTarget,
  method: Uppercase<HttpMethod>,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  try {
    return (await transportFor(target).send(
      method.toLowerCase() as HttpMethod,
      `${API_PREFIX}${path}`,
      options,
    )) as T;
  } catch (err) {
    if (err instanceof TidingsConnectionError) {
      const message = `cannot reach ${apiBase(target.baseUrl)} (${networkProblem(err.cause)})`;
      throw new ApiCallError(null, { code: 'UNREACHABLE', message }, null);
    }
    throw err instanceof TidingsError ? refusalOf(err) : err;
  }
}
