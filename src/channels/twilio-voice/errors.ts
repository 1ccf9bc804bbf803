// How a failed Twilio REST call becomes a Tidings outcome. Twilio's error answers are JSON
// `{code, message, more_info, status}`; its `code` says what went wrong more precisely than the HTTP
// status (most refusals are a plain 400), so the table looks at Twilio's code first and falls back
// to the HTTP status for codes it does not know. The first matching row wins (provider-errors.ts).
//
// Three outcomes, as a call needs them (voice.ts): `rejected` (for good), `retry` (Twilio certainly
// did not take it: throttled, down, unreachable before the request left) and `in_doubt` (the request
// went out and no usable answer came back: Twilio may be ringing the person, so never place it again).
import { trimMessage } from '../../kernel/outbound/http-answers.ts';
import { anything, coded, http, httpRange, lostAnswer, notSent, ProviderErrors } from '../provider-errors.ts';
import type { ProviderError } from '../types.ts';

export type TwilioVoiceErrorCode =
  | 'INVALID_NUMBER'
  | 'NUMBER_BLOCKED'
  | 'CHANNEL_UNAUTHORIZED'
  | 'PROVIDER_THROTTLED'
  | 'PROVIDER_UNAVAILABLE'
  | 'PROVIDER_UNKNOWN_OUTCOME'
  | 'PROVIDER_REJECTED';

export type FailureKind = 'rejected' | 'retry' | 'in_doubt';

/**
 * Twilio's codes for a number that cannot be called as written: invalid 'To' (21211), cannot be
 * reached (21214), does not appear valid (21217), and the <Dial> errors a failed call may report in
 * its callback: invalid format (13223), not a number Twilio can call (13224).
 */
export const INVALID_NUMBER_CODES: readonly number[] = [21211, 21214, 21217, 13223, 13224];

/**
 * Twilio's codes for a number the account may not call: blocked by Twilio (21216), outside the
 * account's geographic permissions (21215, and 13227 from <Dial>), unsubscribed (21610, Twilio's
 * messaging opt-out, which an account may also see for its numbers).
 */
export const NUMBER_BLOCKED_CODES: readonly number[] = [21216, 21215, 13227, 21610];

/** Every Tidings code this table gives, with its outcome and when: what docs list. */
export const TWILIO_VOICE_ERRORS: readonly { code: TwilioVoiceErrorCode; kind: FailureKind; when: string }[] =
  [
    { code: 'INVALID_NUMBER', kind: 'rejected', when: `Twilio codes ${INVALID_NUMBER_CODES.join(', ')}` },
    { code: 'NUMBER_BLOCKED', kind: 'rejected', when: `Twilio codes ${NUMBER_BLOCKED_CODES.join(', ')}` },
    { code: 'CHANNEL_UNAUTHORIZED', kind: 'rejected', when: 'Twilio code 20003, HTTP 401 or 403' },
    { code: 'PROVIDER_THROTTLED', kind: 'retry', when: 'Twilio code 20429 or HTTP 429 (Retry-After kept)' },
    { code: 'PROVIDER_UNAVAILABLE', kind: 'retry', when: 'HTTP 503, or Twilio unreachable before sending' },
    {
      code: 'PROVIDER_UNKNOWN_OUTCOME',
      kind: 'in_doubt',
      when: 'HTTP 5xx but 503; a timeout or a connection lost once the request may have arrived; a success without a sid',
    },
    { code: 'PROVIDER_REJECTED', kind: 'rejected', when: 'any other 4xx' },
  ];

/** A failed call as far as the table needs it: no status means no answer came. */
export interface Failure {
  status: number | null;
  twilioCode: number | null;
  /** With no answer: whether the request may still have reached Twilio (mayHaveArrived). */
  mayHaveArrived?: boolean;
}

// biome-ignore format: one rule a line, so the table reads top to bottom
const TABLE = new ProviderErrors<{ code: TwilioVoiceErrorCode; kind: FailureKind }>([
  // Nothing came back. Refused, DNS, connect timeout: Twilio cannot have it. Anything later (a
  // timeout waiting for the answer, a reset mid-exchange) may have placed the call.
  { match: notSent, code: 'PROVIDER_UNAVAILABLE', kind: 'retry' },
  { match: lostAnswer, code: 'PROVIDER_UNKNOWN_OUTCOME', kind: 'in_doubt' },
  { match: coded(...INVALID_NUMBER_CODES), code: 'INVALID_NUMBER', kind: 'rejected' },
  { match: coded(...NUMBER_BLOCKED_CODES), code: 'NUMBER_BLOCKED', kind: 'rejected' },
  // Wrong Account SID / Auth Token (20003); a 20404 that comes as a 401 is an account the
  // credentials cannot see.
  { match: coded(20003), code: 'CHANNEL_UNAUTHORIZED', kind: 'rejected' },
  { match: (f) => f.code === 20404 && f.status === 401, code: 'CHANNEL_UNAUTHORIZED', kind: 'rejected' },
  // "An API Request that receives an error 429 response is never processed and is always safe to
  // retry" (Twilio's page for 20429).
  { match: coded(20429), code: 'PROVIDER_THROTTLED', kind: 'retry' },
  { match: http(401, 403), code: 'CHANNEL_UNAUTHORIZED', kind: 'rejected' },
  { match: http(429), code: 'PROVIDER_THROTTLED', kind: 'retry' },
  // 503: Twilio did not take the request; any other 5xx (a 500, a gateway's 502 or 504) may come
  // after Twilio acted on it, and a call placed twice rings a person twice: in doubt.
  { match: http(503), code: 'PROVIDER_UNAVAILABLE', kind: 'retry' },
  { match: httpRange(500, 599), code: 'PROVIDER_UNKNOWN_OUTCOME', kind: 'in_doubt' },
  { match: httpRange(400, 499), code: 'PROVIDER_REJECTED', kind: 'rejected' },
  // A success we cannot use (no sid) or an answer Twilio never gives (a 3xx): the request reached
  // something that may have acted on it, so it is not sent again.
  { match: anything, code: 'PROVIDER_UNKNOWN_OUTCOME', kind: 'in_doubt' },
]);

export function classify(failure: Failure): { code: TwilioVoiceErrorCode; kind: FailureKind } {
  return TABLE.classify({
    status: failure.status,
    code: failure.twilioCode,
    mayHaveArrived: failure.mayHaveArrived,
  });
}

/**
 * The Tidings code for one of Twilio's codes on its own: a failed call's callback reports an
 * ErrorCode (13224, 21216, …) with no HTTP status. Null for a code the table does not know.
 */
export function codeForTwilioCode(twilioCode: number): TwilioVoiceErrorCode | null {
  return TABLE.codeOf(twilioCode);
}

export { trimMessage };

/** A failure classified, with what the outcome reports. */
export interface ClassifiedFailure {
  error: ProviderError;
  kind: FailureKind;
  retryAfterSeconds: number | null;
}

/** Twilio's error out of a response body: its numeric code and message, when the body is one. */
export function twilioErrorOf(body: unknown): { code: number | null; message: string } | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { code, message } = body as Record<string, unknown>;
  const numeric = typeof code === 'number' ? code : typeof code === 'string' ? Number(code) : Number.NaN;
  if (Number.isNaN(numeric) && typeof message !== 'string') return null;
  return {
    code: Number.isInteger(numeric) ? numeric : null,
    message: typeof message === 'string' ? message.trim() : '',
  };
}

/** Classifies an HTTP answer that was not a usable success (an error, or a 2xx without a sid). */
export function classifyAnswer(
  status: number,
  body: unknown,
  retryAfterSeconds: number | null,
): ClassifiedFailure {
  const error = twilioErrorOf(body);
  const twilioCode = error?.code ?? null;
  const { code, kind } = classify({ status, twilioCode });
  return {
    error: {
      code,
      message: trimMessage(error?.message || `Twilio answered HTTP ${status}`),
      providerCode: twilioCode,
    },
    kind,
    retryAfterSeconds: kind === 'retry' ? retryAfterSeconds : null,
  };
}

/** Classifies a request that got no answer (`reason` says why: refused, timed out, …). */
export function classifyNoAnswer(reason: string, arrived: boolean): ClassifiedFailure {
  const { code, kind } = classify({ status: null, twilioCode: null, mayHaveArrived: arrived });
  const what = arrived ? 'no answer came from Twilio' : 'Twilio could not be reached';
  return {
    error: { code, message: trimMessage(`${what}: ${reason}`), providerCode: null },
    kind,
    retryAfterSeconds: null,
  };
}
