// One Graph API call for the account-level endpoints (onboarding, the business profile, uploads):
// its answer read as a success or as what Meta said, never a throw. Meta's error code and subcode
// are kept as they came (the callers map them to answers step by step), the retry decision is
// errors.ts's, and every secret the call carried is cut out of the message before it goes anywhere.
import type { Dispatcher } from 'undici';
import { exchangeJson } from '../../kernel/outbound/http-answers.ts';
import { classify, describeMetaError, graphErrorOf, trimMessage } from './errors.ts';

/** Meta refused or could not be asked: what it said, and whether asking again may help. */
export interface GraphFailure {
  ok: false;
  /** Meta's `error.code` and `error_subcode`; null when no Graph error came back. */
  metaCode: number | null;
  metaSubcode: number | null;
  /** HTTP status; null when no answer came. */
  status: number | null;
  message: string;
  retry: boolean;
  retryAfterSeconds: number | null;
  /** No answer came, and the request may have reached Meta all the same. */
  lost?: boolean;
}

export type GraphResult<T> = ({ ok: true } & T) | GraphFailure;

export interface GraphEndpoint {
  graphUrl: string;
  timeoutMs: number;
  dispatcher: Dispatcher;
}

export interface GraphRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Sent as `Authorization: Bearer …` unless `headers` sets the header itself. */
  accessToken: string | null;
  /** What must never reach a message: the token, an app secret, a code. */
  secrets: string[];
  json?: unknown;
  /** A raw body instead of JSON (an upload's bytes), with its own headers. */
  bytes?: Buffer;
  headers?: Record<string, string>;
}

export async function graphCall(
  endpoint: GraphEndpoint,
  request: GraphRequest,
): Promise<{ ok: true; status: number; body: unknown } | GraphFailure> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (request.accessToken) headers.authorization = `Bearer ${request.accessToken}`;
  if (request.json !== undefined) headers['content-type'] = 'application/json';
  Object.assign(headers, request.headers);
  const exchange = await exchangeJson(`${endpoint.graphUrl}${request.path}`, {
    method: request.method,
    headers,
    body: request.bytes ?? (request.json === undefined ? undefined : JSON.stringify(request.json)),
    dispatcher: endpoint.dispatcher,
    timeoutMs: endpoint.timeoutMs,
  });
  if (!exchange.answered) {
    return redacted(
      {
        ok: false,
        metaCode: null,
        metaSubcode: null,
        status: null,
        message: `the WhatsApp Cloud API could not be reached: ${exchange.reason}`,
        retry: true,
        retryAfterSeconds: null,
        lost: exchange.mayHaveArrived,
      },
      request.secrets,
    );
  }
  const { answer } = exchange;
  if (answer.status >= 200 && answer.status <= 299)
    return { ok: true, status: answer.status, body: answer.body };
  const error = graphErrorOf(answer.body);
  const metaCode = error && typeof error.code === 'number' ? error.code : null;
  const metaSubcode = error && typeof error.error_subcode === 'number' ? error.error_subcode : null;
  const described = error ? describeMetaError(error) : '';
  return redacted(
    {
      ok: false,
      metaCode,
      metaSubcode,
      status: answer.status,
      message: described || `the WhatsApp Cloud API answered HTTP ${answer.status}`,
      retry: classify({ status: answer.status, metaCode, metaSubcode }).retry,
      retryAfterSeconds: answer.retryAfterSeconds,
    },
    request.secrets,
  );
}

/** A 2xx we cannot use: Meta may have done it, so it is asked again (each caller's step is safe to repeat). */
export function unreadable(status: number, what: string): GraphFailure {
  return {
    ok: false,
    metaCode: null,
    metaSubcode: null,
    status,
    message: `the WhatsApp Cloud API answered HTTP ${status} ${what}`,
    retry: true,
    retryAfterSeconds: null,
  };
}

// Meta does not echo secrets, but nothing it or the network says may carry ours into storage.
function redacted(failure: GraphFailure, secrets: string[]): GraphFailure {
  let message = failure.message;
  for (const secret of secrets) if (secret) message = message.split(secret).join('[redacted]');
  return { ...failure, message: trimMessage(message) };
}
