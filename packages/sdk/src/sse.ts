// Reading a server-sent events body (text/event-stream) as the HTML standard's EventSource does:
// lines end with CRLF, LF or CR; `field: value` lines (`id`, `event`, `data`, `retry`), `:` starts a
// comment, a blank line ends a message. The stream's last event id carries over from message to
// message until an `id:` changes it. The one reader of both the SDK's EventStream and the CLI's
// `tidings webhooks listen`, so it uses web APIs only.

/** One message of an event stream. */
export interface SseMessage {
  /** The stream's last event id (where a reconnection resumes): this message's `id:`, else an earlier one. */
  id: string | undefined;
  /** The message's `event:` type, when it names one. */
  event: string | undefined;
  /** The `data:` lines joined with newlines; undefined when it had none (an `id:` alone, a new position). */
  data: string | undefined;
}

/**
 * The messages of an event-stream body as they arrive: each one that has data or sets an id,
 * yielded before the next is read; `retry:` (the milliseconds to wait before reconnecting) goes to
 * `onRetry`. Ends with the body (a message the body cuts off is dropped); the body is cancelled
 * when the loop over it stops early.
 */
export async function* readEventStream(
  body: ReadableStream<Uint8Array>,
  onRetry?: (ms: number) => void,
): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let id: string | undefined;
  let event: string | undefined;
  let data: string | undefined;
  let idSet = false;
  /** Takes one line; answers the message a blank line ends, if it is one to hand over. */
  const line = (text: string): SseMessage | null => {
    if (text === '') {
      const message = data !== undefined || idSet ? { id, event, data } : null;
      event = undefined;
      data = undefined;
      idSet = false;
      return message;
    }
    if (text.startsWith(':')) return null;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const raw = colon < 0 ? '' : text.slice(colon + 1);
    const value = raw.startsWith(' ') ? raw.slice(1) : raw;
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'id') {
      id = value;
      idSet = true;
    } else if (field === 'event') event = value;
    else if (field === 'retry' && /^\d+$/.test(value)) onRetry?.(Number(value));
    return null;
  };
  let buffer = '';
  /** Takes the lines the buffer holds whole; at the end of the body, a CR last in it ends one too. */
  function* whole(end: boolean): Generator<string> {
    for (let at = buffer.search(/[\r\n]/); at >= 0; at = buffer.search(/[\r\n]/)) {
      // A CR last in what has arrived may be the first half of a CRLF: wait for what follows.
      if (!end && buffer[at] === '\r' && at === buffer.length - 1) return;
      const text = buffer.slice(0, at);
      buffer = buffer.slice(buffer[at] === '\r' && buffer[at + 1] === '\n' ? at + 2 : at + 1);
      yield text;
    }
  }
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      for (const text of whole(done)) {
        const message = line(text);
        if (message) yield message;
      }
      // What is left then is a message the body cut off.
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
