// Reading a server-sent events stream from a fetch response: messages as they arrive, parsed as the
// EventSource specification says (fields `id`, `event`, `data`, `retry`; `:` starts a comment).
export interface SseMessage {
  id: string | null;
  event: string | null;
  data: string;
}

export interface SseHandlers {
  message: (message: SseMessage) => Promise<void>;
  /** The server's `retry:` (milliseconds to wait before reconnecting). */
  retry?: (ms: number) => void;
}

/** Reads the body until it ends; each message is handled (awaited) before the next is read. */
export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event: string | null = null;
  let data: string[] = [];
  const line = async (text: string) => {
    if (text === '') {
      if (data.length > 0) await handlers.message({ id, event, data: data.join('\n') });
      event = null;
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) handlers.retry?.(Number(value));
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      await line(text.endsWith('\r') ? text.slice(0, -1) : text);
    }
  }
}
