// Retries, backoff and idempotency, against a live server with a fetch wrapper that plays the
// network's failures: an answer lost after the server acted, a 503 or 429 with Retry-After, a
// connection refused, a hung request. A POST's Idempotency-Key is the same on every attempt, so the
// server acts once. Waits go through an injected sleep that records them (one test waits for real).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Tidings, TidingsConnectionError, TidingsError } from '@tidings/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey, provision } from '../../../test/helpers/client.ts';
import { useTestApp } from '../../../test/helpers/setup.ts';

const env = useTestApp();
let baseUrl: string;
let apiKey: string;
let accountId: string;

beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
  accountId = (await provision(env.app, env.partner.partnerKey)).accountId;
  apiKey = (await createAccountKey(env.app, env.partner.partnerKey, accountId)).apiKey;
});

let nextPhone = 3000;
const newPhone = () => `+1415555${nextPhone++}`;

interface Attempt {
  method: string;
  url: string;
  idempotencyKey: string | null;
}

/**
 * A client whose fetch answers attempt n with `script(n)`: 'pass' goes to the server, 'lose' goes
 * to the server and then fails as if the answer never came, a Response is answered instead.
 */
function scripted(script: (n: number) => 'pass' | 'lose' | Response, options: Record<string, unknown> = {}) {
  const attempts: Attempt[] = [];
  const sleeps: number[] = [];
  const client = new Tidings({
    apiKey,
    baseUrl,
    backoff: {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
    ...options,
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      attempts.push({
        method: init?.method ?? 'GET',
        url: String(input),
        idempotencyKey: headers.get('idempotency-key'),
      });
      const step = script(attempts.length - 1);
      if (step instanceof Response) return step;
      const res = await fetch(input, init);
      if (step === 'lose') {
        await res.arrayBuffer();
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      return res;
    },
  });
  return { client, attempts, sleeps };
}

const unavailable = (headers: Record<string, string> = {}, status = 503) =>
  new Response(
    JSON.stringify({
      error: {
        code: status === 429 ? 'RATE_LIMITED' : 'SERVICE_UNAVAILABLE',
        message: 'Busy.',
        requestId: 'req_fake',
      },
    }),
    { status, headers: { 'content-type': 'application/json', ...headers } },
  );

async function contactsWithPhone(phone: string) {
  const client = new Tidings({ apiKey, baseUrl });
  return (await client.contacts.list({ phone }).page()).data;
}

describe('idempotency', () => {
  it('an answer lost after the server acted: the retry carries the same key and the contact is made once', async () => {
    const phone = newPhone();
    const { client, attempts } = scripted((n) => (n === 0 ? 'lose' : 'pass'));
    const contact = await client.contacts.create({ phone, name: 'Once' });
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(attempts[1]!.idempotencyKey).toBe(attempts[0]!.idempotencyKey);
    const stored = await contactsWithPhone(phone);
    expect(stored.map((c) => c.id)).toEqual([contact.id]);
  });

  it('each call gets its own key; a key given by the caller is used as is', async () => {
    const { client, attempts } = scripted(() => 'pass');
    const phone = newPhone();
    const first = await client.contacts.create({ phone }, { idempotencyKey: `sdk-test-${phone}` });
    const again = await client.contacts.create({ phone }, { idempotencyKey: `sdk-test-${phone}` });
    expect(again.id).toBe(first.id);
    await client.contacts.create({ phone: newPhone() });
    await client.contacts.create({ phone: newPhone() });
    expect(attempts.map((a) => a.idempotencyKey)).toEqual([
      `sdk-test-${phone}`,
      `sdk-test-${phone}`,
      expect.any(String),
      expect.any(String),
    ]);
    expect(attempts[2]!.idempotencyKey).not.toBe(attempts[3]!.idempotencyKey);
  });

  it('no key on a GET', async () => {
    const { client, attempts } = scripted(() => 'pass');
    await client.account.get();
    expect(attempts[0]!.idempotencyKey).toBeNull();
  });
});

describe('retries', () => {
  it('a 503 with Retry-After in seconds: waits that long, then the same POST goes through once', async () => {
    const phone = newPhone();
    const { client, attempts, sleeps } = scripted((n) =>
      n === 0 ? unavailable({ 'retry-after': '2' }) : 'pass',
    );
    const contact = await client.contacts.create({ phone });
    expect(sleeps).toEqual([2000]);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.idempotencyKey).toBe(attempts[0]!.idempotencyKey);
    expect((await contactsWithPhone(phone)).map((c) => c.id)).toEqual([contact.id]);
  });

  it('a 429 with Retry-After as an HTTP date waits until then', async () => {
    const at = new Date(Math.ceil((Date.now() + 5000) / 1000) * 1000);
    const { client, sleeps } = scripted((n) =>
      n === 0 ? unavailable({ 'retry-after': at.toUTCString() }, 429) : 'pass',
    );
    await client.account.get();
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(3000);
    expect(sleeps[0]).toBeLessThanOrEqual(6000);
  });

  it('without Retry-After: exponential backoff with full jitter (502, 504)', async () => {
    const { client, sleeps } = scripted(
      (n) => (n === 0 ? unavailable({}, 502) : n === 1 ? unavailable({}, 504) : 'pass'),
      {
        maxRetries: 3,
        backoff: { baseDelayMs: 100, random: () => 0.5, sleep: async (ms: number) => void sleeps.push(ms) },
      },
    );
    await client.account.get();
    // Half of each ceiling: 100·2⁰, then 100·2¹.
    expect(sleeps).toEqual([50, 100]);
  });

  it('gives up after maxRetries with the last answer as a TidingsError', async () => {
    const { client, attempts, sleeps } = scripted(() => unavailable());
    const err = (await client.account.get().catch((e: unknown) => e)) as TidingsError;
    expect(err).toBeInstanceOf(TidingsError);
    expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, requestId: 'req_fake' });
    expect(attempts).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    for (const [i, ms] of sleeps.entries()) expect(ms).toBeLessThan(500 * 2 ** i);
  });

  it('never retries another 4xx (409, 422)', async () => {
    const phone = newPhone();
    const { client, attempts } = scripted(() => 'pass');
    await client.contacts.create({ phone });
    await expect(client.contacts.create({ phone })).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(attempts).toHaveLength(2);
  });

  it('a refused connection is retried, then a TidingsConnectionError', async () => {
    const sleeps: number[] = [];
    let attempts = 0;
    const client = new Tidings({
      apiKey,
      baseUrl: 'http://127.0.0.1:1',
      maxRetries: 1,
      backoff: { sleep: async (ms) => void sleeps.push(ms) },
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const err = await client.account.get().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TidingsConnectionError);
    expect(err).toMatchObject({ code: 'CONNECTION_ERROR', status: 0 });
    expect(attempts).toBe(2);
    expect(sleeps).toHaveLength(1);
  });

  it('a hung attempt times out and is retried', async () => {
    const { client, attempts } = scripted(() => 'pass', {
      timeoutMs: 100,
      maxRetries: 1,
      fetch: undefined,
    });
    const hanging = new Tidings({
      ...client.options,
      fetch: (_input, init) =>
        new Promise<Response>((_, reject) => {
          attempts.push({ method: 'GET', url: '', idempotencyKey: null });
          init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
        }),
    });
    await expect(hanging.account.get()).rejects.toMatchObject({ code: 'TIMEOUT', status: 0 });
    expect(attempts).toHaveLength(2);
  });

  it("the caller's abort ends the call at once, without retries", async () => {
    const controller = new AbortController();
    const { client, attempts, sleeps } = scripted(() => unavailable({ 'retry-after': '30' }), {
      backoff: {
        sleep: (ms: number, signal?: AbortSignal) =>
          new Promise<void>((_, reject) => {
            sleeps.push(ms);
            signal?.addEventListener('abort', () => reject(signal.reason));
            controller.abort(new Error('user gave up'));
          }),
      },
    });
    await expect(client.account.get({ signal: controller.signal })).rejects.toThrow('user gave up');
    expect(attempts).toHaveLength(1);
    expect(sleeps).toEqual([30_000]);
  });

  it('really waits what Retry-After says', async () => {
    let n = 0;
    const client = new Tidings({
      apiKey,
      baseUrl,
      fetch: (input, init) =>
        n++ === 0 ? Promise.resolve(unavailable({ 'retry-after': '1' })) : fetch(input, init),
    });
    const started = performance.now();
    await client.account.get();
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(n).toBe(2);
  });
});

describe('the built package', () => {
  // dist/ is plain JavaScript: it runs on the system's Node (20 on CI machines) without TypeScript.
  const nodes = [process.execPath, ...(existsSync('/usr/bin/node') ? ['/usr/bin/node'] : [])];
  for (const node of nodes) {
    it(`imports and calls the server from plain JS (${node})`, async () => {
      const script = `
        import { Tidings } from '@tidings/sdk';
        const t = new Tidings({ apiKey: process.env.KEY, baseUrl: process.env.BASE });
        const account = await t.account.get();
        process.stdout.write(account.accountId + ' ' + process.version);`;
      // Asynchronously: the server answering it runs in this process.
      const { stdout } = await promisify(execFile)(node, ['--input-type=module', '-e', script], {
        env: { ...process.env, KEY: apiKey, BASE: baseUrl },
        encoding: 'utf8',
      });
      expect(stdout.split(' ')[0]).toBe(accountId);
    });
  }
});
