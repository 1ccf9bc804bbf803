// The sandbox speaks every kind of message a customer can send, stored and emitted exactly as the
// same message from Meta: each kind is posted once through POST /sandbox/inbound-messages (a
// sandbox key playing the customer) and once through Meta's signed callback (the fake Graph API's
// builders follow Meta's webhook reference), and the two messages the API shows are compared. Taps
// on buttons and list rows, quick replies and reactions point at the business's own message; what
// a customer could not have answered (another tenant's message, one sent to another number, one
// not sent yet) is refused.
import { beforeAll, describe, expect, it } from 'vitest';
import { type FakeBusiness, inboundMessages } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  eventually,
  type MessagingTenant,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

let base: string;
const env = useMessagingApp();
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

let numbers = 0;
const newNumber = () => `+1415555${String(4000 + numbers++).padStart(4, '0')}`;

type Sandbox = SandboxTenant;
const sandboxAccount = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

async function simulate(t: Sandbox, body: Record<string, unknown>) {
  return call(env.app, 'POST', '/sandbox/inbound-messages', { key: t.sandboxKey, body });
}

async function simulated(t: Sandbox, body: Record<string, unknown>) {
  const res = await simulate(t, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** The same message through Meta's callback into a WhatsApp account: as the API shows it. */
async function fromMeta(
  t: MessagingTenant & { business: FakeBusiness },
  from: string,
  message: Record<string, unknown>,
) {
  // With the sender's business-scoped user id, as Meta sends every message since April 2026.
  const userId = `US.${from.replace(/\D/g, '').padEnd(19, '7')}`;
  const payload = env.fake.inboundPayload(t.business, { from, userId, name: 'Ann', message });
  const res = await env.fake.postCallback(
    `${base}/api/v1/callbacks/whatsapp/${t.accountId}`,
    t.business,
    payload,
  );
  expect(res.status, res.body).toBe(200);
  const wamid = (payload.entry[0]!.changes[0]!.value as any).messages[0].id;
  const list = await call(env.app, 'GET', '/messages', {
    key: t.apiKey,
    query: { direction: 'inbound', to: from },
  });
  return list.body.data.find((m: any) => m.providerMessageId === wamid);
}

/** What must be the same whichever way the message came: all but ids, times and the channel. */
function comparable(m: any) {
  const {
    id,
    contactId,
    conversationId,
    channel,
    sandbox,
    providerMessageId,
    createdAt,
    sentAt,
    updatedAt,
    ...rest
  } = m;
  const media = rest.media && { ...rest.media, id: typeof rest.media.id, sha256: typeof rest.media.sha256 };
  // The user id is each business's own for the customer (the sandbox's, Meta's): compared by kind.
  return { ...rest, media, from: typeof rest.from, whatsappUserId: typeof rest.whatsappUserId };
}

describe('every kind a customer can send, as from Meta', () => {
  let sandbox: Sandbox;
  let live: MessagingTenant & { business: FakeBusiness };
  beforeAll(async () => {
    sandbox = await sandboxAccount();
    live = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  });

  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['text', { text: 'Do you ship to Canada?' }, inboundMessages.text({ body: 'Do you ship to Canada?' })],
    [
      'an image with a caption',
      { media: { kind: 'image', caption: 'the broken part' } },
      inboundMessages.image({ caption: 'the broken part' }),
    ],
    ['a voice note', { media: { kind: 'audio', voice: true } }, inboundMessages.audio({ voice: true })],
    [
      'a document',
      { media: { kind: 'document', filename: 'invoice.pdf' } },
      inboundMessages.document({ filename: 'invoice.pdf' }),
    ],
    [
      'an animated sticker',
      { media: { kind: 'sticker', animated: true } },
      inboundMessages.sticker({ animated: true }),
    ],
    [
      'a named place',
      {
        location: {
          latitude: 37.44216251868683,
          longitude: -122.16153582049394,
          name: 'Philz Coffee',
          address: '101 Forest Ave, Palo Alto, CA 94301',
          url: 'https://philzcoffee.com/',
        },
      },
      inboundMessages.location(),
    ],
    [
      'a dropped pin',
      { location: { latitude: 37.44216251868683, longitude: -122.16153582049394 } },
      inboundMessages.location({ name: null, address: null, url: null }),
    ],
    ['contact cards', { contacts: inboundMessages.contacts().contacts }, inboundMessages.contacts()],
  ];
  for (const [what, sandboxBody, metaMessage] of cases) {
    it(what, async () => {
      const number = newNumber();
      const viaSandbox = await simulated(sandbox, { from: number, name: 'Ann', ...sandboxBody });
      const viaMeta = await fromMeta(live, number, metaMessage);
      expect(comparable(viaSandbox)).toEqual(comparable(viaMeta));
      expect(viaSandbox).toMatchObject({
        status: 'received',
        direction: 'inbound',
        channel: 'sandbox',
        sandbox: true,
      });
    });
  }
});

describe("answers to the business's messages", () => {
  async function handedOver(t: Sandbox, body: Record<string, unknown>) {
    const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const sent = await eventually(
      () => call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey }),
      (r) => r.body.providerMessageId !== null,
    );
    return sent.body;
  }

  it('a tap on a reply button or a list row names the message and takes its title', async () => {
    const t = await sandboxAccount();
    const { receiver } = await env.subscribe(t.apiKey, ['message.received']);
    const number = newNumber();
    await simulated(t, { from: number, text: 'Can I move my appointment?' });
    const buttons = await handedOver(t, {
      to: number,
      type: 'interactive',
      interactive: {
        kind: 'buttons',
        body: 'Move it to?',
        buttons: [
          { id: 'tue', title: 'Tuesday' },
          { id: 'wed', title: 'Wednesday' },
        ],
      },
    });
    const tap = await simulated(t, { from: number, replyTo: buttons.id, interactive: { id: 'wed' } });
    expect(tap).toMatchObject({
      type: 'interactive',
      interactive: { kind: 'button_reply', id: 'wed', title: 'Wednesday', description: null },
      context: { messageId: buttons.id, providerMessageId: buttons.providerMessageId },
      conversationId: buttons.conversationId,
    });
    const list = await handedOver(t, {
      to: number,
      type: 'interactive',
      interactive: {
        kind: 'list',
        body: 'Pick a time',
        buttonText: 'Times',
        sections: [{ title: 'Wednesday', rows: [{ id: 'w9', title: '09:00', description: 'Dr. Lee' }] }],
      },
    });
    const row = await simulated(t, { from: number, replyTo: list.id, interactive: { id: 'w9' } });
    expect(row.interactive).toEqual({ kind: 'list_reply', id: 'w9', title: '09:00', description: 'Dr. Lee' });
    // Emitted as Meta's would be: message.received with the message as shown.
    const events = await receiver.waitFor(3);
    expect(events.map((e) => e.json.data.id)).toContain(row.id);

    expectError(
      await simulate(t, { from: number, replyTo: list.id, interactive: { id: 'nope' } }),
      400,
      'INVALID_REQUEST',
    );
    expectError(await simulate(t, { from: number, interactive: { id: 'w9' } }), 400, 'INVALID_REQUEST');
  });

  it("a tap on a template's quick-reply button, and a reaction (and its removal)", async () => {
    const t = await sandboxAccount();
    await approvedTemplate(env.app, t.apiKey, {
      name: 'confirm_visit',
      components: [
        {
          type: 'BODY',
          text: 'Your visit is tomorrow at {{1}}. See you then!',
          example: { body_text: [['10:00']] },
        },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Confirm' },
            { type: 'QUICK_REPLY', text: 'Cancel' },
          ],
        },
      ],
    });
    const number = newNumber();
    const reminder = await handedOver(t, {
      to: number,
      templateName: 'confirm_visit',
      templateLanguage: 'en_US',
      parameters: ['10:00'],
    });
    const confirm = await simulated(t, { from: number, replyTo: reminder.id, button: { text: 'Confirm' } });
    expect(confirm).toMatchObject({
      type: 'button',
      button: { text: 'Confirm', payload: 'Confirm' },
      context: { messageId: reminder.id },
    });
    expectError(
      await simulate(t, { from: number, replyTo: reminder.id, button: { text: 'Maybe' } }),
      400,
      'INVALID_REQUEST',
    );
    const liked = await simulated(t, {
      from: number,
      reaction: { messageId: reminder.id, emoji: '\u{1F44D}' },
    });
    expect(liked).toMatchObject({
      type: 'reaction',
      reaction: { messageId: reminder.id, providerMessageId: reminder.providerMessageId, emoji: '\u{1F44D}' },
    });
    const unliked = await simulated(t, { from: number, reaction: { messageId: reminder.id, emoji: '' } });
    expect(unliked.reaction.emoji).toBe('');
  });

  it('refuses what the customer could not have sent, and stores nothing for it', async () => {
    const t = await sandboxAccount();
    const other = await sandboxAccount();
    const number = newNumber();
    await simulated(t, { from: number, text: 'hi' });
    const mine = await handedOver(t, { to: number, type: 'text', text: 'Hello!' });
    await simulated(other, { from: number, text: 'hi' });
    const theirs = await handedOver(other, { to: number, type: 'text', text: 'Hello from B' });
    const before = (await call(env.app, 'GET', '/messages', { key: t.apiKey })).body.data.length;

    const none = await simulate(t, { from: number });
    expectError(none, 400, 'INVALID_REQUEST');
    const two = await simulate(t, { from: number, text: 'hi', location: { latitude: 1, longitude: 2 } });
    expectError(two, 400, 'INVALID_REQUEST');
    expect(two.body.error.details.map((d: any) => d.field)).toEqual(['text', 'location']);
    expectError(
      await simulate(t, { from: number, reaction: { messageId: theirs.id, emoji: '!' } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await simulate(t, { from: newNumber(), replyTo: mine.id, text: 'me too' }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await simulate(t, { from: number, media: { kind: 'audio', caption: 'no captions on audio' } }),
      400,
      'INVALID_REQUEST',
    );
    // Not sent yet (the workers are stopped): nobody can have answered it.
    await env.app.ctx.jobs.stop(5000);
    try {
      const queued = await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { to: number, type: 'text', text: 'Soon' },
      });
      expectError(await simulate(t, { from: number, replyTo: queued.body.id, text: 'ok' }), 409, 'CONFLICT');
    } finally {
      await env.app.ctx.jobs.start();
      await env.app.ctx.jobs.runWorkers();
    }
    const after = (await call(env.app, 'GET', '/messages', { key: t.apiKey })).body.data;
    expect(after.filter((m: any) => m.direction === 'inbound')).toHaveLength(1);
    expect(after.length).toBe(before + 1);
  });
});
