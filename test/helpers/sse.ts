// A server-sent events client over fetch, as a browser's EventSource or the CLI would read a stream:
// it parses messages (id, event, data) and comment lines as they arrive on a real connection.
import { Arrivals } from './arrivals.ts';

export interface SseMessage {
  id: string | null;
  event: string | null;
  data: string;
  /** The parsed data. */
  json: any;
}

export class SseClient {
  readonly status: number;
  readonly headers: Headers;
  readonly comments: string[] = [];
  /** Set when the server ended the stream. */
  ended = false;
  readonly #arrivals = new Arrivals<SseMessage>('stream messages');
  readonly #abort: AbortController;
  readonly #reading: Promise<void>;

  get messages(): SseMessage[] {
    return this.#arrivals.items;
  }

  private constructor(response: Response, abort: AbortController) {
    this.status = response.status;
    this.headers = response.headers;
    this.#abort = abort;
    this.#reading = this.#read(response);
  }

  /** Opens the stream; answers once the response headers are in. */
  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const abort = new AbortController();
    const response = await fetch(url, {
      headers: { accept: 'text/event-stream', ...headers },
      signal: abort.signal,
    });
    return new SseClient(response, abort);
  }

  waitFor(count: number, timeoutMs = 10_000): Promise<SseMessage[]> {
    return this.#arrivals.waitFor(count, timeoutMs);
  }

  /** The id of the last message received: what EventSource sends as Last-Event-ID. */
  get lastEventId(): string | null {
    return this.messages.findLast((m) => m.id !== null)?.id ?? null;
  }

  /** Drops the connection (a client going away). */
  async close(): Promise<void> {
    this.#abort.abort();
    await this.#reading;
  }

  /** Resolves when the server ends the stream. */
  async finished(): Promise<void> {
    await this.#reading;
  }

  async #read(response: Response): Promise<void> {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          this.#block(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
      this.ended = true;
    } catch {
      // aborted by close()
    }
  }

  #block(block: string): void {
    let id: string | null = null;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) return;
    const text = data.join('\n');
    this.#arrivals.push({ id, event, data: text, json: JSON.parse(text) });
  }
}
