// A real HTTP server on loopback that plays a webhook receiver: it records every request and
// answers as the test tells it (status, headers, body, delay), so delivery behaviour is observed
// over the wire, not through our own code.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Arrivals } from './arrivals.ts';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  json: any;
  at: number;
}

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (a slow receiver). */
  delayMs?: number;
  /** Answer only once this settles (an answer held until the test lets it go). */
  until?: Promise<unknown>;
}

/** How the receiver answers the n-th request (0-based) it gets. */
export type Responder = (request: Received, n: number) => Answer;

export class Receiver {
  /** Every request, in the order it arrived. */
  get received(): Received[] {
    return this.#arrivals.items;
  }
  /** TCP connections accepted: a refused delivery must not even connect. */
  connections = 0;
  respond: Responder;
  readonly #server: Server;
  readonly #arrivals = new Arrivals<Received>('requests');

  private constructor(server: Server, respond: Responder) {
    this.#server = server;
    this.respond = respond;
  }

  static async start(respond: Responder = () => ({ status: 204 })): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server, respond);
    server.on('connection', () => {
      receiver.connections++;
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = JSON.parse(body);
        } catch {
          // not JSON; the test looks at body
        }
        const received: Received = { path: req.url ?? '/', headers: req.headers, body, json, at: Date.now() };
        const n = receiver.received.length;
        receiver.#arrivals.push(received);
        const answer = receiver.respond(received, n);
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status ?? 204, answer.headers ?? {});
          res.end(answer.body ?? '');
        };
        if (answer.until) void answer.until.finally(send);
        else if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
        else send();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves once `count` requests have arrived in all; rejects after timeoutMs. */
  waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    return this.#arrivals.waitFor(count, timeoutMs);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
  }
}

/**
 * Verifies a received request with the `standardwebhooks` package, as a receiver would; returns
 * the verified payload or throws.
 */
export function verifySignature(secret: string, received: Received): unknown {
  const headers = {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(received.body, headers);
}
