// The HTTP API as the CLI's commands call it: one small fetch client shared by `send`, `contacts
// list|import`, `messages get`, `login` and `webhooks listen`. The CLI does not use @tidings/sdk:
// it runs from its .ts source by Node's type stripping, while the SDK is a workspace that ships
// built JS (dist/), so importing it would make every CLI command depend on a build step.
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

export interface ApiReply {
  status: number;
  headers: Headers;
  body: unknown;
}

/** The API's error body: `{ error: { code, message, requestId, details? } }`. */
export interface ApiErrorBody {
  code: string;
  message: string;
  requestId?: string;
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

/** The headers every call carries: the key, and the account for a partner key. */
export function apiHeaders(target: ApiTarget, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = {
    'x-api-key': target.apiKey,
    'user-agent': 'tidings-cli',
    ...extra,
  };
  if (target.accountId) headers['x-account-id'] = target.accountId;
  return headers;
}

export async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

export function errorOf(body: unknown): ApiErrorBody | null {
  const error = (body as { error?: ApiErrorBody } | null)?.error;
  return error && typeof error.code === 'string' ? error : null;
}

/** The error of an answer that is not a success: its body's, or one made of the status. */
export function refusalOf(reply: ApiReply): ApiCallError {
  const error = errorOf(reply.body) ?? {
    code: `HTTP_${reply.status}`,
    message: typeof reply.body === 'string' && reply.body ? reply.body.slice(0, 200) : 'no error body',
  };
  return new ApiCallError(reply.status, error, error.requestId ?? reply.headers.get('x-request-id'));
}

export interface RequestOptions {
  body?: unknown;
  /** Query parameters; an array repeats the name (`tag=a&tag=b`); undefined ones are left out. */
  query?: Record<string, string | number | string[] | undefined>;
  idempotencyKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** The URL of an API path with its query. */
export function apiUrl(target: ApiTarget, path: string, query: RequestOptions['query'] = {}): URL {
  const url = new URL(`${apiBase(target.baseUrl)}${path}`);
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
  }
  return url;
}

/** One call, answered whatever its status; a network failure throws (fetch's TypeError). */
export async function apiRequest(
  target: ApiTarget,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiReply> {
  const extra: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) extra['content-type'] = 'application/json';
  if (options.idempotencyKey) extra['idempotency-key'] = options.idempotencyKey;
  const res = await (options.fetch ?? fetch)(apiUrl(target, path, options.query), {
    method,
    headers: apiHeaders(target, extra),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  });
  return { status: res.status, headers: res.headers, body: await bodyOf(res) };
}

/** Why a server could not be reached, in a few words (ECONNREFUSED, a timeout, …). */
export function networkProblem(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if ((err as Error).name === 'TimeoutError') return 'no answer in time';
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** A call whose success is a JSON body; a refusal or an unreachable server throws ApiCallError. */
export async function apiJson<T>(
  target: ApiTarget,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  let reply: ApiReply;
  try {
    reply = await apiRequest(target, method, path, options);
  } catch (err) {
    const message = `cannot reach ${apiBase(target.baseUrl)} (${networkProblem(err)})`;
    throw new ApiCallError(null, { code: 'UNREACHABLE', message }, null);
  }
  if (reply.status >= 400) throw refusalOf(reply);
  return reply.body as T;
}
