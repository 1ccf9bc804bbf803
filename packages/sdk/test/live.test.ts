// The SDK against a live server on a real port (the built package, as a user imports it): a partner
// provisions an account and acts on it with forAccount, a customer writes in through the sandbox and
// a message is sent and read back, lists are iterated across pages, errors arrive as TidingsErrors,
// and a real webhook delivery is verified (and a tampered one refused).
import { Tidings, TidingsError, verifyWebhook, WebhookVerificationError } from '@tidings/sdk';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { eventually, INSTANT_SANDBOX, useMessagingApp } from '../../../test/helpers/messaging.ts';

const env = useMessagingApp();
let baseUrl: string;
let partner: Tidings;
/** The account's own live key; `sandboxKey` plays the customer. */
let live: Tidings;
let sandboxKey: string;
let accountId: string;

let nextPhone = 2000;
const newPhone = () => `+1415555${nextPhone++}`;

beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
  partner = new Tidings({ apiKey: env.partner.partnerKey, baseUrl });
  const account = await partner.partner.accounts.create({
    accountName: 'SDK test',
    countryCode: 'US',
    planCode: 'scale',
    externalRef: `sdk-${Date.now()}`,
  });
  accountId = account.accountId;
  const key = await partner.partner.accounts.createKey(accountId, { name: 'sdk', scope: 'live' });
  const sandbox = await partner.partner.accounts.createKey(accountId, { name: 'customer', scope: 'sandbox' });
  sandboxKey = sandbox.apiKey;
  live = new Tidings({ apiKey: key.apiKey, baseUrl });
});

describe('forAccount', () => {
  it('acts on one account with a partner key (X-Account-Id)', async () => {
    const acting = partner.forAccount(accountId);
    const channel = await acting.account.setChannel({ provider: 'sandbox', sandbox: INSTANT_SANDBOX });
    expect(channel.provider).toBe('sandbox');
    const account = await acting.account.get();
    expect(account.accountId).toBe(accountId);
    // The partner client itself is unchanged: without an account, an account endpoint is refused.
    const refused = await partner.account.get().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TidingsError);
    expect((refused as TidingsError).status).toBe(400);
  });
});

describe('messages', () => {
  it('sends a sandbox message after the customer writes, and reads it back delivered', async () => {
    const phone = newPhone();
    const customer = new Tidings({ apiKey: sandboxKey, baseUrl });
    const inbound = await customer.sandbox.inboundMessage({ from: phone, text: 'Hi, are you open?' });
    expect(inbound.direction).toBe('inbound');

    const sent = await live.messages.send({ to: phone, type: 'text', text: 'Yes, until 6 pm.' });
    expectTypeOf(sent.id).toEqualTypeOf<string>();
    expect(sent.status).toBe('queued');
    const read = await eventually(
      () => live.messages.get(sent.id),
      (m) => m.status === 'read',
    );
    expect(read).toMatchObject({ id: sent.id, to: phone, text: 'Yes, until 6 pm.', status: 'read' });
    const listed = await live.messages.list({ to: phone, direction: 'outbound' }).page();
    expect(listed.data.map((m) => m.id)).toEqual([sent.id]);
  });
});

describe('events', () => {
  it('streams a send’s events as they happen, resumes after the last one, and lists them', async () => {
    const phone = newPhone();
    const customer = new Tidings({ apiKey: sandboxKey, baseUrl });
    await customer.sandbox.inboundMessage({ from: phone, text: 'Hello' });
    // From a moment before the send: what happened since is replayed, the rest comes live.
    const stream = live.events.stream({ types: 'message.*', since: new Date().toISOString() });
    const sentId = (await live.messages.send({ to: phone, type: 'text', text: 'Hi back' })).id;
    const seen: { id: string; type: string }[] = [];
    for await (const event of stream) {
      if ((event.data as { id?: string }).id !== sentId) continue;
      seen.push({ id: event.id, type: event.type });
      if (event.type === 'message.read') break;
    }
    expect(seen.map((e) => e.type)).toEqual(['message.sent', 'message.delivered', 'message.read']);
    expect(stream.lastEventId).toBeDefined();

    // Resumed after the last event read: the next one (a contact made meanwhile) comes first.
    const contact = await live.contacts.create({ phone: newPhone(), name: 'Late' });
    const resumed = live.events.stream({ since: stream.lastEventId, types: 'contact.*' });
    for await (const event of resumed) {
      expect(event.type).toBe('contact.created');
      expect((event.data as { id: string }).id).toBe(contact.id);
      break;
    }
    const listed = await live.events.list({ type: 'message.*', limit: 100 }).toArray(100);
    expect(seen.every((e) => listed.some((l) => l.id === e.id))).toBe(true);
    expect((await live.events.get(seen[0]!.id)).type).toBe('message.sent');
  });
});

describe('media', () => {
  it('uploads a file as multipart and reads the same bytes back as a Blob', async () => {
    const bytes = new Uint8Array(2048);
    bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    for (let i = 8; i < bytes.length; i++) bytes[i] = (i * 7) % 256;
    const uploaded = await live.media.upload(new Blob([bytes], { type: 'image/png' }), {
      filename: 'dot.png',
    });
    expect(uploaded).toMatchObject({
      kind: 'image',
      mimeType: 'image/png',
      sizeBytes: 2048,
      filename: 'dot.png',
    });
    expect((await live.media.get(uploaded.id)).id).toBe(uploaded.id);
    const content = await live.media.content(uploaded.id);
    expect(content).toBeInstanceOf(Blob);
    expect(content.type).toBe('image/png');
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes);
  });
});

describe('pages', () => {
  it('iterates a list across pages, one request per page, and gives the first page alone', async () => {
    const tag = `page-${Date.now()}`;
    const made: string[] = [];
    for (let i = 0; i < 7; i++)
      made.push((await live.contacts.create({ phone: newPhone(), tags: [tag] })).id);

    const pagesAsked: string[] = [];
    const counting = new Tidings({
      ...live.options,
      fetch: (input, init) => {
        pagesAsked.push(String(input));
        return fetch(input, init);
      },
    });
    const seen: string[] = [];
    for await (const contact of counting.contacts.list({ tag: [tag], limit: 3 })) {
      expectTypeOf(contact.phone).toEqualTypeOf<string | null>();
      seen.push(contact.id);
    }
    // Newest first, every one once, in three pages (3 + 3 + 1).
    expect(seen).toEqual([...made].reverse());
    expect(pagesAsked).toHaveLength(3);
    expect(pagesAsked[1]).toContain('cursor=');

    const first = await live.contacts.list({ tag: [tag], limit: 3 }).page();
    expect(first.data).toHaveLength(3);
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = await live.contacts.list({ tag: [tag], limit: 3, cursor: first.nextCursor! }).toArray();
    expect(rest.map((c) => c.id)).toEqual(seen.slice(3));
  });
});

describe('errors', () => {
  it('a 404 is a TidingsError with the code, status, message and request id', async () => {
    const err = await live.contacts.get('ctc_01jv4e2k7qf3x8m2n5p6r9s0tb').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TidingsError);
    const e = err as TidingsError;
    expect(e).toMatchObject({ code: 'RESOURCE_NOT_FOUND', status: 404, name: 'TidingsError' });
    expect(e.message).toMatch(/contact/i);
    expect(e.requestId).toMatch(/^req_/);
    expect(e.requestId).toBe(e.headers.get('x-request-id'));
    expect(e.body).toEqual({
      error: expect.objectContaining({ code: 'RESOURCE_NOT_FOUND', requestId: e.requestId }),
    });
  });

  it('a 400 carries the failing fields in details, and is not retried', async () => {
    let attempts = 0;
    const client = new Tidings({
      ...live.options,
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const err = (await client.contacts
      .create({ phone: 'not a phone' })
      .catch((e: unknown) => e)) as TidingsError;
    expect(err).toBeInstanceOf(TidingsError);
    expect(err.code).toBe('INVALID_REQUEST');
    expect(err.status).toBe(400);
    expect(err.details).toEqual([expect.objectContaining({ field: 'phone' })]);
    expect(attempts).toBe(1);
  });

  it('a wrong key is INVALID_API_KEY', async () => {
    const client = new Tidings({ apiKey: 'tdg_live_wrong', baseUrl });
    await expect(client.account.get()).rejects.toMatchObject({ code: 'INVALID_API_KEY', status: 401 });
  });
});

describe('verifyWebhook', () => {
  it("accepts the server's real delivery and refuses a tampered one", async () => {
    const receiver = await env.receiver();
    const hook = await live.webhooks.create({ url: receiver.url(), events: ['message.sent'] });
    await live.webhooks.test(hook.id);
    const [delivery] = await receiver.waitFor(1);
    const event = verifyWebhook(delivery!.body, delivery!.headers, hook.secret);
    expect(event.id).toBe(delivery!.headers['webhook-id']);
    expectTypeOf(event.type).toEqualTypeOf<(typeof event)['type']>();
    expect(event.accountId).toBe(accountId);

    // The raw bytes and fetch's Headers work the same.
    const asFetchHeaders = new Headers(delivery!.headers as Record<string, string>);
    const fromBytes = verifyWebhook(new TextEncoder().encode(delivery!.body), asFetchHeaders, hook.secret);
    expect(fromBytes).toEqual(event);

    const tampered = delivery!.body.replace(accountId, 'acc_01jv4e2k7qf3x8m2n5p6r9s0tb');
    expect(tampered).not.toBe(delivery!.body);
    expect(() => verifyWebhook(tampered, delivery!.headers, hook.secret)).toThrow(WebhookVerificationError);
    const other = await live.webhooks.rotateSecret(hook.id);
    expect(() => verifyWebhook(delivery!.body, delivery!.headers, other.secret)).toThrow(
      WebhookVerificationError,
    );
    const { 'webhook-signature': _, ...unsigned } = delivery!.headers;
    expect(() => verifyWebhook(delivery!.body, unsigned, hook.secret)).toThrow(/webhook-signature/);
  });
});

describe('request, the typed escape hatch', () => {
  it('calls any operation of the document by path and method', async () => {
    const contact = await live.contacts.create({ phone: newPhone(), name: 'Raw' });
    const got = await live.request('get', '/api/v1/public/contacts/{id}', { params: { id: contact.id } });
    expect(got).toEqual(contact);
    const tagged = await live.request('post', '/api/v1/public/contacts/{id}/tags', {
      params: { id: contact.id },
      body: { tags: ['vip'] },
    });
    expect(tagged.tags).toEqual(['vip']);
    const health = await live.request('get', '/healthz');
    expect(health).toBeDefined();
  });

  it('refuses at compile time what the document does not allow (checked by tsc --noEmit)', () => {
    // Never run: these lines exist for the type checker, which fails if any error disappears.
    const typeChecks = () => {
      // @ts-expect-error: the path needs its id
      void live.request('get', '/api/v1/public/contacts/{id}');
      // @ts-expect-error: no such path
      void live.request('get', '/api/v1/public/nothing');
      // @ts-expect-error: no DELETE on the collection
      void live.request('delete', '/api/v1/public/contacts');
      // @ts-expect-error: the body's phone is a string
      void live.contacts.create({ phone: 14155552000 });
      // @ts-expect-error: an unknown query parameter
      void live.contacts.list({ limt: 5 });
      // @ts-expect-error: the answer has no such field
      void live.messages.get('msg_x').then((m) => m.nope);
    };
    expect(typeof typeChecks).toBe('function');
  });
});
