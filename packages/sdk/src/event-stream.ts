// The account's events as they happen, over GET /events/stream (server-sent events): an async
// iterable that parses the stream, remembers the last event id, and after a dropped connection (a
// network failure, a server restart) reconnects with `Last-Event-ID`, so the server sends exactly
// what was missed. Ends when the caller breaks out of the loop, aborts its signal or calls close();
// a refusal (bad key, bad filter) is thrown as a TidingsError, not retried.
import { TidingsError } from './errors.ts';
import type { Transport } from './http.ts';
import { RETRYABLE_STATUSES } from './retry.ts';
import { readEventStream } from './sse.ts';
import type { WebhookEvent } from './types.ts';

const STREAM = '/api/v1/public/events/stream';

export interface EventStreamOptions {
  /** Comma-separated filters (`message.*,contact.created`); all events when left out. */
  types?: string;
  /** Start after this event id (or at this date-time) instead of now. */
  since?: string;
  /** Reconnect after a dropped connection (default true). */
  reconnect?: boolean;
  signal?: AbortSignal;
}

export class EventStream implements AsyncIterable<WebhookEvent> {
  readonly #t: Transport;
  readonly #options: EventStreamOptions;
  readonly #closer = new AbortController();
  #lastEventId: string | undefined;
  #retryMs = 2000;

  constructor(transport: Transport, options: EventStreamOptions = {}) {
    this.#t = transport;
    this.#options = options;
  }

  /** The id of the last event received: where a new stream would resume. */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  close(): void {
    this.#closer.abort();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WebhookEvent> {
    const signal = this.#options.signal
      ? AbortSignal.any([this.#options.signal, this.#closer.signal])
      : this.#closer.signal;
    let failures = 0;
    while (!signal.aborted) {
      let response: Response;
      try {
        response = await this.#t.open(STREAM, {
          accept: 'text/event-stream',
          query: {
            types: this.#options.types,
            since: this.#lastEventId === undefined ? this.#options.since : undefined,
          },
          headers: this.#lastEventId === undefined ? {} : { 'last-event-id': this.#lastEventId },
          signal,
        });
        if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
          await response.body?.cancel().catch(() => {});
          throw new TypeError(`Tidings: ${STREAM} did not answer an event stream`);
        }
      } catch (err) {
        if (signal.aborted) return;
        const retryable =
          err instanceof TidingsError && (err.status === 0 || RETRYABLE_STATUSES.has(err.status));
        if (!retryable || this.#options.reconnect === false) throw err;
        const retryAfter = err.headers?.get('retry-after') ?? null;
        await this.#t.wait(this.#t.delay(failures++, retryAfter), signal).catch(() => {});
        continue;
      }
      failures = 0;
      try {
        // No body reads as one that ended at once: reconnect below.
        const onRetry = (ms: number) => {
          this.#retryMs = ms;
        };
        const messages = response.body ? readEventStream(response.body, onRetry) : [];
        for await (const message of messages) {
          if (message.id) this.#lastEventId = message.id;
          if (!message.data) continue;
          yield JSON.parse(message.data) as WebhookEvent;
        }
      } catch {
        // The connection dropped: reconnect below.
      }
      if (signal.aborted || this.#options.reconnect === false) return;
      await this.#t.wait(this.#retryMs, signal).catch(() => {});
    }
  }
}
