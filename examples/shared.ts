// What the examples share: a client from the environment, the contact and template each flow needs
// (found when an earlier run made them, so every example can run again and again on one account),
// polling, a local webhook receiver that verifies each delivery with the SDK, and a clear failure.
//
//   TIDINGS_URL      the server, e.g. http://localhost:3000
//   TIDINGS_API_KEY  an account key (live or sandbox scope) of an account with a channel
//   SANDBOX_KEY      a sandbox key of the same account (plays the customer; realtime-sync only)
//
// An example exits 0 only when what it shows happened (the message delivered, every recipient
// sent, …); otherwise it prints `example failed: …` and exits 1.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Tidings, TidingsError, verifyWebhook, type WebhookEvent } from '@tidings/sdk';

/** What did not happen. Thrown, so `finally` blocks still clean up; the example then exits 1. */
export class ExampleFailed extends Error {}

export function fail(reason: string): never {
  throw new ExampleFailed(reason);
}

// Whatever ends an example early (a failure above, a refused call, the server unreachable) is said
// in one line, with what the API answered rather than a stack trace, and the exit code is 1.
process.on('uncaughtException', (err) => {
  const reason =
    err instanceof TidingsError
      ? `${err.status} ${err.code}: ${err.message}${err.details ? ` ${JSON.stringify(err.details)}` : ''}`
      : err instanceof Error
        ? `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}`
        : String(err);
  process.stderr.write(`example failed: ${reason}\n`);
  process.exit(1);
});

export function env(name: string): string {
  const value = process.env[name];
  if (!value) fail(`set ${name} (see examples/README.md)`);
  return value;
}

export const tidings = new Tidings({ apiKey: env('TIDINGS_API_KEY'), baseUrl: env('TIDINGS_URL') });

/** `count` numbers from `first` on (E.164), e.g. +14155552200, +14155552201, … */
export function numbersFrom(first: string, count: number): string[] {
  if (!/^\+[1-9]\d{6,14}$/.test(first)) fail(`${first} is not a number in E.164 (e.g. +14155552200)`);
  return Array.from({ length: count }, (_, i) => `+${BigInt(first.slice(1)) + BigInt(i)}`);
}

/** Asks `probe` every half second until `done` holds; fails the example after `ms`. */
export async function poll<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) fail(`gave up waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

type ContactFields = {
  name?: string;
  tags?: string[];
  attributes?: Record<string, string | number | boolean>;
};

/**
 * The account's contact with this number, made with `fields` or brought up to date with them. A
 * phone is one contact per account, so looking it up first is what makes a second run work; the
 * 409 a create can still meet (someone made it meanwhile) names the contact that has the number.
 */
export async function contactFor(phone: string, fields: ContactFields) {
  for await (const existing of tidings.contacts.list({ phone }))
    return tidings.contacts.update(existing.id, fields);
  try {
    return await tidings.contacts.create({ phone, ...fields });
  } catch (err) {
    const details = err instanceof TidingsError && err.status === 409 ? err.details : undefined;
    const owner = Array.isArray(details) ? (details[0] as { contactId?: unknown })?.contactId : undefined;
    if (typeof owner !== 'string') throw err;
    return tidings.contacts.update(owner, fields);
  }
}

/**
 * The approved template of this name (en_US): the one an earlier run made, or created and submitted
 * now; either way its review is waited for. A template is one per name and language, so this too
 * looks before it creates.
 */
export async function approvedTemplate(name: string, text: string, examples: string[], category = 'UTILITY') {
  const find = async () => {
    for await (const t of tidings.templates.list({ name })) if (t.language === 'en_US') return t;
    return undefined;
  };
  let template: { id: string; status: string } | undefined = await find();
  if (!template) {
    try {
      template = await tidings.templates.create({
        name,
        language: 'en_US',
        category: category as 'UTILITY' | 'MARKETING',
        components: [{ type: 'BODY', text, example: { body_text: [examples] } }],
      });
    } catch (err) {
      // Made meanwhile (another run at the same time): that one is ours too.
      if (!(err instanceof TidingsError && err.status === 409)) throw err;
      template = await find();
      if (!template) throw err;
    }
  }
  if (template.status === 'DRAFT') await tidings.templates.submit(template.id).catch(alreadySubmitted);
  const id = template.id;
  const decided = await poll(
    `the review of template ${name}`,
    () => tidings.templates.get(id),
    (t) => t.status !== 'PENDING' && t.status !== 'DRAFT',
  );
  if (decided.status !== 'APPROVED')
    fail(
      `template ${name} is ${decided.status}${decided.rejectionReason ? ` (${decided.rejectionReason})` : ''}`,
    );
  return decided;
}

/** A submit that another run made first is fine: the review is waited for either way. */
function alreadySubmitted(err: unknown): void {
  if (!(err instanceof TidingsError && err.status === 409)) throw err;
}

/**
 * A webhook receiver on this machine (the server must be allowed to call it: start it with
 * WEBHOOK_ALLOWED_HOSTS=127.0.0.1), registered for `events`; every delivery is verified before it
 * counts. `close` removes the webhook again: call it in a `finally`, so a failed run leaves none.
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
    waitFor: (what: string, match: (e: WebhookEvent) => boolean, ms = 30_000) =>
      poll(what, async () => received.find(match), Boolean, ms) as Promise<WebhookEvent>,
    close: async () => {
      await tidings.webhooks.delete(hook.id);
      server.closeAllConnections();
      server.close();
    },
  };
}
