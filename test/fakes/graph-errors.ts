// Graph error answers as Meta writes them ({error:{message,type,code,error_subcode,error_data,
// fbtrace_id}}), shared by the fake Graph API's parts.
import { randomBytes } from 'node:crypto';
import type { GraphAnswer } from './whatsapp-cloud.ts';

// Meta's HTTP status and message for the codes tests script most, from its error-code reference.
const KNOWN_ERRORS: Record<number, [status: number, message: string]> = {
  1: [400, '(#1) An unknown error occurred'],
  2: [503, '(#2) Service temporarily unavailable'],
  4: [400, '(#4) Application request limit reached'],
  100: [400, '(#100) Invalid parameter'],
  190: [401, 'Invalid OAuth access token - Cannot parse access token'],
  368: [403, '(#368) Temporarily blocked for policies violations'],
  80007: [400, '(#80007) Rate limit issues'],
  130429: [400, '(#130429) Rate limit hit'],
  131000: [500, '(#131000) Something went wrong'],
  131008: [400, '(#131008) Required parameter is missing'],
  131009: [400, '(#131009) Parameter value is not valid'],
  131016: [500, '(#131016) Service unavailable'],
  131026: [400, '(#131026) Message Undeliverable.'],
  131030: [400, '(#131030) Recipient phone number not in allowed list'],
  131031: [403, '(#131031) Account has been locked'],
  131047: [400, '(#131047) Re-engagement message'],
  131049: [400, '(#131049) This message was not delivered to maintain healthy ecosystem engagement.'],
  131051: [400, '(#131051) Unsupported message type'],
  131056: [400, '(#131056) (Business Account, Consumer Account) pair rate limit hit'],
  132000: [400, '(#132000) Number of parameters does not match the expected number of params'],
  132001: [404, '(#132001) Template name does not exist in the translation'],
  132005: [400, '(#132005) Translated text too long'],
  132007: [400, '(#132007) Template Format Character Policy Violated'],
  132012: [400, '(#132012) Parameter format does not match format in the created template'],
  132015: [400, '(#132015) Template is Paused'],
  132016: [400, '(#132016) Template is Disabled'],
};

export interface GraphErrorOptions {
  status?: number;
  message?: string;
  /** error.error_data.details, where Meta explains the specific cause. */
  details?: string;
  /** error.error_user_msg, Meta's user-facing explanation (template creation errors carry one). */
  userMessage?: string;
  subcode?: number;
  type?: string;
  headers?: Record<string, string>;
}

/** A Graph error answer as Meta writes it: {error:{message,type,code,error_data,fbtrace_id}}. */
export function graphError(code: number, options: GraphErrorOptions = {}): GraphAnswer {
  const [status, message] = KNOWN_ERRORS[code] ?? [400, `(#${code}) Error`];
  const error: Record<string, unknown> = {
    message: options.message ?? message,
    type: options.type ?? 'OAuthException',
    code,
  };
  if (options.subcode !== undefined) error.error_subcode = options.subcode;
  if (options.userMessage !== undefined) error.error_user_msg = options.userMessage;
  if (options.details !== undefined)
    error.error_data = { messaging_product: 'whatsapp', details: options.details };
  error.fbtrace_id = `A${randomBytes(15).toString('base64url')}`;
  return { status: options.status ?? status, body: { error }, headers: options.headers };
}
