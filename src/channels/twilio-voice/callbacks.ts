// Reading Twilio-shaped voice callbacks: the status callbacks a call posts as it progresses and the
// requests for its TwiML. Both voice providers post this shape (the sandbox simulator signs and
// posts what Twilio would), so nothing here is Twilio-only but the names.
//
// - The signature (X-Twilio-Signature) is Twilio's: HMAC-SHA1, keyed with the Auth Token, of the
//   full URL followed by every form field's name and value in sorted name order, base64. Checking
//   it is left to the official `twilio` package (it also tries the URL with and without its default
//   port, as Twilio signs either); signing is written out here for the simulator, the same way.
// - A status callback is one form: CallSid, CallStatus, SequenceNumber (Twilio's order of the
//   events: they may arrive out of it, or twice), Timestamp (RFC 2822), CallDuration with the end,
//   AnsweredBy when machine detection was asked, ErrorCode and SipResponseCode when Twilio says.
import { createHmac } from 'node:crypto';
import twilio from 'twilio';
import type {
  AnsweredBy,
  FormParams,
  TwilioCallStatus,
  VoiceCallbackReader,
  VoiceStatusReport,
} from '../voice.ts';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Whether `signature` is Twilio's for a POST of `params` to `url` (as Twilio was given it). */
export function verifyTwilioSignature(
  authToken: string,
  signature: string | undefined,
  url: string,
  params: FormParams,
): boolean {
  if (!signature || !authToken) return false;
  try {
    return twilio.validateRequest(authToken, signature, url, params);
  } catch {
    // A URL the package cannot parse was not one Twilio signed.
    return false;
  }
}

/**
 * Twilio's signature of a POST of `params` to `url`. A repeated field counts each distinct value
 * once, in sorted order, as Twilio's own libraries compute it.
 */
export function signTwilioRequest(authToken: string, url: string, params: FormParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name]!;
    const values = Array.isArray(value) ? [...new Set(value)].sort() : [value];
    for (const v of values) data += name + v;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

const STATUSES: readonly TwilioCallStatus[] = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'no-answer',
  'failed',
  'canceled',
];

export type { AnsweredBy };
/** One status callback, read. */
export type StatusReport = VoiceStatusReport;

/**
 * Twilio's AnsweredBy as ours: `human`; every `machine_*` (answered by a machine; the end variants
 * say whether its greeting ended in a beep, silence or otherwise) and `fax` are a machine;
 * `unknown` (detection gave up), or a value Twilio may add later, is unknown. Absent: null.
 */
export function mapAnsweredBy(value: string | undefined | null): AnsweredBy | null {
  if (value === undefined || value === null || value === '') return null;
  if (value === 'human') return 'human';
  if (value === 'fax' || value.startsWith('machine_')) return 'machine';
  return 'unknown';
}

/** A status callback's form, read; null when it names no call or no status Twilio has. */
export function parseStatusCallback(params: FormParams, now: Date): StatusReport | null {
  const callSid = field(params, 'CallSid');
  const status = field(params, 'CallStatus') as TwilioCallStatus | undefined;
  if (!callSid || !status || !STATUSES.includes(status)) return null;
  const timestamp = field(params, 'Timestamp');
  const parsed = timestamp ? Date.parse(timestamp) : Number.NaN;
  return {
    callSid,
    status,
    sequenceNumber: whole(field(params, 'SequenceNumber')),
    durationSeconds: whole(field(params, 'CallDuration')),
    answeredBy: mapAnsweredBy(field(params, 'AnsweredBy')),
    at: Number.isNaN(parsed) ? now : new Date(parsed),
    errorCode: field(params, 'ErrorCode') || null,
    sipResponseCode: whole(field(params, 'SipResponseCode')),
  };
}

/** A field's value (the first, when it came more than once), trimmed. */
function field(params: FormParams, name: string): string | undefined {
  const value = params[name];
  return (Array.isArray(value) ? value[0] : value)?.trim();
}

function whole(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

/** Twilio-shaped voice callbacks (Twilio's, and the sandbox simulator's) behind the voice seam. */
export const twilioVoiceCallbacks: VoiceCallbackReader = {
  signatureHeader: TWILIO_SIGNATURE_HEADER,
  verify: verifyTwilioSignature,
  parseStatus: parseStatusCallback,
  answeredBy: (params) => mapAnsweredBy(field(params, 'AnsweredBy')),
};
