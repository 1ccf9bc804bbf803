// Customers' messages from Meta's `messages` webhook, every documented type, parsed into Tidings'
// InboundMessage without losing a field: each case compares the whole object, so a field dropped or
// added fails. What Tidings does not model is kept whole; malformed messages never throw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  InboundContent,
  InboundMessage,
  InboundType,
  ProviderUpdate,
} from '../../src/channels/types.ts';
import { parseCallback } from '../../src/channels/whatsapp-cloud/callbacks.ts';
import { parseInboundMessage } from '../../src/channels/whatsapp-cloud/inbound.ts';
import { type FakeBusiness, FakeWhatsAppCloud, inboundMessages } from '../fakes/whatsapp-cloud.ts';

const FROM = '+16505551234';
const AT = 1_749_416_383;

let fake: FakeWhatsAppCloud;
let business: FakeBusiness;

beforeAll(async () => {
  fake = await FakeWhatsAppCloud.start();
  business = fake.createBusiness();
});

afterAll(async () => {
  await fake.close();
});

type Payload = ReturnType<FakeWhatsAppCloud['inboundPayload']>;

/** The messages of a payload as the fake built them (their wamids are random). */
function sentMessages(payload: Payload): any[] {
  return (payload.entry[0]!.changes[0]!.value as any).messages;
}

/** One message of the given Meta shape, through parseCallback: its payload and the one update. */
function receive(message: Record<string, unknown>, extra: { context?: { id: string } } = {}) {
  const payload = fake.inboundPayload(business, {
    from: FROM,
    name: 'Sheena Nelson',
    timestamp: AT,
    message,
    ...extra,
  });
  const updates = parseCallback(payload);
  expect(updates).toHaveLength(1);
  return { sent: sentMessages(payload)[0], update: updates[0]! };
}

/** The update a well-formed message must give: only its type and content vary between cases. */
function expected(
  sent: { id: string },
  type: InboundType,
  content: InboundContent,
  replyTo: string | null = null,
): ProviderUpdate {
  const message: InboundMessage = {
    providerMessageId: sent.id,
    from: FROM,
    waId: FROM.slice(1),
    profileName: 'Sheena Nelson',
    sentAt: new Date(AT * 1000),
    type,
    content,
    replyTo,
  };
  return { kind: 'inbound_message', message };
}

const WAMID = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA';

describe('each documented type', () => {
  it('text', () => {
    const { sent, update } = receive(inboundMessages.text({ body: 'Do you ship to Canada?' }));
    expect(sent).toMatchObject({ type: 'text', text: { body: 'Do you ship to Canada?' } });
    expect(sent).not.toHaveProperty('context');
    expect(update).toEqual(expected(sent, 'text', { text: { body: 'Do you ship to Canada?' } }));
  });

  it('a text that quotes an earlier message: replyTo is its wamid', () => {
    const { sent, update } = receive(inboundMessages.text({ body: 'This one' }), { context: { id: WAMID } });
    expect(sent.context).toEqual({ from: business.displayPhoneNumber.replace(/\D/g, ''), id: WAMID });
    expect(update).toEqual(expected(sent, 'text', { text: { body: 'This one' } }, WAMID));
  });

  it('image, with caption', () => {
    const image = inboundMessages.image({ id: '1479537139650973', caption: 'The best succulent ever?' });
    expect(image).toEqual({
      type: 'image',
      image: {
        caption: 'The best succulent ever?',
        mime_type: 'image/jpeg',
        sha256: expect.any(String),
        id: '1479537139650973',
      },
    });
    const { sent, update } = receive(image);
    expect(sent).not.toHaveProperty('text');
    expect(update).toEqual(
      expected(sent, 'media', {
        media: {
          kind: 'image',
          id: '1479537139650973',
          mimeType: 'image/jpeg',
          sha256: image.image.sha256,
          caption: 'The best succulent ever?',
          filename: null,
          voice: false,
          animated: false,
        },
      }),
    );
  });

  it('image without caption, with the download url newer webhooks add', () => {
    const image = inboundMessages.image({ mimeType: 'image/png', url: 'https://lookaside.fbsbx.com/x' });
    const { sent, update } = receive(image);
    expect(update).toEqual(
      expected(sent, 'media', {
        media: {
          kind: 'image',
          id: image.image.id,
          mimeType: 'image/png',
          sha256: image.image.sha256,
          caption: null,
          filename: null,
          voice: false,
          animated: false,
        },
      }),
    );
  });

  it('video', () => {
    const video = inboundMessages.video({ caption: 'Unboxing' });
    const { sent, update } = receive(video);
    expect(update).toEqual(
      expected(sent, 'media', {
        media: {
          kind: 'video',
          id: video.video.id,
          mimeType: 'video/mp4',
          sha256: video.video.sha256,
          caption: 'Unboxing',
          filename: null,
          voice: false,
          animated: false,
        },
      }),
    );
  });

  it('audio: a voice note, and an audio file', () => {
    const note = inboundMessages.audio({ voice: true });
    expect(note.audio).toMatchObject({ mime_type: 'audio/ogg; codecs=opus', voice: true });
    const voice = receive(note);
    expect(voice.update).toEqual(
      expected(voice.sent, 'media', {
        media: {
          kind: 'audio',
          id: note.audio.id,
          mimeType: 'audio/ogg; codecs=opus',
          sha256: note.audio.sha256,
          caption: null,
          filename: null,
          voice: true,
          animated: false,
        },
      }),
    );
    const file = inboundMessages.audio();
    const song = receive(file);
    expect(song.update).toEqual(
      expected(song.sent, 'media', {
        media: {
          kind: 'audio',
          id: file.audio.id,
          mimeType: 'audio/mpeg',
          sha256: file.audio.sha256,
          caption: null,
          filename: null,
          voice: false,
          animated: false,
        },
      }),
    );
  });

  it('document, with filename and caption', () => {
    const document = inboundMessages.document({ filename: 'lucky-shrub-invoice.pdf', caption: 'March' });
    const { sent, update } = receive(document);
    expect(update).toEqual(
      expected(sent, 'media', {
        media: {
          kind: 'document',
          id: document.document.id,
          mimeType: 'application/pdf',
          sha256: document.document.sha256,
          caption: 'March',
          filename: 'lucky-shrub-invoice.pdf',
          voice: false,
          animated: false,
        },
      }),
    );
  });

  it('sticker: animated or not', () => {
    for (const animated of [true, false]) {
      const sticker = inboundMessages.sticker({ animated });
      const { sent, update } = receive(sticker);
      expect(update).toEqual(
        expected(sent, 'media', {
          media: {
            kind: 'sticker',
            id: sticker.sticker.id,
            mimeType: 'image/webp',
            sha256: sticker.sticker.sha256,
            caption: null,
            filename: null,
            voice: false,
            animated,
          },
        }),
      );
    }
  });

  it('a reply button tapped: the message it was on is replyTo', () => {
    const { sent, update } = receive(inboundMessages.buttonReply({ id: 'yes-1', title: 'Yes' }), {
      context: { id: WAMID },
    });
    expect(update).toEqual(
      expected(
        sent,
        'interactive',
        { interactive: { kind: 'button_reply', id: 'yes-1', title: 'Yes', description: null } },
        WAMID,
      ),
    );
  });

  it('a list row chosen, with and without description', () => {
    const described = receive(inboundMessages.listReply({ description: 'Next Day to 2 Days' }), {
      context: { id: WAMID },
    });
    expect(described.update).toEqual(
      expected(
        described.sent,
        'interactive',
        {
          interactive: {
            kind: 'list_reply',
            id: 'priority_express',
            title: 'Priority Mail Express',
            description: 'Next Day to 2 Days',
          },
        },
        WAMID,
      ),
    );
    const plain = receive(inboundMessages.listReply({ id: 'ground', title: 'Ground' }));
    expect(plain.update).toEqual(
      expected(plain.sent, 'interactive', {
        interactive: { kind: 'list_reply', id: 'ground', title: 'Ground', description: null },
      }),
    );
  });

  it("a template's quick-reply button", () => {
    const { sent, update } = receive(
      inboundMessages.templateButton({ text: 'Stop promotions', payload: 'STOP' }),
      {
        context: { id: WAMID },
      },
    );
    expect(update).toEqual(
      expected(sent, 'button', { button: { text: 'Stop promotions', payload: 'STOP' } }, WAMID),
    );
  });

  it('a reaction, and one taken back (no emoji)', () => {
    const added = receive(inboundMessages.reaction({ messageId: WAMID, emoji: '❤️' }));
    expect(added.update).toEqual(
      expected(added.sent, 'reaction', {
        reaction: { providerMessageId: WAMID, messageId: null, emoji: '❤️' },
      }),
    );
    const removed = receive(inboundMessages.reaction({ messageId: WAMID, emoji: null }));
    expect(removed.sent.reaction).toEqual({ message_id: WAMID });
    expect(removed.update).toEqual(
      expected(removed.sent, 'reaction', {
        reaction: { providerMessageId: WAMID, messageId: null, emoji: '' },
      }),
    );
  });

  it('a named place, and a dropped pin', () => {
    const place = receive(inboundMessages.location());
    expect(place.update).toEqual(
      expected(place.sent, 'location', {
        location: {
          latitude: 37.44216251868683,
          longitude: -122.16153582049394,
          name: 'Philz Coffee',
          address: '101 Forest Ave, Palo Alto, CA 94301',
          url: 'https://philzcoffee.com/',
        },
      }),
    );
    const pin = receive(
      inboundMessages.location({
        latitude: -33.8688,
        longitude: 151.2093,
        name: null,
        address: null,
        url: null,
      }),
    );
    expect(pin.sent.location).toEqual({ latitude: -33.8688, longitude: 151.2093 });
    expect(pin.update).toEqual(
      expected(pin.sent, 'location', {
        location: { latitude: -33.8688, longitude: 151.2093, name: null, address: null, url: null },
      }),
    );
  });

  it('contact cards, kept as Meta sends them', () => {
    const cards = inboundMessages.contacts();
    const { sent, update } = receive(cards);
    expect(update).toEqual(expected(sent, 'contacts', { contacts: cards.contacts }));
    expect(cards.contacts[0]).toMatchObject({
      name: { formatted_name: 'Barbara J. Johnson' },
      phones: [{ wa_id: '19405551234' }, { type: 'WORK' }],
      emails: [{ email: 'bjohnson@luckyshrub.com' }],
      org: { company: 'Lucky Shrub' },
    });
  });
});

describe('what Tidings does not model is kept whole', () => {
  it.each([
    ['unsupported', inboundMessages.unsupported()],
    ['order', inboundMessages.order()],
    [
      // A number or user id change is not kept as a message (identity_change: whatsapp-identity.test.ts).
      'a system message of another kind',
      {
        type: 'system',
        system: { body: 'Something happened', type: 'some_future_notice' },
      },
    ],
    ['a future type', { type: 'hologram', hologram: { id: '1' } }],
    [
      'a Flows reply (interactive nfm_reply)',
      { type: 'interactive', interactive: { type: 'nfm_reply', nfm_reply: { response_json: '{}' } } },
    ],
  ])('%s', (_name, message) => {
    const { sent, update } = receive(message);
    expect(update).toEqual(
      expected(sent, 'unsupported', { unsupported: { providerType: message.type, raw: sent } }),
    );
    // raw is Meta's message itself, every field of it.
    expect(update.kind === 'inbound_message' && (update.message.content as any).unsupported.raw).toBe(sent);
  });

  it('the unsupported builder is as Meta documents it', () => {
    expect(inboundMessages.unsupported()).toEqual({
      type: 'unsupported',
      errors: [
        {
          code: 131051,
          title: 'Message type unknown',
          message: 'Message type unknown',
          error_data: { details: 'Message type is currently not supported.' },
        },
      ],
      unsupported: { type: 'poll_creation' },
    });
  });

  it.each([
    ['text without body', { type: 'text', text: {} }, 'text'],
    ['text body not a string', { type: 'text', text: { body: 42 } }, 'text'],
    ['image without id', { type: 'image', image: { mime_type: 'image/jpeg', sha256: 'x' } }, 'image'],
    ['image not an object', { type: 'image', image: 'cat.jpg' }, 'image'],
    ['document missing', { type: 'document' }, 'document'],
    [
      'button reply without title',
      { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'a' } } },
      'interactive',
    ],
    ['list reply missing', { type: 'interactive', interactive: { type: 'list_reply' } }, 'interactive'],
    ['template button without text', { type: 'button', button: { payload: 'STOP' } }, 'button'],
    ['reaction without message_id', { type: 'reaction', reaction: { emoji: '👍' } }, 'reaction'],
    [
      'reaction emoji not a string',
      { type: 'reaction', reaction: { message_id: WAMID, emoji: 1 } },
      'reaction',
    ],
    [
      'location latitude as text',
      { type: 'location', location: { latitude: '37.4', longitude: -122.1 } },
      'location',
    ],
    ['location out of range', { type: 'location', location: { latitude: 91, longitude: 0 } }, 'location'],
    ['contacts empty', { type: 'contacts', contacts: [] }, 'contacts'],
    ['contacts not cards', { type: 'contacts', contacts: ['Barbara'] }, 'contacts'],
    ['type not a string', { type: 7 }, ''],
  ])('a malformed known type (%s) is unsupported, not dropped', (_name, message, providerType) => {
    const { sent, update } = receive(message as Record<string, unknown>);
    expect(update).toEqual(expected(sent, 'unsupported', { unsupported: { providerType, raw: sent } }));
  });
});

describe('malformed messages never throw', () => {
  it.each([
    ['without id', { id: undefined }],
    ['with an empty id', { id: '' }],
    ['without from', { from: undefined }],
    ['with from not a number', { from: 'sheena' }],
    ['without timestamp', { timestamp: undefined }],
    ['with a timestamp not in seconds', { timestamp: '2025-06-08T12:00:00Z' }],
  ])('a message %s is unknown, kept whole', (_name, override) => {
    const payload = fake.inboundPayload(business, {
      from: FROM,
      message: { ...inboundMessages.text(), ...override },
    });
    const [sent] = sentMessages(payload);
    expect(parseCallback(payload)).toEqual([{ kind: 'unknown', field: 'messages', raw: sent }]);
  });

  it.each([null, undefined, 'text', 42, true, [], [{ id: 'x' }], {}])(
    'parseInboundMessage(%j) is null',
    (message) => {
      expect(parseInboundMessage(message, null)).toBeNull();
    },
  );

  it('non-objects in value.messages are unknown updates, in place', () => {
    const payload = fake.inboundPayload(business, { from: FROM, timestamp: AT });
    const value = payload.entry[0]!.changes[0]!.value as any;
    value.messages = ['hello', null, value.messages[0], 7];
    const updates = parseCallback(payload);
    expect(updates.map((u) => u.kind)).toEqual(['unknown', 'unknown', 'inbound_message', 'unknown']);
    expect(updates[0]).toEqual({ kind: 'unknown', field: 'messages', raw: 'hello' });
  });

  it('hostile shapes: nested nulls, arrays for objects, a throwing getter', () => {
    const base = { from: '16505551234', id: 'wamid.x', timestamp: String(AT) };
    const shapes: unknown[] = [
      { ...base, type: 'image', image: null },
      { ...base, type: 'interactive', interactive: [] },
      { ...base, type: 'location', location: { latitude: Number.NaN, longitude: Number.POSITIVE_INFINITY } },
      { ...base, type: '__proto__' },
      { ...base, type: 'constructor' },
      { ...base, type: 'text', text: { body: 'hi' }, context: 'not an object' },
      JSON.parse(`{"from":"1","id":"w","timestamp":"1","type":"text","text":{"__proto__":{"body":"x"}}}`),
      Object.defineProperty({ ...base }, 'type', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      }),
    ];
    for (const shape of shapes) {
      expect(() => parseInboundMessage(shape, { profile: 'not an object' })).not.toThrow();
      expect(() =>
        parseCallback({
          object: 'whatsapp_business_account',
          entry: [{ changes: [{ field: 'messages', value: { messages: [shape] } }] }],
        }),
      ).not.toThrow();
    }
    // A context that is no object is no reply; a proto-named type is unsupported like any other.
    expect(parseInboundMessage(shapes[5], null)?.replyTo).toBeNull();
    expect(parseInboundMessage(shapes[3], null)?.type).toBe('unsupported');
  });
});

describe('the payload around the messages', () => {
  it('two messages in one payload give two updates, in order', () => {
    const payload = fake.inboundPayload(business, {
      from: FROM,
      name: 'Sheena Nelson',
      timestamp: AT,
      message: inboundMessages.text({ body: 'first' }),
    });
    const value = payload.entry[0]!.changes[0]!.value as any;
    const second = {
      ...value.messages[0],
      id: `${value.messages[0].id}2`,
      ...inboundMessages.reaction({ messageId: WAMID }),
    };
    delete second.text;
    value.messages.push(second);
    expect(parseCallback(payload)).toEqual([
      expected(value.messages[0], 'text', { text: { body: 'first' } }),
      expected(second, 'reaction', {
        reaction: { providerMessageId: WAMID, messageId: null, emoji: '\u{1F44D}' },
      }),
    ]);
  });

  it("each message's profile name is its sender's contact", () => {
    const payload = fake.inboundPayload(business, { from: FROM, name: 'Sheena Nelson', timestamp: AT });
    const value = payload.entry[0]!.changes[0]!.value as any;
    const other = { ...value.messages[0], from: '447700900123', id: 'wamid.other', text: { body: 'hi' } };
    value.messages.push(other);
    value.contacts = [{ profile: { name: 'Ravi' }, wa_id: '447700900123' }, ...value.contacts];
    const updates = parseCallback(payload) as Extract<ProviderUpdate, { kind: 'inbound_message' }>[];
    expect(updates.map((u) => [u.message.from, u.message.profileName])).toEqual([
      [FROM, 'Sheena Nelson'],
      ['+447700900123', 'Ravi'],
    ]);
  });

  it('a lone contact whose wa_id differs from the number is still the sender', () => {
    const payload = fake.inboundPayload(business, { from: '+5215512345678', name: 'Lupita', timestamp: AT });
    const value = payload.entry[0]!.changes[0]!.value as any;
    value.contacts[0].wa_id = '525512345678';
    const [update] = parseCallback(payload);
    expect(update?.kind === 'inbound_message' && update.message.profileName).toBe('Lupita');
  });

  it('no contact, or one without a name: profileName null', () => {
    const payload = fake.inboundPayload(business, { from: FROM, timestamp: AT });
    const value = payload.entry[0]!.changes[0]!.value as any;
    value.contacts = [];
    const [update] = parseCallback(payload);
    expect(update?.kind === 'inbound_message' && update.message.profileName).toBeNull();
    value.contacts = [{ wa_id: '16505551234', profile: {} }];
    const [again] = parseCallback(payload);
    expect(again?.kind === 'inbound_message' && again.message.profileName).toBeNull();
  });

  it('statuses and messages in one change: statuses first, as before', () => {
    const payload = fake.inboundPayload(business, { from: FROM, timestamp: AT });
    const value = payload.entry[0]!.changes[0]!.value as any;
    value.statuses = [{ id: WAMID, status: 'read', timestamp: String(AT), recipient_id: '16505551234' }];
    expect(parseCallback(payload).map((u) => u.kind)).toEqual(['message_status', 'inbound_message']);
  });
});
