// The event-stream reader that the SDK's EventStream and the CLI's `tidings webhooks listen` share
// (src/sse.ts, not exported by the package, so read from the source): messages as the HTML
// standard's EventSource parses them, whatever the chunks the body arrives in.
import { describe, expect, it } from 'vitest';
import { readEventStream, type SseMessage } from '../src/sse.ts';

const encoder = new TextEncoder();

/** A body that delivers these chunks, one read each. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[]): Promise<{ messages: SseMessage[]; retries: number[] }> {
  const messages: SseMessage[] = [];
  const retries: number[] = [];
  for await (const m of readEventStream(body(chunks), (ms) => retries.push(ms))) messages.push(m);
  return { messages, retries };
}

/** Every way of cutting `text` in two. */
function splits(text: string): string[][] {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

const STREAM =
  ': heartbeat\r\n' +
  'retry: 1500\r\n' +
  'id: evt_1\r\nevent: message.sent\r\ndata: {"a":1}\r\n\r\n' +
  'data: first line\ndata:second line\n\n' +
  'id: evt_3\rdata\r\r' +
  'id: evt_4\n\n' +
  'data: é ✓\n\n' +
  'data: cut off';

const EXPECTED: SseMessage[] = [
  { id: 'evt_1', event: 'message.sent', data: '{"a":1}' },
  // No `id:` of its own: the stream's last id carries over; the event type does not.
  { id: 'evt_1', event: undefined, data: 'first line\nsecond line' },
  { id: 'evt_3', event: undefined, data: '' },
  // An `id:` alone moves the position.
  { id: 'evt_4', event: undefined, data: undefined },
  { id: 'evt_4', event: undefined, data: 'é ✓' },
];

describe('readEventStream', () => {
  it('reads messages, comments, ids and retry over CRLF, LF and CR line ends', async () => {
    expect(await read([STREAM])).toEqual({ messages: EXPECTED, retries: [1500] });
  });

  it('reads the same whatever the chunks: a CRLF or a character cut in two, a byte at a time', async () => {
    for (const chunks of splits(STREAM)) {
      expect(await read(chunks), JSON.stringify(chunks)).toEqual({ messages: EXPECTED, retries: [1500] });
    }
    // Byte by byte: the UTF-8 of é and ✓ cut between reads too.
    const bytes = [...encoder.encode(STREAM)];
    const messages: SseMessage[] = [];
    const byteBody = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const b of bytes) controller.enqueue(new Uint8Array([b]));
        controller.close();
      },
    });
    for await (const m of readEventStream(byteBody)) messages.push(m);
    expect(messages).toEqual(EXPECTED);
  });

  it('takes a CR that ends the body as the end of its line', async () => {
    expect((await read(['data: x\r\r'])).messages).toEqual([{ id: undefined, event: undefined, data: 'x' }]);
    expect((await read(['data: x\r'])).messages).toEqual([]);
  });

  it('ignores a retry that is not a number and fields it does not know', async () => {
    expect(await read(['retry: soon\nfoo: bar\ndata: y\n\n'])).toEqual({
      messages: [{ id: undefined, event: undefined, data: 'y' }],
      retries: [],
    });
  });

  it('cancels the body when the loop stops early', async () => {
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode('data: again\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const m of readEventStream(endless)) {
      expect(m.data).toBe('again');
      break;
    }
    expect(cancelled).toBe(true);
  });
});
