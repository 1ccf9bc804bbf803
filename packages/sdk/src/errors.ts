// The SDK's errors. An HTTP error answer becomes a TidingsError carrying the documented error body
// ({ error: { code, message, docs, details, requestId } }, docs/errors.md); a request that got no
// answer (network failure, timeout) becomes a TidingsConnectionError.

/** The documented error body's `error` object. */
export interface ErrorPayload {
  code: string;
  message: string;
  docs?: string;
  details?: unknown;
  requestId?: string;
}

export class TidingsError extends Error {
  /** The catalogue code (`RESOURCE_NOT_FOUND`, `INVALID_REQUEST`, …); branch on this. */
  readonly code: string;
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** The `X-Request-Id` of the answer: quote it when asking for support. */
  readonly requestId: string | null;
  /** `details` of the error body (INVALID_REQUEST lists `{ field, issue }`). */
  readonly details: unknown;
  /** The link to the code's documentation. */
  readonly docs: string | null;
  /** The answer's body as received (parsed JSON, or text when it was not JSON). */
  readonly body: unknown;
  /** The answer's headers. */
  readonly headers: Headers;

  constructor(init: {
    code: string;
    status: number;
    message: string;
    requestId?: string | null;
    details?: unknown;
    docs?: string | null;
    body?: unknown;
    headers?: Headers;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'TidingsError';
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.details = init.details;
    this.docs = init.docs ?? null;
    this.body = init.body;
    this.headers = init.headers ?? new Headers();
  }

  /** Builds the error from an HTTP answer that is not a success. */
  static fromResponse(response: Response, body: unknown): TidingsError {
    const payload = errorPayload(body);
    const requestId = payload?.requestId ?? response.headers.get('x-request-id');
    return new TidingsError({
      code: payload?.code ?? `HTTP_${response.status}`,
      status: response.status,
      message:
        payload?.message ?? `${response.status} ${response.statusText || 'error'} (no documented error body)`,
      requestId,
      details: payload?.details,
      docs: payload?.docs ?? null,
      body,
      headers: response.headers,
    });
  }
}

/** No answer arrived: the network failed or the attempt timed out (after the retries, if any). */
export class TidingsConnectionError extends TidingsError {
  constructor(message: string, cause: unknown, timedOut: boolean) {
    super({ code: timedOut ? 'TIMEOUT' : 'CONNECTION_ERROR', status: 0, message, cause });
    this.name = 'TidingsConnectionError';
  }
}

/** The documented error of a body, or null when it carries none. */
export function errorPayload(body: unknown): ErrorPayload | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'object' || error === null) return null;
  const e = error as Record<string, unknown>;
  if (typeof e.code !== 'string' || typeof e.message !== 'string') return null;
  return {
    code: e.code,
    message: e.message,
    docs: typeof e.docs === 'string' ? e.docs : undefined,
    details: e.details,
    requestId: typeof e.requestId === 'string' ? e.requestId : undefined,
  };
}
