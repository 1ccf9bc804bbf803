import { type Dispatcher, request } from 'undici';

// Reading the answers of outbound HTTP calls (webhook deliveries, provider APIs) the same way:
// never more than READ_LIMIT_BYTES of a body, Retry-After in seconds, and a failure described in
// one line that says what happened without any secret of the request.

/** More than this of an answer is not read; the connection is dropped instead. */
export const READ_LIMIT_BYTES = 64 * 1024;

/**
 * The body, up to READ_LIMIT_BYTES. A body that fails half-way (a timeout, a reset) throws, unless
 * `keepPartial`: then what arrived is the answer.
 */
export async function readLimited(
  body: AsyncIterable<Buffer>,
  options: { keepPartial?: boolean } = {},
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    // Leaving the loop early destroys the body, so an oversized answer closes its connection.
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= READ_LIMIT_BYTES) break;
    }
  } catch (err) {
    if (!options.keepPartial) throw err;
  }
  return Buffer.concat(chunks).subarray(0, READ_LIMIT_BYTES);
}

/** Retry-After as seconds: a whole number, or an HTTP date (then the seconds until it). */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Why an undici request got no answer: a timeout, or the error's code and message. */
export function describeRequestFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return `connection timed out after ${timeoutMs} ms`;
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const code = e.code ?? cause?.code;
  const message = e.message || cause?.message;
  return [code, message].filter(Boolean).join(': ') || 'request failed';
}

/** Failures that happen before a request's first byte leaves: the other side cannot have it. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether a request that got no answer may still have reached the other side: anything but a
 * failure to connect (a timeout waiting for the answer, a connection lost mid-exchange) may have.
 */
export function mayHaveArrived(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return !NOT_SENT.has(e.code ?? '') && !NOT_SENT.has(e.cause?.code ?? '');
}

/** A provider API's answer, as its clients read it. */
export interface JsonAnswer {
  status: number;
  /** The parsed JSON body, or null when it was empty, cut off or not JSON. */
  body: unknown;
  retryAfterSeconds: number | null;
}

export type Exchange =
  | { answered: true; answer: JsonAnswer }
  /** `mayHaveArrived`: the request may have reached the provider (only a failure to connect rules it out). */
  | { answered: false; reason: string; mayHaveArrived: boolean };

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * One request to a provider's JSON API, with one deadline for the whole exchange (body included),
 * the answer read up to READ_LIMIT_BYTES: its status, its JSON body and its Retry-After; or why no
 * answer came, and whether the request may have arrived all the same.
 */
export async function exchangeJson(
  url: string,
  options: {
    method: string;
    headers: Record<string, string>;
    body?: string | Buffer;
    dispatcher: Dispatcher;
    timeoutMs: number;
  },
): Promise<Exchange> {
  const { timeoutMs } = options;
  try {
    const res = await request(url, {
      method: options.method as 'GET',
      headers: options.headers,
      body: options.body,
      dispatcher: options.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = (await readLimited(res.body)).toString('utf8');
    const retryAfter = res.headers['retry-after'];
    return {
      answered: true,
      answer: {
        status: res.statusCode,
        body: parseJson(text),
        retryAfterSeconds: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
      },
    };
  } catch (err) {
    return {
      answered: false,
      reason: describeRequestFailure(err, timeoutMs),
      mayHaveArrived: mayHaveArrived(err),
    };
  }
}

const MESSAGE_LIMIT = 500;

/** A provider's error message as stored and shown: at most 500 characters. */
export function trimMessage(message: string): string {
  return message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT - 1)}…` : message;
}
