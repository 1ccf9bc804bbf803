// What the examples share: a client from the environment, waiting for a template's review, polling,
// and a local webhook receiver that verifies each delivery with the SDK.
//
//   TIDINGS_URL     the server, e.g. http://localhost:3000
//   TIDINGS_API_KEY      an account key (live or sandbox scope) of an account with a channel
//   SANDBOX_KEY  a sandbox key of the same account (plays the customer; realtime-sync only)
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Tidings, verifyWebhook, type WebhookEvent } from '@tidings/sdk';

export function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name} (see examples/README.md)`);
  return value;
}

export const tidings = new Tidings({ apiKey: env('TIDINGS_API_KEY'), baseUrl: env('TIDINGS_URL') });

/** Asks `probe` every half second until `done` holds (or gives up after `ms`). */
export async function poll<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The approved template of this name, created and submitted for review when the account has none. */
export async function approvedTemplate(name: string, text: string, examples: string[], category = 'UTILITY') {
  for await (const t of tidings.templates.list({ name })) if (t.status === 'APPROVED') return t;
  const created = await tidings.templates.create({
    name,
    language: 'en_US',
    category: category as 'UTILITY' | 'MARKETING',
    components: [{ type: 'BODY', text, example: { body_text: [examples] } }],
  });
  await tidings.templates.submit(created.id);
  const decided = await poll(
    () => tidings.templates.get(created.id),
    (t) => t.status !== 'PENDING',
  );
  if (decided.status !== 'APPROVED') throw new Error(`template ${name} was ${decided.status}`);
  return decided;
}

/**
 * A webhook receiver on this machine (the server must be allowed to call it: WEBHOOK_ALLOWED_HOSTS
 * on a self-hosted server), registered for `events`; every delivery is verified before it counts.
 */
export async function listen(events: string[]) {
  const received: WebhookEvent[] = [];
  let secret = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      try {
        received.push(verifyWebhook(body, req.headers, secret));
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const hook = await tidings.webhooks.create({ url, events });
  secret = hook.secret;
  return {
    received,
    /** Waits until an event satisfying `match` has arrived. */
    waitFor: (match: (e: WebhookEvent) => boolean, ms = 30_000) =>
      poll(async () => received.find(match), Boolean, ms) as Promise<WebhookEvent>,
    close: async () => {
      await tidings.webhooks.delete(hook.id);
      server.closeAllConnections();
      server.close();
    },
  };
}
