// What the API answers when Meta refuses a step of Embedded Signup (embedded-signup.ts). Every
// answer names the step and carries Meta's code, subcode and message, so that whoever reads it
// (the client in the console, the partner's support) knows what to do next without Meta's
// reference at hand. Rows are read top to bottom; the first match wins.
//   Meta unreachable, 5xx, throttled          503 SERVICE_UNAVAILABLE (the onboarding resumes)
//   exchange_code: the app's id or secret     409 CONFLICT (the partner's app is misconfigured)
//   exchange_code: the code (expired, used,   400 on `code` (run the popup again)
//     another app's)
//   subscribe_app: the WABA out of reach      400 on `wabaId`
//   register_number: a PIN set elsewhere,     409 CONFLICT on `phoneNumberId` (the number is
//     another provider's, Meta's limits         someone else's, or must wait)
//   register_number, read_number: the number  400 on `phoneNumberId`
//     out of reach
//   anything else Meta refuses                409 CONFLICT naming the step
import type { GraphFailure } from '../../channels/whatsapp-cloud/onboarding.ts';
import { ApiError, conflict, invalid } from '../../kernel/http/errors.ts';

export const STEP_NAMES = [
  'exchange_code',
  'find_number',
  'subscribe_app',
  'register_number',
  'read_number',
  'save_channel',
] as const;

export type Step = (typeof STEP_NAMES)[number];

/** Meta's code as the messages quote it: 100/33, 133005, or "no Graph error". */
function metaCodeOf(f: GraphFailure): string {
  if (f.metaCode === null) return f.status === null ? 'no answer' : `HTTP ${f.status}`;
  return f.metaSubcode === null ? String(f.metaCode) : `${f.metaCode}/${f.metaSubcode}`;
}

const said = (step: Step, f: GraphFailure) => `Meta refused step ${step} (${metaCodeOf(f)}): ${f.message}`;

const isCode = (f: GraphFailure, ...codes: number[]) => f.metaCode !== null && codes.includes(f.metaCode);
/** The token may not use the object, or the object is not there: Meta does not say which. */
const outOfReach = (f: GraphFailure) =>
  (f.metaCode === 100 && f.metaSubcode === 33) ||
  isCode(f, 10, 190) ||
  (f.metaCode !== null && f.metaCode >= 200 && f.metaCode <= 299);

// Registration refusals that say the number is not free to be registered here: two-step
// verification with another PIN (133005), Meta's registration limits (133016: too many attempts;
// 133015: deleted recently, wait), and "the number is already registered elsewhere" family
// (133000 incomplete deregistration, 133009 too fast, 133004 server unavailable aside).
const NOT_FREE = [133000, 133005, 133006, 133008, 133009, 133015, 133016];

export function refusalOf(step: Step, f: GraphFailure): ApiError {
  if (f.retry) {
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      `Meta could not complete step ${step} now (${metaCodeOf(f)}): ${f.message}. Nothing is lost: send the same request again, or wait, it resumes by itself.`,
      { headers: { 'retry-after': String(f.retryAfterSeconds ?? 30) } },
    );
  }
  if (step === 'exchange_code') {
    // 1 (client secret), 101 (application id): the partner's app, not the client's code.
    if (isCode(f, 1, 101))
      return conflict(
        `${said(step, f)}. The partner's Meta app id or secret is wrong: set them again with PUT /partner/whatsapp-app.`,
      );
    return invalid(
      'code',
      `${said(step, f)}. A code is good once and for a few minutes: run Embedded Signup again for a new one.`,
    );
  }
  if (step === 'find_number')
    return invalid('wabaId', `${said(step, f)}. The WhatsApp Business Account's numbers could not be read.`);
  if (step === 'subscribe_app' && outOfReach(f))
    return invalid(
      'wabaId',
      `${said(step, f)}. The business token cannot reach this WhatsApp Business Account.`,
    );
  if (step === 'register_number' && isCode(f, ...NOT_FREE))
    return conflict(`${said(step, f)}.`, [
      {
        field: 'phoneNumberId',
        issue:
          f.metaCode === 133005
            ? 'has two-step verification with another PIN (registered with another provider): turn two-step verification off in WhatsApp Manager, then connect again'
            : 'cannot be registered now: see the message',
      },
    ]);
  if ((step === 'register_number' || step === 'read_number') && outOfReach(f))
    return invalid('phoneNumberId', `${said(step, f)}. The business token cannot reach this number.`);
  return conflict(`${said(step, f)}.`);
}

/** The number is another account's channel. */
export function takenBy(): ApiError {
  return conflict('This WhatsApp number is the channel of another account.', [
    { field: 'phoneNumberId', issue: 'is the channel of another account' },
  ]);
}
