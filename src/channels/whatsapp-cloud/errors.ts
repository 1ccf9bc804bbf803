// How a failed Graph API call becomes a Tidings outcome. Meta asks integrators to decide on the
// error `code` rather than the HTTP status (several codes come with a status that says little, and
// 190 has come as 400 as well as 401), so the table below looks at Meta's code first and falls back
// to the HTTP status only for codes it does not know. The first matching row wins (provider-errors.ts).
import { trimMessage } from '../../kernel/outbound/http-answers.ts';
import {
  anything,
  coded,
  codedRange,
  codedSub,
  http,
  httpRange,
  noAnswer,
  ProviderErrors,
} from '../provider-errors.ts';
import type { ProviderError, SendOutcome, SubmitOutcome } from '../types.ts';
import { isRecord } from './json.ts';

export type WhatsAppErrorCode =
  | 'CHANNEL_UNAUTHORIZED'
  | 'RECIPIENT_UNREACHABLE'
  | 'OUTSIDE_SERVICE_WINDOW'
  | 'TEMPLATE_NOT_USABLE'
  | 'MESSAGE_NOT_SUPPORTED'
  | 'ACCOUNT_RESTRICTED'
  | 'PROVIDER_THROTTLED'
  | 'PROVIDER_UNAVAILABLE'
  | 'PROVIDER_REJECTED';

/** A failed call as far as the table needs it: no status means no answer came (refused, timed out). */
export interface Failure {
  status: number | null;
  metaCode: number | null;
  metaSubcode?: number | null;
}

// biome-ignore format: one rule a line, so the table reads top to bottom
const TABLE = new ProviderErrors<{ code: WhatsAppErrorCode; retry: boolean }>([
  // Nothing came back: connection refused or reset, DNS, timeouts.
  { match: noAnswer, code: 'PROVIDER_UNAVAILABLE', retry: true },
  // The token is invalid or expired (190), or lacks a permission (0, 3, 10, 200-299, 131005).
  { match: coded(190, 0, 3, 10, 131005), code: 'CHANNEL_UNAUTHORIZED', retry: false },
  { match: codedRange(200, 299), code: 'CHANNEL_UNAUTHORIZED', retry: false },
  // "Object with ID … does not exist, cannot be loaded due to missing permissions": the phone
  // number or account id is wrong, or the token may not use it; Meta does not say which.
  { match: codedSub(100, 33), code: 'CHANNEL_UNAUTHORIZED', retry: false },
  // The number cannot get this message: not on WhatsApp / old client (131026), not in a test
  // number's allowed list (131030), Meta's per-user marketing limit (131049), opted out of
  // marketing (131050), part of a Meta experiment (130472).
  { match: coded(131026, 131030, 131049, 131050, 130472), code: 'RECIPIENT_UNREACHABLE', retry: false },
  // More than 24 hours since the customer last wrote: only a template may be sent.
  { match: coded(131047), code: 'OUTSIDE_SERVICE_WINDOW', retry: false },
  // The template cannot be used as sent: parameter count (132000), unknown name/language (132001),
  // text too long once filled (132005), format policy (132007), parameter format (132012),
  // paused (132015) or disabled (132016) for low quality.
  { match: coded(132000, 132001, 132005, 132007, 132012, 132015, 132016), code: 'TEMPLATE_NOT_USABLE', retry: false },
  // Meta does not take the message as built: invalid parameter (100), required parameter missing
  // (131008), parameter value invalid (131009), unsupported message type (131051), a message a
  // business-scoped user id cannot receive (131062: one-tap, zero-tap and copy-code authentication
  // templates need a number).
  { match: coded(100, 131008, 131009, 131051, 131062), code: 'MESSAGE_NOT_SUPPORTED', retry: false },
  // The business account is blocked for a policy violation (368), locked (131031) or barred from
  // the recipient's country (130497).
  { match: coded(368, 131031, 130497), code: 'ACCOUNT_RESTRICTED', retry: false },
  // Rate limits: app (4), WABA (80007), number throughput (130429), same-recipient pair (131056).
  { match: coded(4, 80007, 130429, 131056), code: 'PROVIDER_THROTTLED', retry: true },
  // Meta's own trouble: unknown (1), service down or overloaded (2), something went wrong
  // (131000), service unavailable (131016), number in maintenance mode (131057).
  { match: coded(1, 2, 131000, 131016, 131057), code: 'PROVIDER_UNAVAILABLE', retry: true },
  // Codes the table does not know: by HTTP status.
  { match: http(401, 403), code: 'CHANNEL_UNAUTHORIZED', retry: false },
  { match: http(429), code: 'PROVIDER_THROTTLED', retry: true },
  { match: httpRange(500, 599), code: 'PROVIDER_UNAVAILABLE', retry: true },
  { match: httpRange(400, 499), code: 'PROVIDER_REJECTED', retry: false },
  // Anything else (a 3xx, a 2xx without the expected body) is an answer we cannot read: try again.
  { match: anything, code: 'PROVIDER_UNAVAILABLE', retry: true },
]);

export function classify(failure: Failure): { code: WhatsAppErrorCode; retry: boolean } {
  return TABLE.classify({ status: failure.status, code: failure.metaCode, subcode: failure.metaSubcode });
}

/** The Tidings code for one of Meta's codes on its own (a failed status webhook has no HTTP status). */
export function codeForMetaCode(metaCode: number): WhatsAppErrorCode | null {
  return TABLE.codeOf(metaCode);
}

export { trimMessage };

/** A failure classified, with what the outcome reports. */
export interface ClassifiedFailure {
  error: ProviderError;
  retry: boolean;
  retryAfterSeconds: number | null;
}

/** Meta's `error` object out of a response body, if the body is a Graph error. */
export function graphErrorOf(body: unknown): Record<string, unknown> | null {
  return isRecord(body) && isRecord(body.error) ? body.error : null;
}

/** Meta's text for an error: its message, then the detail Meta adds (details or the user message). */
export function describeMetaError(error: Record<string, unknown>): string {
  const message = typeof error.message === 'string' ? error.message.trim() : '';
  const data = isRecord(error.error_data) ? error.error_data : {};
  const extra =
    typeof error.error_user_msg === 'string'
      ? error.error_user_msg
      : typeof data.details === 'string'
        ? data.details
        : '';
  if (!extra || message.includes(extra)) return message;
  return message ? `${message}: ${extra}` : extra;
}

/** Classifies an HTTP answer that was not a success. */
export function classifyAnswer(
  status: number,
  body: unknown,
  retryAfterSeconds: number | null,
): ClassifiedFailure {
  const error = graphErrorOf(body);
  const metaCode = error && typeof error.code === 'number' ? error.code : null;
  const metaSubcode = error && typeof error.error_subcode === 'number' ? error.error_subcode : null;
  const { code, retry } = classify({ status, metaCode, metaSubcode });
  const described = error ? describeMetaError(error) : '';
  return {
    error: {
      code,
      message: trimMessage(described || `the WhatsApp Cloud API answered HTTP ${status}`),
      providerCode: metaCode,
    },
    retry,
    retryAfterSeconds,
  };
}

/** Classifies a request that got no answer (`reason` says why: refused, timed out, …). */
export function classifyNoAnswer(reason: string): ClassifiedFailure {
  const { code, retry } = classify({ status: null, metaCode: null });
  return {
    error: {
      code,
      message: trimMessage(`the WhatsApp Cloud API could not be reached: ${reason}`),
      providerCode: null,
    },
    retry,
    retryAfterSeconds: null,
  };
}

export function toSendOutcome(failure: ClassifiedFailure): SendOutcome {
  if (!failure.retry) return { kind: 'rejected', error: failure.error };
  return failure.retryAfterSeconds === null
    ? { kind: 'retry', error: failure.error }
    : { kind: 'retry', error: failure.error, retryAfterSeconds: failure.retryAfterSeconds };
}

export function toSubmitOutcome(failure: ClassifiedFailure): SubmitOutcome {
  return failure.retry ? { kind: 'retry', error: failure.error } : { kind: 'rejected', error: failure.error };
}
