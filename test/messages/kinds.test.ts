// The message kinds beyond text, media, buttons and lists (reaction, location, contacts, sticker,
// a CTA URL button, a location request), quoted replies, and marking a customer's message read with
// the typing indicator: live through the fake Graph API (the exact bodies Meta receives, its
// refusals) and in the sandbox, with every rule a 400 naming its field.
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { emojiIssue } from '../../src/modules/messages/kinds.ts';
import { type FakeWhatsAppCloud, graphError } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, type Reply } from '../helpers/client.ts';
import {
  credit,
  eventually,
  type MessagingTenant,
  messageWhen,
  sandboxTenantWithKey,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

let base: string;
const env = useMessagingApp({
  config: { providerTimeoutMs: 1000, dispatchRetryLimit: 1, dispatchRetryDelaySeconds: 1, logLevel: 'warn' },
});
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: ReturnType<FakeWhatsAppCloud['createBusiness']> };

let nextPhone = 2100;
const newCustomer = () => `+1415555${nextPhone++}`;

async function liveTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '10.00');
  return t;
}

/** The customer writes in through Meta's webhook: the window opens; answers their message as stored. */
async function customerWrites(t: Tenant, from: string, text = 'Hello?') {
  const cb = await env.fake.postInbound(`${base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
    from,
    text,
  });
  expect(cb.status, cb.body).toBe(200);
  const found = await eventually(
    () =>
      call(env.app, 'GET', `/messages?direction=inbound&to=${encodeURIComponent(from)}`, { key: t.apiKey }),
    (r) => r.body.data?.some((m: { text: string }) => m.text === text),
  );
  return found.body.data.find((m: { text: string }) => m.text === text) as {
    id: string;
    providerMessageId: string;
  };
}

async function send(key: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/messages', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

/** The request Meta received for our message `id` (echoed as biz_opaque_callback_data). */
async function metaGot(id: string) {
  const found = await eventually(
    async () => env.fake.sent.find((s) => s.body.biz_opaque_callback_data === id),
    (s) => s !== undefined,
  );
  expect(found, `Meta never received ${id}`).toBeDefined();
  return found!.body;
}

/** A 400 whose details name each of `fields`. */
function expectFields(res: Reply, fields: string[]) {
  expectError(res, 400, 'INVALID_REQUEST');
  const named = (res.body.error.details as { field: string }[]).map((d) => d.field);
  for (const f of fields) expect(named, JSON.stringify(res.body)).toContain(f);
}

const CONTACT_CARD = {
  name: { formatted_name: 'Barbara J. Johnson', first_name: 'Barbara', last_name: 'Johnson' },
  phones: [{ phone: '+16505551234', type: 'WORK', wa_id: '16505551234' }],
  emails: [{ email: 'bjohnson@example.com', type: 'WORK' }],
  urls: [{ url: 'https://www.example.com', type: 'WORK' }],
  addresses: [{ street: '1 Lucky Shrub Way', city: 'Menlo Park', country_code: 'US', type: 'WORK' }],
  org: { company: 'Lucky Shrub', title: 'Manager' },
  birthday: '1999-01-23',
};

describe('new outbound kinds through the WhatsApp Cloud API', () => {
  it('reach Meta in its documented shape, free inside the window like text, and show on the message', async () => {
    const t = await liveTenant();
    const to = newCustomer();
    const inbound = await customerWrites(t, to);
    const common = { messaging_product: 'whatsapp', recipient_type: 'individual', to };

    const location = await send(t.apiKey, {
      to,
      type: 'location',
      location: { latitude: 37.4847, longitude: -122.1477, name: 'Lucky Shrub', address: '1 Hacker Way' },
    });
    expect(location).toMatchObject({
      type: 'location',
      location: { latitude: 37.4847, longitude: -122.1477, name: 'Lucky Shrub', address: '1 Hacker Way' },
      pricing: { category: 'service' },
    });
    // Priced exactly as a text to the same customer.
    const text = await send(t.apiKey, { to, type: 'text', text: 'Here is where we are.' });
    expect(location.pricing).toEqual(text.pricing);
    expect(await metaGot(location.id)).toEqual({
      ...common,
      type: 'location',
      location: { latitude: 37.4847, longitude: -122.1477, name: 'Lucky Shrub', address: '1 Hacker Way' },
      biz_opaque_callback_data: location.id,
    });

    const contacts = await send(t.apiKey, { to, type: 'contacts', contacts: [CONTACT_CARD] });
    expect(contacts.contacts).toEqual([CONTACT_CARD]);
    expect((await metaGot(contacts.id)).contacts).toEqual([CONTACT_CARD]);

    const sticker = await send(t.apiKey, {
      to,
      type: 'media',
      media: { kind: 'sticker', url: 'https://cdn.example.com/s/wave.webp' },
    });
    expect(await metaGot(sticker.id)).toMatchObject({
      type: 'sticker',
      sticker: { link: 'https://cdn.example.com/s/wave.webp' },
    });

    const cta = await send(t.apiKey, {
      to,
      type: 'interactive',
      interactive: {
        kind: 'cta_url',
        header: 'Available Dates',
        body: 'Tap the button below to see available dates.',
        footer: 'Dates subject to change.',
        button: { text: 'See Dates', url: 'https://www.example.com/dates' },
      },
    });
    expect(cta.interactive).toMatchObject({ kind: 'cta_url', button: { text: 'See Dates' } });
    expect((await metaGot(cta.id)).interactive).toEqual({
      type: 'cta_url',
      header: { type: 'text', text: 'Available Dates' },
      body: { text: 'Tap the button below to see available dates.' },
      footer: { text: 'Dates subject to change.' },
      action: {
        name: 'cta_url',
        parameters: { display_text: 'See Dates', url: 'https://www.example.com/dates' },
      },
    });

    const ask = await send(t.apiKey, {
      to,
      type: 'interactive',
      interactive: { kind: 'location_request', body: "Let's start with your pickup." },
    });
    expect((await metaGot(ask.id)).interactive).toEqual({
      type: 'location_request_message',
      body: { text: "Let's start with your pickup." },
      action: { name: 'send_location' },
    });

    const reaction = await send(t.apiKey, {
      to,
      type: 'reaction',
      reaction: { messageId: inbound.id, emoji: '👍' },
    });
    expect(reaction.reaction).toEqual({
      messageId: inbound.id,
      providerMessageId: inbound.providerMessageId,
      emoji: '👍',
    });
    expect(await metaGot(reaction.id)).toEqual({
      ...common,
      type: 'reaction',
      reaction: { message_id: inbound.providerMessageId, emoji: '👍' },
      biz_opaque_callback_data: reaction.id,
    });
    // Removing it: an empty emoji.
    const removed = await send(t.apiKey, {
      to,
      type: 'reaction',
      reaction: { messageId: inbound.id, emoji: '' },
    });
    expect((await metaGot(removed.id)).reaction).toEqual({
      message_id: inbound.providerMessageId,
      emoji: '',
    });

    for (const id of [location.id, contacts.id, sticker.id, cta.id, ask.id, reaction.id]) {
      await messageWhen(env.app, t.apiKey, id, 'sent');
    }
  });

  it('quotes an earlier message by its wamid, on a send and on a conversation reply', async () => {
    const t = await liveTenant();
    const to = newCustomer();
    const inbound = await customerWrites(t, to, 'Do you deliver on Sundays?');
    const reply = await send(t.apiKey, {
      to,
      type: 'text',
      text: 'We do!',
      context: { messageId: inbound.id },
    });
    expect(reply.context).toMatchObject({
      messageId: inbound.id,
      providerMessageId: inbound.providerMessageId,
    });
    expect(await metaGot(reply.id)).toMatchObject({
      type: 'text',
      text: { body: 'We do!' },
      context: { message_id: inbound.providerMessageId },
    });

    // Our own sent message can be quoted too, once Meta has given it its wamid.
    const sent = await messageWhen(env.app, t.apiKey, reply.id, 'sent');
    const conversation = await call(env.app, 'GET', `/messages/${inbound.id}`, { key: t.apiKey });
    const again = await call(env.app, 'POST', `/conversations/${conversation.body.conversationId}/messages`, {
      key: t.apiKey,
      body: {
        type: 'location',
        location: { latitude: 0, longitude: 0 },
        context: { messageId: reply.id },
      },
    });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(await metaGot(again.body.id)).toMatchObject({
      type: 'location',
      location: { latitude: 0, longitude: 0 },
      context: { message_id: sent.providerMessageId },
    });
  });

  it('refuses reactions and quotes of messages that are not this chat’s, or not WhatsApp’s', async () => {
    const t = await liveTenant();
    const to = newCustomer();
    const inbound = await customerWrites(t, to);
    const other = await liveTenant();
    const othersInbound = await customerWrites(other, to);
    const elsewhere = await customerWrites(t, newCustomer());

    for (const [body, field] of [
      [{ type: 'reaction', reaction: { messageId: othersInbound.id, emoji: '👍' } }, 'reaction.messageId'],
      [{ type: 'reaction', reaction: { messageId: 'msg_unknown', emoji: '👍' } }, 'reaction.messageId'],
      [{ type: 'reaction', reaction: { messageId: elsewhere.id, emoji: '👍' } }, 'reaction.messageId'],
      [{ type: 'text', text: 'Hi', context: { messageId: othersInbound.id } }, 'context.messageId'],
      [{ type: 'text', text: 'Hi', context: { messageId: elsewhere.id } }, 'context.messageId'],
    ] as const) {
      const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: { to, ...body } });
      expectFields(res, [field]);
    }

    // A reaction on a reaction: WhatsApp drops it, so it is refused.
    const reaction = await send(t.apiKey, {
      to,
      type: 'reaction',
      reaction: { messageId: inbound.id, emoji: '😀' },
    });
    await messageWhen(env.app, t.apiKey, reaction.id, 'sent');
    const onReaction = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to, type: 'reaction', reaction: { messageId: reaction.id, emoji: '👍' } },
    });
    expectFields(onReaction, ['reaction.messageId']);

    // A message the sandbox carried has no wamid WhatsApp knows.
    const sandboxKey = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    const simulated = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: sandboxKey.apiKey,
      body: { from: to, text: 'simulated' },
    });
    expect(simulated.status, JSON.stringify(simulated.body)).toBe(201);
    const quoteSandbox = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to, type: 'text', text: 'Hi', context: { messageId: simulated.body.id } },
    });
    expectFields(quoteSandbox, ['context.messageId']);
    const mine = env.fake.sent.filter((s) => s.businessPhoneNumberId === t.business.phoneNumberId);
    expect(mine.map((s) => s.body.type)).toEqual(['reaction']); // the 😀 only
  });

  it('checks each kind against Meta’s rules, naming every field at fault', async () => {
    const t = await liveTenant();
    const to = newCustomer();
    const inbound = await customerWrites(t, to);
    const cases: [Record<string, unknown>, string[]][] = [
      [
        { type: 'location', location: { latitude: 91, longitude: -181 } },
        ['location.latitude', 'location.longitude'],
      ],
      [{ type: 'location' }, ['location']],
      [{ type: 'location', location: { latitude: 1, longitude: 1 }, text: 'x' }, ['text']],
      [
        {
          type: 'contacts',
          contacts: [
            {
              name: { formatted_name: ' ' },
              birthday: '1999-02-30',
              emails: [{ email: 'not-an-email' }],
              urls: [{ url: 'ftp://example.com' }],
              phones: [{ type: 'HOME' }],
              addresses: [{ country_code: 'U1' }],
            },
          ],
        },
        [
          'contacts[0].name.formatted_name',
          'contacts[0].birthday',
          'contacts[0].emails[0].email',
          'contacts[0].urls[0].url',
          'contacts[0].phones[0]',
          'contacts[0].addresses[0].country_code',
        ],
      ],
      [
        {
          type: 'contacts',
          contacts: [{ name: { formatted_name: 'A' }, addresses: [{ country_code: 'USA' }] }],
        },
        ['contacts[0].addresses[0].country_code'],
      ],
      [{ type: 'contacts', contacts: [{ name: {} }] }, ['contacts[0].name.formatted_name']],
      [{ type: 'contacts', contacts: [] }, ['contacts']],
      [{ type: 'reaction', reaction: { messageId: inbound.id, emoji: '👍👍' } }, ['reaction.emoji']],
      [{ type: 'reaction', reaction: { messageId: inbound.id, emoji: 'ok' } }, ['reaction.emoji']],
      [
        {
          type: 'reaction',
          reaction: { messageId: inbound.id, emoji: '👍' },
          context: { messageId: inbound.id },
        },
        ['context'],
      ],
      [
        { type: 'media', media: { kind: 'sticker', url: 'https://cdn.example.com/a.png', caption: 'Hi' } },
        ['media.url', 'media.caption'],
      ],
      [
        {
          type: 'media',
          media: { kind: 'sticker', url: 'https://cdn.example.com/a.webp', filename: 'a.webp' },
        },
        ['media.filename'],
      ],
      [
        {
          type: 'interactive',
          interactive: {
            kind: 'cta_url',
            body: 'x'.repeat(1025),
            button: { text: 'Open', url: 'http://example.com' },
          },
        },
        ['interactive.body', 'interactive.button.url'],
      ],
      [{ type: 'interactive', interactive: { kind: 'cta_url', body: 'Hi' } }, ['interactive.button']],
      [
        {
          type: 'interactive',
          interactive: {
            kind: 'cta_url',
            body: 'Hi',
            button: { text: 'A label far too long!', url: 'https://e.com' },
          },
        },
        ['interactive.button.text'],
      ],
      [
        {
          type: 'interactive',
          interactive: { kind: 'location_request', body: 'Where?', footer: 'f', header: 'h' },
        },
        ['interactive.footer', 'interactive.header'],
      ],
      [
        {
          type: 'interactive',
          interactive: {
            kind: 'buttons',
            body: 'Hi',
            buttons: [{ id: 'a', title: 'A' }],
            button: { text: 'x', url: 'https://e.com' },
          },
        },
        ['interactive.button'],
      ],
    ];
    for (const [body, fields] of cases) {
      const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: { to, ...body } });
      expectFields(res, fields);
    }
    // Nothing was sent, nothing stored but the customer's message.
    const list = await call(env.app, 'GET', `/messages?to=${encodeURIComponent(to)}`, { key: t.apiKey });
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([inbound.id]);
  });

  it('are free-form: refused outside the customer service window', async () => {
    const t = await liveTenant();
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: newCustomer(), type: 'location', location: { latitude: 1, longitude: 2 } },
    });
    expectError(res, 422, 'CSW_VIOLATION');
  });
});

describe('POST /messages/{id}/read on the WhatsApp Cloud API', () => {
  it('marks the customer’s message read with the typing indicator, as Meta documents it, and records it', async () => {
    const t = await liveTenant();
    const to = newCustomer();
    const earlier = await customerWrites(t, to, 'First');
    const inbound = await customerWrites(t, to, 'Second');
    const before = env.fake.readReceipts.length;

    const res = await call(env.app, 'POST', `/messages/${inbound.id}/read`, {
      key: t.apiKey,
      body: { typing: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: inbound.id, direction: 'inbound', status: 'received' });
    expect(res.body.markedReadAt).toEqual(expect.any(String));
    expect(res.body.typingShownAt).toBe(res.body.markedReadAt);
    expect(env.fake.readReceipts.slice(before)).toEqual([
      { businessPhoneNumberId: t.business.phoneNumberId, messageId: inbound.providerMessageId, typing: true },
    ]);
    const raw = env.fake.requests.filter((r) => r.body?.status === 'read').at(-1)!;
    expect(raw.body).toEqual({
      messaging_product: 'whatsapp',
      status: 'read',
      message_id: inbound.providerMessageId,
      typing_indicator: { type: 'text' },
    });
    // WhatsApp marks the earlier messages of the chat read with it.
    const first = await call(env.app, 'GET', `/messages/${earlier.id}`, { key: t.apiKey });
    expect(first.body.markedReadAt).toBe(res.body.markedReadAt);
    expect(first.body.typingShownAt).toBeNull();

    // Again without typing: nothing to tell Meta, nothing moves.
    const again = await call(env.app, 'POST', `/messages/${inbound.id}/read`, { key: t.apiKey });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.markedReadAt).toBe(res.body.markedReadAt);
    expect(env.fake.readReceipts.length).toBe(before + 1);
    const shown = await call(env.app, 'GET', `/messages/${inbound.id}`, { key: t.apiKey });
    expect(shown.body).toMatchObject({
      markedReadAt: res.body.markedReadAt,
      typingShownAt: res.body.typingShownAt,
    });
  });

  it('marks read without typing, and refuses an outbound message, another account’s, and a sandbox key', async () => {
    const t = await liveTenant();
    const to = newCustomer();
    const inbound = await customerWrites(t, to);
    const before = env.fake.readReceipts.length;
    const plain = await call(env.app, 'POST', `/messages/${inbound.id}/read`, { key: t.apiKey, body: {} });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body.typingShownAt).toBeNull();
    expect(env.fake.readReceipts.slice(before)).toEqual([
      {
        businessPhoneNumberId: t.business.phoneNumberId,
        messageId: inbound.providerMessageId,
        typing: false,
      },
    ]);

    const outbound = await send(t.apiKey, { to, type: 'text', text: 'Hi' });
    const refused = await call(env.app, 'POST', `/messages/${outbound.id}/read`, {
      key: t.apiKey,
      body: { typing: true },
    });
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details).toEqual([{ field: 'id', issue: 'is an outbound message' }]);

    const other = await liveTenant();
    const foreign = await call(env.app, 'POST', `/messages/${inbound.id}/read`, {
      key: other.apiKey,
      body: {},
    });
    expectError(foreign, 404, 'RESOURCE_NOT_FOUND');

    const fresh = await customerWrites(t, newCustomer());
    const sandboxKey = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    const bySandbox = await call(env.app, 'POST', `/messages/${fresh.id}/read`, {
      key: sandboxKey.apiKey,
      body: {},
    });
    expectError(bySandbox, 403, 'FORBIDDEN');
    const unread = await call(env.app, 'GET', `/messages/${fresh.id}`, { key: t.apiKey });
    expect(unread.body.markedReadAt).toBeNull();
    expect(env.fake.readReceipts.length).toBe(before + 1);
  });

  it('records nothing when Meta refuses (409 with its reason) or cannot be reached (503)', async () => {
    const t = await liveTenant();
    const inbound = await customerWrites(t, newCustomer());
    env.fake.failNext(
      graphError(100, { message: '(#100) Invalid parameter', details: 'Invalid message_id' }),
    );
    const refused = await call(env.app, 'POST', `/messages/${inbound.id}/read`, {
      key: t.apiKey,
      body: { typing: true },
    });
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details[0]).toMatchObject({ field: 'provider', providerCode: 100 });

    env.fake.failNext(graphError(131016));
    const down = await call(env.app, 'POST', `/messages/${inbound.id}/read`, { key: t.apiKey, body: {} });
    expectError(down, 503, 'SERVICE_UNAVAILABLE');

    const shown = await call(env.app, 'GET', `/messages/${inbound.id}`, { key: t.apiKey });
    expect(shown.body).toMatchObject({ markedReadAt: null, typingShownAt: null });
  });
});

describe('the new kinds and mark-read in the sandbox', () => {
  it('go out in bulk sends too, which take no reaction or quote (they name one chat’s message)', async () => {
    const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    const to = newCustomer();
    const inbound = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: to, text: 'Hi' },
    });
    expect(inbound.status, JSON.stringify(inbound.body)).toBe(201);
    const bulk = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { type: 'location', location: { latitude: 51.5, longitude: -0.12 }, recipients: [{ to }] },
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(202);
    const found = await eventually(
      () =>
        call(env.app, 'GET', `/messages?direction=outbound&to=${encodeURIComponent(to)}`, { key: t.apiKey }),
      (r) => r.body.data?.length === 1,
    );
    expect(found.body.data[0]).toMatchObject({
      type: 'location',
      location: { latitude: 51.5, longitude: -0.12 },
    });

    for (const extra of [
      { type: 'reaction', reaction: { messageId: inbound.body.id, emoji: '👍' } },
      { type: 'text', text: 'Hi', context: { messageId: inbound.body.id } },
    ]) {
      const res = await call(env.app, 'POST', '/bulk/messages', {
        key: t.apiKey,
        body: { ...extra, recipients: [{ to }] },
      });
      expectFields(res, ['reaction' in extra ? 'reaction' : 'context']);
    }
  });

  it('stores and shows each kind, the reaction’s and quote’s message, and records mark-read only', async () => {
    const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    const to = newCustomer();
    const inbound = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: to, text: 'Hello sandbox' },
    });
    expect(inbound.status, JSON.stringify(inbound.body)).toBe(201);
    const inboundId = inbound.body.id as string;
    const sentBefore = env.fake.sent.length;
    const receiptsBefore = env.fake.readReceipts.length;

    const bodies: Record<string, unknown>[] = [
      { type: 'location', location: { latitude: -33.86, longitude: 151.21, name: 'Opera House' } },
      { type: 'contacts', contacts: [CONTACT_CARD] },
      { type: 'media', media: { kind: 'sticker', url: 'https://cdn.example.com/wave.webp' } },
      {
        type: 'interactive',
        interactive: { kind: 'cta_url', body: 'Book now', button: { text: 'Book', url: 'https://e.com/b' } },
      },
      { type: 'interactive', interactive: { kind: 'location_request', body: 'Where are you?' } },
      { type: 'reaction', reaction: { messageId: inboundId, emoji: '❤️' } },
      { type: 'text', text: 'Quoted', context: { messageId: inboundId } },
    ];
    const sent = [];
    for (const body of bodies) sent.push(await send(t.apiKey, { to, ...body }));
    for (const m of sent) {
      // As on WhatsApp, a reaction is only ever sent (Meta reports no delivery or read for one).
      const settled = await messageWhen(env.app, t.apiKey, m.id, m.type === 'reaction' ? 'sent' : 'read');
      expect(settled.channel).toBe('sandbox');
    }
    const stillSent = await call(env.app, 'GET', `/messages/${sent[5].id}`, { key: t.apiKey });
    expect(stillSent.body).toMatchObject({ type: 'reaction', status: 'sent', deliveredAt: null });
    const [location, contacts, sticker, cta, ask, reaction, quoted] = sent;
    expect(location.location).toEqual({
      latitude: -33.86,
      longitude: 151.21,
      name: 'Opera House',
      address: null,
      url: null,
    });
    expect(contacts.contacts).toEqual([CONTACT_CARD]);
    expect(sticker.media).toEqual({ kind: 'sticker', url: 'https://cdn.example.com/wave.webp' });
    expect(cta.interactive).toEqual({
      kind: 'cta_url',
      body: 'Book now',
      button: { text: 'Book', url: 'https://e.com/b' },
    });
    expect(ask.interactive).toEqual({ kind: 'location_request', body: 'Where are you?' });
    expect(reaction.reaction).toEqual({
      messageId: inboundId,
      providerMessageId: inbound.body.providerMessageId,
      emoji: '❤️',
    });
    expect(quoted.context).toMatchObject({
      messageId: inboundId,
      providerMessageId: inbound.body.providerMessageId,
    });
    expect(env.fake.sent.length).toBe(sentBefore);

    const read = await call(env.app, 'POST', `/messages/${inboundId}/read`, {
      key: t.apiKey,
      body: { typing: true },
    });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.markedReadAt).toEqual(expect.any(String));
    expect(read.body.typingShownAt).toEqual(expect.any(String));
    // The sandbox key may mark its own simulated customer's message read as well.
    const bySandbox = await call(env.app, 'POST', `/messages/${inboundId}/read`, { key: t.sandboxKey });
    expect(bySandbox.status, JSON.stringify(bySandbox.body)).toBe(200);
    expect(bySandbox.body.markedReadAt).toBe(read.body.markedReadAt);
    expect(env.fake.readReceipts.length).toBe(receiptsBefore);
  });
});

describe('a reaction’s emoji', () => {
  it('is one emoji as WhatsApp shows one (skin tones, flags, keycaps, families), or empty', () => {
    for (const one of ['👍', '👍🏽', '🇺🇸', '1️⃣', '👨‍👩‍👧', '❤️', '©️', ''])
      expect(emojiIssue(one), one).toBeNull();
    for (const not of ['a', '1', '👍👍', ' ', 'ok', '🇺🇸🇫🇷']) expect(emojiIssue(not), not).not.toBeNull();
  });
});

describe('the fake Graph API, as Meta documents the new kinds', () => {
  /** Posts `body` to the business's messages edge as Meta's clients do; answers status and JSON. */
  async function graph(body: Record<string, unknown>) {
    const business = env.fake.createBusiness();
    const res = await request(`${env.fake.graphUrl}/${business.phoneNumberId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${business.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  }
  const to = '+14155552999';
  const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to };

  it('refuses malformed ones with Meta’s error codes, and takes well-formed ones', async () => {
    const refusals: [Record<string, unknown>, number][] = [
      [{ ...envelope, type: 'reaction', reaction: { emoji: '👍' } }, 131008],
      [{ ...envelope, type: 'reaction', reaction: { message_id: 'wamid.x', emoji: '👍👍' } }, 131009],
      [{ ...envelope, type: 'location', location: { latitude: 91, longitude: 0 } }, 131009],
      [{ ...envelope, type: 'location', location: { longitude: 0 } }, 131008],
      [{ ...envelope, type: 'contacts', contacts: [{ name: { first_name: 'A' } }] }, 131008],
      [{ ...envelope, type: 'contacts', contacts: [] }, 131008],
      [{ ...envelope, type: 'sticker', sticker: { link: 'https://e.com/s.webp', caption: 'no' } }, 131009],
      [
        {
          ...envelope,
          type: 'interactive',
          interactive: {
            type: 'cta_url',
            body: { text: 'Hi' },
            action: { name: 'cta_url', parameters: { display_text: 'x'.repeat(21), url: 'https://e.com' } },
          },
        },
        131009,
      ],
      [
        {
          ...envelope,
          type: 'interactive',
          interactive: {
            type: 'location_request_message',
            header: { type: 'text', text: 'h' },
            body: { text: 'Where?' },
            action: { name: 'send_location' },
          },
        },
        131009,
      ],
      [{ ...envelope, type: 'text', text: { body: 'Hi' }, context: { id: 'wamid.x' } }, 131009],
      [{ messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.unknown' }, 100],
    ];
    for (const [body, code] of refusals) {
      const res = await graph(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ code, type: 'OAuthException' });
      expect(res.body.error.fbtrace_id).toEqual(expect.any(String));
    }
    const accepted = await graph({
      ...envelope,
      type: 'location',
      location: { latitude: '37.48', longitude: '-122.14' },
      context: { message_id: 'wamid.earlier' },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.messages[0].id).toMatch(/^wamid\./);
  });
});
