// The closed catalogue of error codes (docs/errors.md). Code throws ApiError with one of these;
// the error handler (error-handler.ts) is the only place that writes an error body.

export const ERROR_CATALOGUE = {
  INVALID_REQUEST: { status: 400, message: 'The request is invalid.' },
  INVALID_API_KEY: { status: 401, message: 'The API key is missing, unknown, revoked or expired.' },
  INVALID_BOOTSTRAP_TOKEN: { status: 401, message: 'The bootstrap token is missing or wrong.' },
  INVALID_CREDENTIALS: { status: 401, message: 'The email or password is wrong.' },
  INVALID_SESSION: {
    status: 401,
    message: 'The console session is missing, expired or signed out: sign in again.',
  },
  INVALID_SIGNATURE: {
    status: 401,
    message: "The provider callback's signature is missing or does not match.",
  },
  PLAN_UPGRADE_REQUIRED: { status: 402, message: "The account's plan does not include this feature." },
  INSUFFICIENT_BALANCE: { status: 402, message: 'The wallet balance cannot pay for this.' },
  FORBIDDEN: { status: 403, message: 'This key may not do this.' },
  ACCOUNT_SUSPENDED: { status: 403, message: 'The account is suspended or closed.' },
  RESOURCE_NOT_FOUND: { status: 404, message: 'The resource does not exist.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    message: 'This path does not take this method; the Allow header lists those it takes.',
  },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state.' },
  ALREADY_BOOTSTRAPPED: { status: 409, message: 'This installation has already been bootstrapped.' },
  IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    message: 'A request with this Idempotency-Key is still in progress.',
  },
  MEDIA_GONE: { status: 410, message: 'The file is no longer kept, here or by the provider.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'Send the body as JSON with Content-Type: application/json.',
  },
  CSW_VIOLATION: {
    status: 422,
    message:
      'Free-form messages may only be sent within 24 hours of the last inbound message; use a template.',
  },
  TEMPLATE_NOT_APPROVED: { status: 422, message: 'The template is not approved.' },
  CONTACT_OPTED_OUT: {
    status: 422,
    message:
      'The contact has stopped marketing messages on WhatsApp: a MARKETING template may not be sent to them.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different request body.',
  },
  RATE_LIMITED: { status: 429, message: 'Rate limit exceeded.' },
  QUOTA_EXCEEDED: { status: 429, message: 'The monthly API call quota is used up.' },
  INTERNAL_ERROR: { status: 500, message: 'Something went wrong on our side.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is temporarily unavailable; retry later.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldIssue {
  field: string;
  issue: string;
}

/**
 * An answer lists at most this many `details`, and `detailsOmitted` counts the rest: a body of
 * 10,000 wrong values gets an answer of a few KB, not a list of 10,000.
 */
export const MAX_DETAILS = 50;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  /** How many details were left out of `details` (MAX_DETAILS); undefined when none was. */
  readonly detailsOmitted?: number;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message?: string,
    options: { details?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message ?? ERROR_CATALOGUE[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    const listed = options.details;
    if (Array.isArray(listed) && listed.length > MAX_DETAILS) {
      this.details = listed.slice(0, MAX_DETAILS);
      this.detailsOmitted = listed.length - MAX_DETAILS;
    } else this.details = listed;
    this.headers = options.headers ?? {};
  }
}

export function notFound(what = 'resource'): ApiError {
  return new ApiError('RESOURCE_NOT_FOUND', `No such ${what}.`);
}

/** INVALID_REQUEST listing each fault; the message names those `details` lists and counts the rest. */
export function invalidRequest(issues: FieldIssue[]): ApiError {
  const listed = issues.slice(0, MAX_DETAILS).map((d) => `${d.field} ${d.issue}`);
  const rest = issues.length - listed.length;
  const summary = rest > 0 ? `${listed.join('; ')}; and ${rest} more` : listed.join('; ');
  return new ApiError('INVALID_REQUEST', `Invalid request: ${summary}.`, { details: issues });
}

export function invalid(field: string, issue: string): ApiError {
  return new ApiError('INVALID_REQUEST', `${field}: ${issue}`, { details: [{ field, issue }] });
}

export function conflict(message: string, details?: unknown): ApiError {
  return new ApiError('CONFLICT', message, { details });
}
