// The WhatsApp Cloud API's media endpoints, for one business's number and token:
//   POST /{phone-number-id}/media   multipart (messaging_product=whatsapp, type, file) → {id};
//   GET /{media-id}                 → {url, mime_type, sha256, file_size, id} (the url lives 5 minutes);
//   GET <that url>                  with the same bearer token → the bytes;
//   DELETE /{media-id}              → {success: true}.
// Like client.ts, every call ends in an answer, never a throw, and the token travels only in the
// Authorization header: it never reaches an error message.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { type Dispatcher, request } from 'undici';
import { type Exchange, exchangeJson } from '../../kernel/outbound/http-answers.ts';
import type { ProviderError } from '../types.ts';
import type { WhatsAppConnection } from './connection.ts';
import {
  type ClassifiedFailure,
  classifyAnswer,
  classifyNoAnswer,
  graphErrorOf,
  trimMessage,
} from './errors.ts';
import { isRecord } from './json.ts';

export type MediaFailure = { ok: false; error: ProviderError; retry: boolean };

export type UploadAnswer = { ok: true; id: string } | MediaFailure;

export type MediaInfoAnswer =
  | { ok: true; url: string; mimeType: string | null; sha256: string | null; fileSize: number | null }
  /** Meta no longer has it (unknown id: expired, deleted, or never this token's). */
  | { ok: false; gone: true; error: ProviderError; retry: false }
  | (MediaFailure & { gone?: false });

export type DownloadAnswer =
  | { ok: true; mimeType: string | null; body: AsyncIterable<Buffer> }
  | (MediaFailure & { gone?: boolean });

/** The file to upload, in the chunks it is kept in. */
export interface UploadFile {
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>;
  sizeBytes: number;
  mimeType: string;
  filename: string;
}

export class WhatsAppMedia {
  readonly #connection: WhatsAppConnection;
  readonly #dispatcher: Dispatcher;
  /** Uploads and downloads may take longer than a message send; bodies up to 100 MB. */
  readonly #transferTimeoutMs: number;

  constructor(connection: WhatsAppConnection, dispatcher: Dispatcher) {
    this.#connection = connection;
    this.#dispatcher = dispatcher;
    this.#transferTimeoutMs = Math.max(connection.timeoutMs, 120_000);
  }

  async upload(file: UploadFile): Promise<UploadAnswer> {
    const boundary = `tidings-${randomBytes(12).toString('hex')}`;
    const field = (name: string, value: string) =>
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    const head = Buffer.concat([
      field('messaging_product', 'whatsapp'),
      field('type', file.mimeType),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(file.filename)}"\r\n` +
          `Content-Type: ${file.mimeType}\r\n\r\n`,
      ),
    ]);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    async function* body() {
      yield head;
      for await (const chunk of file.chunks) yield chunk;
      yield tail;
    }
    const path = `/${encodeURIComponent(this.#connection.phoneNumberId)}/media`;
    let status: number;
    let answer: unknown;
    let retryAfter: number | null = null;
    try {
      const res = await request(`${this.#connection.graphUrl}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#connection.accessToken}`,
          accept: 'application/json',
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(head.length + file.sizeBytes + tail.length),
        },
        body: Readable.from(body(), { objectMode: false }),
        dispatcher: this.#dispatcher,
        headersTimeout: this.#transferTimeoutMs,
        bodyTimeout: this.#transferTimeoutMs,
        signal: AbortSignal.timeout(this.#transferTimeoutMs),
      });
      status = res.statusCode;
      const text = await res.body.text();
      answer = text ? safeJson(text) : null;
      const ra = res.headers['retry-after'];
      retryAfter = typeof ra === 'string' && /^\d+$/.test(ra) ? Number(ra) : null;
    } catch (err) {
      return this.#failure(classifyNoAnswer(describe(err)));
    }
    if (status < 200 || status > 299) return this.#failure(classifyAnswer(status, answer, retryAfter));
    const id = isRecord(answer) && (typeof answer.id === 'string' || typeof answer.id === 'number');
    if (!id) {
      const failure = classifyAnswer(status, null, retryAfter);
      failure.error.message = `the WhatsApp Cloud API answered HTTP ${status} without a media id`;
      return this.#failure(failure);
    }
    return { ok: true, id: String((answer as { id: string | number }).id) };
  }

  async info(mediaId: string): Promise<MediaInfoAnswer> {
    const query = new URLSearchParams({ phone_number_id: this.#connection.phoneNumberId });
    const result = await this.#json('GET', `/${encodeURIComponent(mediaId)}?${query}`);
    if (!result.answered) return this.#failure(classifyNoAnswer(result.reason));
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) {
      if (isUnknownObject(answer.status, answer.body)) {
        return {
          ok: false,
          gone: true,
          retry: false,
          error: this.#failure(classifyAnswer(answer.status, answer.body, null)).error,
        };
      }
      return this.#failure(classifyAnswer(answer.status, answer.body, answer.retryAfterSeconds));
    }
    const body = isRecord(answer.body) ? answer.body : {};
    if (typeof body.url !== 'string' || !body.url) {
      const failure = classifyAnswer(answer.status, null, null);
      failure.error.message = `the WhatsApp Cloud API answered HTTP ${answer.status} without the media's url`;
      return this.#failure(failure);
    }
    const size = Number(body.file_size);
    return {
      ok: true,
      url: body.url,
      mimeType: typeof body.mime_type === 'string' ? body.mime_type : null,
      sha256: typeof body.sha256 === 'string' ? body.sha256 : null,
      fileSize: Number.isFinite(size) && size >= 0 ? size : null,
    };
  }

  /** The bytes behind a media URL from info(), streamed; the caller reads or destroys the body. */
  async download(url: string): Promise<DownloadAnswer> {
    // The token goes with the request: only to an https URL (Meta's lookaside host), or to the
    // Graph API's own origin (a local stand-in for it).
    if (!this.#mayCarryToken(url)) {
      return {
        ok: false,
        retry: false,
        error: {
          code: 'PROVIDER_REJECTED',
          message: 'the WhatsApp Cloud API named a media URL that is neither https nor its own',
          providerCode: null,
        },
      };
    }
    try {
      const res = await request(url, {
        method: 'GET',
        headers: { authorization: `Bearer ${this.#connection.accessToken}` },
        dispatcher: this.#dispatcher,
        headersTimeout: this.#transferTimeoutMs,
        bodyTimeout: this.#transferTimeoutMs,
        signal: AbortSignal.timeout(this.#transferTimeoutMs),
      });
      if (res.statusCode < 200 || res.statusCode > 299) {
        const text = await res.body.text().catch(() => '');
        const body = text ? safeJson(text) : null;
        const failure = this.#failure(classifyAnswer(res.statusCode, body, null));
        // The URL lives five minutes: a 404 there means ask for a new one (or Meta dropped the file).
        return { ...failure, gone: res.statusCode === 404 || res.statusCode === 410 };
      }
      const type = res.headers['content-type'];
      return { ok: true, mimeType: typeof type === 'string' ? type : null, body: res.body };
    } catch (err) {
      return this.#failure(classifyNoAnswer(describe(err)));
    }
  }

  /** Deletes Meta's copy; true when Meta no longer has it (deleted now, or before). */
  async remove(mediaId: string): Promise<boolean> {
    const query = new URLSearchParams({ phone_number_id: this.#connection.phoneNumberId });
    const result = await this.#json('DELETE', `/${encodeURIComponent(mediaId)}?${query}`);
    if (!result.answered) return false;
    const { answer } = result;
    return (answer.status >= 200 && answer.status <= 299) || isUnknownObject(answer.status, answer.body);
  }

  #mayCarryToken(url: string): boolean {
    try {
      const target = new URL(url);
      return target.protocol === 'https:' || target.origin === new URL(this.#connection.graphUrl).origin;
    } catch {
      return false;
    }
  }

  #json(method: 'GET' | 'DELETE', path: string): Promise<Exchange> {
    const { graphUrl, accessToken, timeoutMs } = this.#connection;
    return exchangeJson(`${graphUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      dispatcher: this.#dispatcher,
      timeoutMs,
    });
  }

  #failure(failure: ClassifiedFailure): MediaFailure {
    const token = this.#connection.accessToken;
    let message = failure.error.message;
    if (token && message.includes(token)) message = trimMessage(message.split(token).join('[redacted]'));
    return { ok: false, error: { ...failure.error, message }, retry: failure.retry };
  }
}

/** Meta's answer for an id it does not have: code 100 subcode 33, or a plain 404. */
function isUnknownObject(status: number, body: unknown): boolean {
  const error = graphErrorOf(body);
  return status === 404 || (error?.code === 100 && error.error_subcode === 33);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT')
    return 'timed out';
  return [e.code, e.message].filter(Boolean).join(': ') || 'request failed';
}

/** A filename inside a quoted multipart header: no quotes, backslashes or line breaks. */
function quoted(name: string): string {
  return name.replace(/["\\\r\n]/g, '_');
}
