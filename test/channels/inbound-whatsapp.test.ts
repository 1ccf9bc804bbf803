// Customers' messages from the WhatsApp Cloud API, through the real callback endpoint over HTTP,
// signed as Meta signs them: every documented type stored without losing a field and shown in its
// API shape; reactions and replies linked to the message Tidings sent; a redelivery (one after the
// other or at the same time) stored once and emitted once; a new number's contact, conversation and
// customer service window; several messages in one payload; a bad signature storing nothing; and a
// free-form answer inside the window, free and in the conversation.
import { createHmac, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type FakeWhatsAppCloud, inboundMessages } from '../fakes/whatsapp-cloud.ts';
import { call, type Reply } from '../helpers/client.ts';
import {
  balanceOf,
  credit,
  eventually,
  type MessagingTenant,
  messageWhen,
  sleep,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import type { Receiver } from '../helpers/receiver.ts';
import { expectError } from '../helpers/setup.ts';

let base: string;
const logs: string[] = [];
const env = useMessagingApp({
  config: { logLevel: 'warn' },
  logStream: { write: (line) => logs.push(line) },
});
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: ReturnType<FakeWhatsAppCloud['createBusiness']> };
type Payload = ReturnType<FakeWhatsAppCloud['inboundPayload']>;
type Inbound = Parameters<FakeWhatsAppCloud['inboundPayload']>[1];

const callbackUrl = (t: Tenant) => `${base}/api/v1/callbacks/whatsapp/${t.accountId}`;

async function newTenant(money?: string): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  if (money) await credit(env.app, env.partner.partnerKey, t.accountId, money);
  return t;
}

async function subscribe(t: Tenant, events: string[]): Promise<Receiver> {
  return (await env.subscribe(t.apiKey, events)).receiver;
}

/** Unix seconds, `ago` seconds in the past (Meta's timestamps have whole seconds). */
const unix = (ago = 0) => Math.floor(Date.now() / 1000) - ago;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const newWamid = () => `wamid.${randomBytes(30).toString('base64')}`;

/** The messages of a payload as the fake built them (their wamids are random). */
const messagesOf = (payload: Payload): any[] => (payload.entry[0]!.changes[0]!.value as any).messages;

/** Posts one customer message signed; answers the message as Meta sent it and the callback's answer. */
async function inbound(t: Tenant, message: Inbound) {
  const payload = env.fake.inboundPayload(t.business, message);
  const res = await env.fake.postCallback(callbackUrl(t), t.business, payload);
  expect(res.status, res.body).toBe(200);
  return {
    sent: messagesOf(payload)[0],
    answer: JSON.parse(res.body) as { applied: number; dropped: number },
  };
}

/** The inbound messages from `phone`, newest first. */
async function inboundFrom(t: Tenant, phone: string): Promise<any[]> {
  const res = await call(env.app, 'GET', '/messages', {
    key: t.apiKey,
    query: { direction: 'inbound', to: phone, limit: '100' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

/** The stored message with this wamid, as GET /messages/{id} shows it (and the list agrees). */
async function stored(t: Tenant, phone: string, wamid: string) {
  const listed = (await inboundFrom(t, phone)).filter((m) => m.providerMessageId === wamid);
  expect(listed, `one message ${wamid}`).toHaveLength(1);
  const res = await call(env.app, 'GET', `/messages/${listed[0].id}`, { key: t.apiKey });
  expect(res.status).toBe(200);
  expect(res.body).toEqual(listed[0]);
  return res.body;
}

async function contactOf(t: Tenant, phone: string) {
  const res = await call(env.app, 'GET', '/contacts', { key: t.apiKey, query: { phone } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as any[];
}

async function conversationsOf(t: Tenant, contactId: string) {
  const res = await call(env.app, 'GET', '/conversations', { key: t.apiKey, query: { contactId } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as any[];
}

async function conversation(t: Tenant, id: string) {
  const res = await call(env.app, 'GET', `/conversations/${id}`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function send(t: Tenant, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

/** Every content field of a message, null but for those of its type. */
const content = (fields: Record<string, unknown>) => ({
  template: null,
  text: null,
  media: null,
  interactive: null,
  button: null,
  reaction: null,
  location: null,
  contacts: null,
  unsupported: null,
  context: null,
  ...fields,
});

/** Creates and submits a template; Meta (the fake) approves it by callback. */
async function metaApproved(t: Tenant, name: string) {
  const created = await call(env.app, 'POST', '/templates', {
    key: t.apiKey,
    body: {
      name,
      language: 'en_US',
      category: 'UTILITY',
      components: [
        {
          type: 'BODY',
          text: 'Hi {{1}}, your order {{2}} has shipped. Thanks!',
          example: { body_text: [['Ann', 'A-1']] },
        },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const cb = await env.fake.postTemplateStatus(callbackUrl(t), t.business, {
    templateId: submitted.body.providerTemplateId,
    name,
    language: 'en_US',
    event: 'APPROVED',
  });
  expect(cb.status, cb.body).toBe(200);
  const approved = await call(env.app, 'GET', `/templates/${created.body.id}`, { key: t.apiKey });
  expect(approved.body.status).toBe('APPROVED');
}

describe('each type of customer message', () => {
  it('is stored once, as received, with every field Meta sent in its API shape', async () => {
    const t = await newTenant();
    const from = '+14155552001';
    const foreignWamid = newWamid();
    const cases: [name: string, message: Record<string, unknown>, expected: (m: any) => object][] = [
      [
        'text',
        inboundMessages.text({ body: 'Do you ship to Canada? 🇨🇦' }),
        () => ({ type: 'text', ...content({ text: 'Do you ship to Canada? 🇨🇦' }) }),
      ],
      [
        'image with caption',
        inboundMessages.image({ caption: 'The broken part' }),
        (m) => ({
          type: 'media',
          ...content({
            media: {
              kind: 'image',
              id: m.image.id,
              mimeType: 'image/jpeg',
              sha256: m.image.sha256,
              caption: 'The broken part',
              filename: null,
              voice: false,
              animated: false,
            },
          }),
        }),
      ],
      [
        'video',
        inboundMessages.video(),
        (m) => ({
          type: 'media',
          ...content({
            media: {
              kind: 'video',
              id: m.video.id,
              mimeType: 'video/mp4',
              sha256: m.video.sha256,
              caption: null,
              filename: null,
              voice: false,
              animated: false,
            },
          }),
        }),
      ],
      [
        'audio voice note',
        inboundMessages.audio({ voice: true }),
        (m) => ({
          type: 'media',
          ...content({
            media: {
              kind: 'audio',
              id: m.audio.id,
              mimeType: 'audio/ogg; codecs=opus',
              sha256: m.audio.sha256,
              caption: null,
              filename: null,
              voice: true,
              animated: false,
            },
          }),
        }),
      ],
      [
        'document with filename',
        inboundMessages.document({ filename: 'invoice-0042.pdf', caption: 'Last month' }),
        (m) => ({
          type: 'media',
          ...content({
            media: {
              kind: 'document',
              id: m.document.id,
              mimeType: 'application/pdf',
              sha256: m.document.sha256,
              caption: 'Last month',
              filename: 'invoice-0042.pdf',
              voice: false,
              animated: false,
            },
          }),
        }),
      ],
      [
        'sticker',
        inboundMessages.sticker({ animated: true }),
        (m) => ({
          type: 'media',
          ...content({
            media: {
              kind: 'sticker',
              id: m.sticker.id,
              mimeType: 'image/webp',
              sha256: m.sticker.sha256,
              caption: null,
              filename: null,
              voice: false,
              animated: true,
            },
          }),
        }),
      ],
      [
        'button reply',
        inboundMessages.buttonReply({ id: 'confirm-yes', title: 'Yes, confirm' }),
        () => ({
          type: 'interactive',
          ...content({
            interactive: {
              kind: 'button_reply',
              id: 'confirm-yes',
              title: 'Yes, confirm',
              description: null,
            },
          }),
        }),
      ],
      [
        'list reply',
        inboundMessages.listReply({ id: 't19', title: '19:00', description: 'Window seat' }),
        () => ({
          type: 'interactive',
          ...content({
            interactive: { kind: 'list_reply', id: 't19', title: '19:00', description: 'Window seat' },
          }),
        }),
      ],
      [
        'template quick-reply button',
        inboundMessages.templateButton({ text: 'Stop promotions', payload: 'STOP_PROMOS' }),
        () => ({
          type: 'button',
          ...content({ button: { text: 'Stop promotions', payload: 'STOP_PROMOS' } }),
        }),
      ],
      [
        'location',
        inboundMessages.location(),
        () => ({
          type: 'location',
          ...content({
            location: {
              latitude: 37.44216251868683,
              longitude: -122.16153582049394,
              name: 'Philz Coffee',
              address: '101 Forest Ave, Palo Alto, CA 94301',
              url: 'https://philzcoffee.com/',
            },
          }),
        }),
      ],
      [
        'contacts',
        inboundMessages.contacts(),
        (m) => ({ type: 'contacts', ...content({ contacts: m.contacts }) }),
      ],
      [
        'unsupported',
        inboundMessages.unsupported(),
        (m) => ({
          type: 'unsupported',
          ...content({ unsupported: { providerType: 'unsupported', raw: m } }),
        }),
      ],
      [
        'order',
        inboundMessages.order(),
        (m) => ({ type: 'unsupported', ...content({ unsupported: { providerType: 'order', raw: m } }) }),
      ],
      [
        'reaction to a message not ours',
        inboundMessages.reaction({ messageId: foreignWamid, emoji: '❤️' }),
        () => ({
          type: 'reaction',
          ...content({ reaction: { messageId: null, providerMessageId: foreignWamid, emoji: '❤️' } }),
        }),
      ],
    ];
    const first = unix(3600);
    const posted: { name: string; sent: any; timestamp: number; expected: object }[] = [];
    for (const [i, [name, message, expected]] of cases.entries()) {
      const timestamp = first + i * 60;
      const { sent, answer } = await inbound(t, { from, name: 'Sheena Nelson', message, timestamp });
      expect(answer, name).toEqual({ applied: 1, dropped: 0 });
      // What Meta sent is the builder's object, beside its envelope fields.
      expect(sent, name).toMatchObject(message);
      posted.push({ name, sent, timestamp, expected: expected(sent) });
    }

    const [contact] = await contactOf(t, from);
    expect(contact).toMatchObject({ phone: from, name: 'Sheena Nelson' });
    const [open] = await conversationsOf(t, contact.id);
    for (const { name, sent, timestamp, expected } of posted) {
      const message = await stored(t, from, sent.id);
      expect(message, name).toMatchObject({
        ...expected,
        direction: 'inbound',
        status: 'received',
        channel: 'whatsapp_cloud',
        sandbox: false,
        from,
        to: null,
        contactId: contact.id,
        conversationId: open.id,
        providerMessageId: sent.id,
        pricing: null,
        error: null,
        sentAt: iso(timestamp),
        deliveredAt: null,
        readAt: null,
        failedAt: null,
      });
      // Each content field exactly (toMatchObject would let a nested object carry extra keys).
      for (const [field, value] of Object.entries(expected))
        expect(message[field], `${name}: ${field}`).toEqual(value);
    }
    expect(await inboundFrom(t, from)).toHaveLength(cases.length);
    const view = await conversation(t, open.id);
    expect(view).toMatchObject({
      status: 'open',
      unreadCount: cases.length,
      lastInboundAt: iso(posted.at(-1)!.timestamp),
    });
    expect(view.lastMessage.providerMessageId).toBe(posted.at(-1)!.sent.id);
  });
});

describe('reactions and replies to a message Tidings sent', () => {
  it('point at our message id: a reaction, its removal, and a quoted reply', async () => {
    const t = await newTenant('1.00');
    const from = '+14155552002';
    await inbound(t, { from, text: 'Is my table ready?' });
    const ours = await send(t, { to: from, type: 'text', text: 'Your table is ready' });
    const handedOver = await messageWhen(env.app, t.apiKey, ours.id, 'sent');
    const wamid = env.fake.sent.find((s) => s.to === from)!.wamid;
    expect(handedOver.providerMessageId).toBe(wamid);

    const { sent: reacted, answer } = await inbound(t, {
      from,
      message: inboundMessages.reaction({ messageId: wamid, emoji: '👍' }),
    });
    expect(answer).toEqual({ applied: 1, dropped: 0 });
    expect((await stored(t, from, reacted.id)).reaction).toEqual({
      messageId: ours.id,
      providerMessageId: wamid,
      emoji: '👍',
    });

    // Meta leaves the emoji out when the customer takes the reaction back.
    const { sent: removed } = await inbound(t, {
      from,
      message: inboundMessages.reaction({ messageId: wamid, emoji: null }),
    });
    expect(removed.reaction).toEqual({ message_id: wamid });
    expect((await stored(t, from, removed.id)).reaction).toEqual({
      messageId: ours.id,
      providerMessageId: wamid,
      emoji: '',
    });

    const { sent: reply } = await inbound(t, { from, text: 'Great, on my way', context: { id: wamid } });
    const replied = await stored(t, from, reply.id);
    expect(replied).toMatchObject({ type: 'text', text: 'Great, on my way', reaction: null });
    expect(replied.context).toEqual({
      messageId: ours.id,
      providerMessageId: wamid,
      forwarded: false,
      frequentlyForwarded: false,
      referredProduct: null,
    });
    // Our message and the answers are in one conversation.
    expect(replied.conversationId).toBe(
      (await call(env.app, 'GET', `/messages/${ours.id}`, { key: t.apiKey })).body.conversationId,
    );
  });

  it('a tap on a template’s quick reply points at the template, which joins the conversation it opens', async () => {
    const t = await newTenant('1.00');
    const from = '+14155552003';
    await metaApproved(t, 'order_shipped');
    const template = await send(t, {
      to: from,
      templateName: 'order_shipped',
      templateLanguage: 'en_US',
      parameters: ['Ann', 'A-1'],
    });
    expect(template.conversationId).toBeNull();
    await messageWhen(env.app, t.apiKey, template.id, 'sent');
    const wamid = env.fake.sent.find((s) => s.to === from)!.wamid;

    const { sent } = await inbound(t, {
      from,
      message: inboundMessages.templateButton({ text: 'Track it', payload: 'TRACK' }),
      context: { id: wamid },
    });
    const tapped = await stored(t, from, sent.id);
    expect(tapped).toMatchObject({
      type: 'button',
      button: { text: 'Track it', payload: 'TRACK' },
      context: { messageId: template.id, providerMessageId: wamid },
    });
    const after = await call(env.app, 'GET', `/messages/${template.id}`, { key: t.apiKey });
    expect(after.body.conversationId).toBe(tapped.conversationId);
  });
});

describe('a redelivered message', () => {
  it('is stored and emitted once, one after the other or at the same time', async () => {
    const t = await newTenant();
    const hook = await subscribe(t, ['message.received']);
    const from = '+14155552004';
    const payload = JSON.stringify(env.fake.inboundPayload(t.business, { from, text: 'Hello twice' }));
    const first = await env.fake.postCallback(callbackUrl(t), t.business, payload);
    const again = await env.fake.postCallback(callbackUrl(t), t.business, payload);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect([JSON.parse(first.body), JSON.parse(again.body)]).toEqual([
      { applied: 1, dropped: 0 },
      { applied: 0, dropped: 0 },
    ]);
    const messages = await inboundFrom(t, from);
    expect(messages).toHaveLength(1);
    const [event] = await hook.waitFor(1);
    expect(event!.json).toMatchObject({ type: 'message.received', data: { id: messages[0].id, from } });
    const [contact] = await contactOf(t, from);
    const conversations = await conversationsOf(t, contact.id);
    expect(conversations).toHaveLength(1);
    expect(conversations[0]).toMatchObject({ unreadCount: 1, lastMessage: { id: messages[0].id } });

    // The same payload three times at once, for new numbers (their contact and conversation made by
    // whichever wins) and for a known one.
    const atOnce = ['+14155552005', '+14155552010', '+14155552011', from];
    for (const phone of atOnce) {
      const body = JSON.stringify(
        env.fake.inboundPayload(t.business, { from: phone, text: 'Hello at once' }),
      );
      const answers = await Promise.all(
        [1, 2, 3].map(() => env.fake.postCallback(callbackUrl(t), t.business, body)),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(answers.map((a) => JSON.parse(a.body).applied).sort()).toEqual([0, 0, 1]);
      const wamid = JSON.parse(body).entry[0].changes[0].value.messages[0].id;
      expect((await inboundFrom(t, phone)).filter((m) => m.providerMessageId === wamid)).toHaveLength(1);
      const contacts = await contactOf(t, phone);
      expect(contacts).toHaveLength(1);
      const open = await conversationsOf(t, contacts[0].id);
      expect(open).toHaveLength(1);
      expect(open[0].unreadCount).toBe(phone === from ? 2 : 1);
    }
    await hook.waitFor(1 + atOnce.length);
    await sleep(500);
    const received = hook.received.map((r) => [r.json.type, r.json.data.from, r.json.data.text].join(' '));
    expect(received.sort()).toEqual(
      [
        `message.received ${from} Hello twice`,
        ...atOnce.map((phone) => `message.received ${phone} Hello at once`),
      ].sort(),
    );
  });
});

describe('a new number’s first message', () => {
  it('makes the contact with the profile name and opens its conversation and 24-hour window', async () => {
    const t = await newTenant();
    const hook = await subscribe(t, ['contact.created', 'conversation.opened', 'message.received']);
    const from = '+14155552006';
    const timestamp = unix(600);
    expect(await contactOf(t, from)).toEqual([]);
    const { sent, answer } = await inbound(t, { from, name: 'Ann Customer', text: 'Hi there', timestamp });
    expect(answer).toEqual({ applied: 1, dropped: 0 });

    const contacts = await contactOf(t, from);
    expect(contacts).toHaveLength(1);
    expect(contacts[0]).toMatchObject({ phone: from, name: 'Ann Customer', lastInboundAt: iso(timestamp) });
    const conversations = await conversationsOf(t, contacts[0].id);
    expect(conversations).toHaveLength(1);
    const message = await stored(t, from, sent.id);
    const view = await conversation(t, conversations[0].id);
    expect(view).toEqual(conversations[0]);
    expect(view).toMatchObject({
      contactId: contacts[0].id,
      phone: from,
      status: 'open',
      assigneeId: null,
      serviceWindowOpen: true,
      serviceWindowExpiresAt: iso(timestamp + 24 * 3600),
      lastInboundAt: iso(timestamp),
      unreadCount: 1,
      closedAt: null,
    });
    expect(view.lastMessage).toEqual(message);
    expect(message.conversationId).toBe(view.id);

    const events = await eventually(
      async () => hook.received.map((r) => r.json),
      (e) => e.length >= 3,
    );
    await sleep(300);
    expect(hook.received).toHaveLength(3);
    const byType = Object.fromEntries(events.map((e) => [e.type, e.data]));
    expect(Object.keys(byType).sort()).toEqual([
      'contact.created',
      'conversation.opened',
      'message.received',
    ]);
    expect(byType['contact.created']).toMatchObject({
      id: contacts[0].id,
      phone: from,
      name: 'Ann Customer',
      // Made by the message: its window is open from the start.
      lastInboundAt: iso(timestamp),
    });
    // The opened conversation as the API shows it: its window, its one unread message.
    expect(byType['conversation.opened']).toEqual(view);
    expect(byType['message.received']).toMatchObject({ id: message.id, text: 'Hi there', from });
  });
});

describe('several messages in one payload', () => {
  it('are all stored, in one conversation', async () => {
    const t = await newTenant();
    const from = '+14155552007';
    const timestamp = unix(120);
    const payload = env.fake.inboundPayload(t.business, { from, text: 'First', timestamp });
    const [firstMessage] = messagesOf(payload);
    const second = {
      ...firstMessage,
      id: newWamid(),
      timestamp: String(timestamp + 5),
      text: { body: 'Second' },
    };
    messagesOf(payload).push(second);
    const res = await env.fake.postCallback(callbackUrl(t), t.business, payload);
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ applied: 2, dropped: 0 });

    const a = await stored(t, from, firstMessage.id);
    const b = await stored(t, from, second.id);
    expect([a.text, b.text]).toEqual(['First', 'Second']);
    expect([a.sentAt, b.sentAt]).toEqual([iso(timestamp), iso(timestamp + 5)]);
    expect(a.conversationId).not.toBeNull();
    expect(b.conversationId).toBe(a.conversationId);
    const [contact] = await contactOf(t, from);
    const conversations = await conversationsOf(t, contact.id);
    expect(conversations.map((c) => c.id)).toEqual([a.conversationId]);
    expect(conversations[0]).toMatchObject({ unreadCount: 2, lastInboundAt: iso(timestamp + 5) });
    expect(conversations[0].lastMessage.id).toBe(b.id);
  });
});

describe('an inbound payload with a wrong signature', () => {
  it('is refused with 401 INVALID_SIGNATURE and stores nothing', async () => {
    const t = await newTenant();
    const from = '+14155552008';
    const body = JSON.stringify(env.fake.inboundPayload(t.business, { from, text: 'Forged' }));
    const post = async (signature: string | null): Promise<Reply> => {
      const res = await fetch(callbackUrl(t), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(signature === null ? {} : { 'x-hub-signature-256': signature }),
        },
        body,
      });
      return {
        status: res.status,
        body: await res.json(),
        headers: Object.fromEntries(res.headers),
      } as unknown as Reply;
    };
    const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expectError(await post(sign(randomBytes(16).toString('hex'))), 401, 'INVALID_SIGNATURE');
    expectError(await post(null), 401, 'INVALID_SIGNATURE');
    const wrong = await env.fake.postCallback(callbackUrl(t), t.business, body, { signature: 'wrong' });
    expect(wrong.status).toBe(401);
    const refusals = logs.map((l) => JSON.parse(l)).filter((l) => l.accountId === t.accountId);
    expect(refusals.map((l) => [l.level, l.reason])).toEqual([
      [40, 'mismatch'],
      [40, 'missing'],
      [40, 'mismatch'],
    ]);
    expect(await inboundFrom(t, from)).toEqual([]);
    expect(await contactOf(t, from)).toEqual([]);

    // Signed right, the same bytes are taken.
    const signed = await post(sign(t.business.appSecret));
    expect([signed.status, signed.body]).toEqual([200, { applied: 1, dropped: 0 }]);
    expect(await inboundFrom(t, from)).toHaveLength(1);
  });
});

describe('answering inside the customer service window', () => {
  it('a free-form text is accepted, charged as a service message, and joins the conversation', async () => {
    const t = await newTenant('1.00');
    const to = '+14155552009';
    const refused = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to, type: 'text', text: 'Hello?' },
    });
    expectError(refused, 422, 'CSW_VIOLATION');

    const { sent } = await inbound(t, { from: to, text: 'Can I change my booking?' });
    const theirs = await stored(t, to, sent.id);
    const ours = await send(t, { to, type: 'text', text: 'Of course, to when?' });
    expect(ours).toMatchObject({
      direction: 'outbound',
      type: 'text',
      text: 'Of course, to when?',
      to,
      contactId: theirs.contactId,
      conversationId: theirs.conversationId,
      // Meta charges service messages since 2026-10-01 (the shipped price book: US 0.0034).
      pricing: { category: 'service', charged: { amount: '0.0034' }, refunded: false },
    });
    await messageWhen(env.app, t.apiKey, ours.id, 'sent');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9966');
    const view = await conversation(t, theirs.conversationId);
    expect(view).toMatchObject({ unreadCount: 0, serviceWindowOpen: true, lastMessage: { id: ours.id } });
  });
});
