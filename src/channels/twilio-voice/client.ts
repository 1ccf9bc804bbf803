// Twilio's Programmable Voice REST API behind VoiceAdapter: places a call (POST …/Calls.json) and
// hangs one up (POST …/Calls/{sid}.json with a Status), with an account's Account SID and Auth
// Token in HTTP basic auth. Every request ends in an outcome, never a throw: Twilio's error answers,
// unreadable answers, refusals and timeouts are classified by errors.ts. Connections come from a
// dispatcher shared by every adapter (one per channel would open a pool per tenant).
//
// The Auth Token is a secret: it travels only in the Authorization header, and nothing Twilio or the
// network says may carry it into an error, a log or an outcome (GET /Accounts/{sid}.json even
// answers with the token in its body: only the friendly name is read from it).
import { Agent, type Dispatcher } from 'undici';
import { exchangeJson, type JsonAnswer } from '../../kernel/outbound/http-answers.ts';
import type { HangUpHow, HangUpOutcome, PlaceCallRequest, PlaceOutcome, VoiceAdapter } from '../voice.ts';
import {
  type ClassifiedFailure,
  classifyAnswer,
  classifyNoAnswer,
  trimMessage,
  twilioErrorOf,
} from './errors.ts';

/** What Tidings needs to talk to one account's Twilio project. */
export interface TwilioConnection {
  /** https://api.twilio.com (no trailing slash); tests point it at the fake. */
  apiUrl: string;
  /** AC…: the account every request is made for, and the basic-auth user name. */
  accountSid: string;
  /** The basic-auth password. */
  authToken: string;
  /** Each request, headers and body together, gives up after this long. */
  timeoutMs: number;
}

export const TWILIO_API_URL = 'https://api.twilio.com';

/** The progress events a call reports, all four: the call's status machine needs each. */
const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;

/** The dispatcher adapters share: keep-alive connections to Twilio, bounded waits. */
export function createTwilioAgent(timeoutMs: number): Agent {
  return new Agent({
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 30_000,
  });
}

type Answer = JsonAnswer;

type CallResult =
  | { answered: true; answer: Answer }
  /** No answer: already classified (in doubt when the request may have reached Twilio). */
  | { answered: false; failure: ClassifiedFailure };

export class TwilioVoiceAdapter implements VoiceAdapter {
  readonly provider = 'twilio' as const;
  readonly #connection: TwilioConnection;
  readonly #dispatcher: Dispatcher;

  constructor(connection: TwilioConnection, dispatcher: Dispatcher) {
    this.#connection = connection;
    this.#dispatcher = dispatcher;
  }

  async place(call: PlaceCallRequest): Promise<PlaceOutcome> {
    // Twilio refuses a call without a caller id (21213); saying so here spares a request.
    if (!call.from) {
      return {
        kind: 'rejected',
        error: {
          code: 'PROVIDER_REJECTED',
          message: 'a Twilio call needs a From number',
          providerCode: null,
        },
      };
    }
    const form = new URLSearchParams({
      To: call.to,
      From: call.from,
      Url: call.answerUrl,
      Method: 'POST',
      StatusCallback: call.statusCallbackUrl,
      StatusCallbackMethod: 'POST',
    });
    // A list parameter is the name repeated, one value each.
    for (const event of STATUS_EVENTS) form.append('StatusCallbackEvent', event);
    form.append('Timeout', String(call.ringTimeoutSeconds));
    form.append('TimeLimit', String(call.maxDurationSeconds));
    // Synchronous detection: Twilio fetches the TwiML once it knows who answered (AnsweredBy).
    if (call.machineDetection) form.append('MachineDetection', 'Enable');

    const result = await callTwilio(this.#connection, this.#dispatcher, 'POST', this.#callsPath(), form);
    if (!result.answered) return toPlaceOutcome(result.failure);
    const { answer } = result;
    if (answer.status >= 200 && answer.status <= 299) {
      const sid = sidOf(answer.body);
      if (sid) return { kind: 'placed', providerCallId: sid };
      // Twilio took something and did not say what: the call may be ringing.
      return toPlaceOutcome(unusable(this.#connection, answer, 'without a call sid'));
    }
    return toPlaceOutcome(failed(this.#connection, answer));
  }

  /**
   * Twilio's Status=canceled ends a queued or ringing call and "will not affect calls already in
   * progress"; Status=completed ends it whatever its state. A call Twilio no longer has in progress
   * (21220) or no longer knows (404) is gone.
   */
  async hangUp(call: { callId: string; providerCallId: string }, how: HangUpHow): Promise<HangUpOutcome> {
    const path = this.#callsPath(call.providerCallId);
    const form = new URLSearchParams({ Status: how === 'cancel' ? 'canceled' : 'completed' });
    const result = await callTwilio(this.#connection, this.#dispatcher, 'POST', path, form);
    if (!result.answered) return { kind: 'failed', error: result.failure.error };
    const { answer } = result;
    if (answer.status >= 200 && answer.status <= 299) {
      const status = isRecord(answer.body) ? answer.body.status : undefined;
      // The cancel came too late: the call was answered, and Twilio left it going.
      if (how === 'cancel' && status === 'in-progress') {
        return {
          kind: 'failed',
          error: {
            code: 'PROVIDER_REJECTED',
            message: 'Twilio did not cancel the call: it is in progress (answered); complete it instead',
            providerCode: null,
          },
        };
      }
      return { kind: 'done' };
    }
    if (answer.status === 404 || twilioErrorOf(answer.body)?.code === 21220) return { kind: 'gone' };
    return { kind: 'failed', error: failed(this.#connection, answer).error };
  }

  #callsPath(callSid?: string): string {
    const calls = `${accountPath(this.#connection)}/Calls`;
    return callSid === undefined ? `${calls}.json` : `${calls}/${encodeURIComponent(callSid)}.json`;
  }
}

export type CredentialCheck =
  | { kind: 'ok'; friendlyName: string | null }
  | { kind: 'refused'; field: 'authToken' | 'accountSid' | 'from'; issue: string }
  | { kind: 'unavailable'; reason: string };

/**
 * Whether the credentials open the account and `from` is a number it may call from: the account
 * (401: the token is refused; 404: no such account), then its phone numbers, then its verified
 * caller ids (Twilio takes either as From).
 */
export async function checkTwilioCredentials(
  connection: TwilioConnection,
  dispatcher: Dispatcher,
  from: string,
): Promise<CredentialCheck> {
  const base = accountPath(connection);
  const account = read(connection, await callTwilio(connection, dispatcher, 'GET', `${base}.json`), {
    404: ['accountSid', 'is not an account Twilio knows'],
  });
  if ('check' in account) return account.check;
  const friendlyName =
    isRecord(account.body) && typeof account.body.friendly_name === 'string'
      ? account.body.friendly_name
      : null;

  // PhoneNumber is a pattern to Twilio (partial numbers, "*" as a wildcard): only an exact match
  // counts.
  const query = `?${new URLSearchParams({ PhoneNumber: from })}`;
  const lists = [
    { path: '/IncomingPhoneNumbers.json', key: 'incoming_phone_numbers' },
    { path: '/OutgoingCallerIds.json', key: 'outgoing_caller_ids' },
  ];
  for (const list of lists) {
    const found = read(
      connection,
      await callTwilio(connection, dispatcher, 'GET', `${base}${list.path}${query}`),
    );
    if ('check' in found) return found.check;
    const items = isRecord(found.body) && Array.isArray(found.body[list.key]) ? found.body[list.key] : [];
    if ((items as unknown[]).some((item) => isRecord(item) && item.phone_number === from)) {
      return { kind: 'ok', friendlyName };
    }
  }
  return { kind: 'refused', field: 'from', issue: 'is not a number of this Twilio account' };
}

/**
 * A check's answer: its body when it is a success, else what it settles: refused (401/403, or a
 * status the caller names) or unavailable (no answer, throttled, 5xx, anything else).
 */
function read(
  connection: TwilioConnection,
  result: CallResult,
  refusals: Record<number, ['accountSid' | 'from', string]> = {},
): { check: CredentialCheck } | { body: unknown } {
  if (!result.answered) return { check: { kind: 'unavailable', reason: result.failure.error.message } };
  const { status, body } = result.answer;
  if (status >= 200 && status <= 299) return { body };
  if (status === 401 || status === 403) {
    return { check: { kind: 'refused', field: 'authToken', issue: 'was refused by Twilio' } };
  }
  const named = refusals[status];
  if (named) return { check: { kind: 'refused', field: named[0], issue: named[1] } };
  return { check: { kind: 'unavailable', reason: failed(connection, result.answer).error.message } };
}

async function callTwilio(
  connection: TwilioConnection,
  dispatcher: Dispatcher,
  method: 'GET' | 'POST',
  path: string,
  form?: URLSearchParams,
): Promise<CallResult> {
  const { apiUrl, accountSid, authToken, timeoutMs } = connection;
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
    accept: 'application/json',
  };
  if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const result = await exchangeJson(`${apiUrl.replace(/\/+$/, '')}${path}`, {
    method,
    headers,
    body: form?.toString(),
    dispatcher,
    timeoutMs,
  });
  if (result.answered) return result;
  return {
    answered: false,
    failure: redacted(connection, classifyNoAnswer(result.reason, result.mayHaveArrived)),
  };
}

function accountPath(connection: TwilioConnection): string {
  return `/2010-04-01/Accounts/${encodeURIComponent(connection.accountSid)}`;
}

function failed(connection: TwilioConnection, answer: Answer): ClassifiedFailure {
  return redacted(connection, classifyAnswer(answer.status, answer.body, answer.retryAfterSeconds));
}

/** A 2xx we cannot use: classified as an answer with no Twilio error (in doubt). */
function unusable(connection: TwilioConnection, answer: Answer, what: string): ClassifiedFailure {
  const failure = classifyAnswer(answer.status, null, answer.retryAfterSeconds);
  failure.error.message = `Twilio answered HTTP ${answer.status} ${what}`;
  return redacted(connection, failure);
}

// Twilio does not echo tokens in its errors, but nothing it or the network says may carry ours.
function redacted(connection: TwilioConnection, failure: ClassifiedFailure): ClassifiedFailure {
  const token = connection.authToken;
  if (token && failure.error.message.includes(token)) {
    failure.error.message = trimMessage(failure.error.message.split(token).join('[redacted]'));
  }
  return failure;
}

function toPlaceOutcome(failure: ClassifiedFailure): PlaceOutcome {
  if (failure.kind === 'retry') {
    return failure.retryAfterSeconds === null
      ? { kind: 'retry', error: failure.error }
      : { kind: 'retry', error: failure.error, retryAfterSeconds: failure.retryAfterSeconds };
  }
  return { kind: failure.kind, error: failure.error };
}

function sidOf(body: unknown): string | null {
  return isRecord(body) && typeof body.sid === 'string' && body.sid ? body.sid : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
