// What a sandbox key's simulated customer can send (POST /sandbox/inbound-messages), turned into
// the InboundMessage the WhatsApp Cloud API's callback would give for the same message, so that it
// is stored and emitted exactly as one from Meta (inbound.ts): a text, a tap on a reply button or
// a list row of one of the business's interactive messages, a tap on a template's quick-reply
// button, media, a location, contact cards, or a reaction. What a customer answers must be a
// message the business sent to that same customer (their number or user id), and already sent: a
// customer cannot answer, or react to, a message that has not reached them. The customer is named
// as Meta names them (channels/sandbox/user-ids.ts): their number and user id, or, for a customer
// with a username who withholds the number, the user id and username alone.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { type Static, Type } from 'typebox';
import type { InboundContent, InboundMediaKind, InboundMessage, InboundType } from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import { WHATSAPP_USER_ID_PATTERN } from '../../kernel/values/whatsapp-user-ids.ts';
import { invalidFields } from '../contacts/index.ts';
import { findMessage, type MessageRow, type OutboundContent } from '../messages/index.ts';
import { findTemplate } from '../templates/index.ts';

const MessageId = Type.String({ minLength: 1, maxLength: 100, examples: ['msg_01jv4e2k7qf3x8m2n5p6r9s0tb'] });
const Text = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) });

const CONTENT_KEYS = ['text', 'interactive', 'button', 'media', 'location', 'contacts', 'reaction'] as const;

export const SandboxInboundBody = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description:
          "The customer's number (E.164; without a country code, the account's country's). The sandbox gives them their user id, as Meta does. A test number +1 NXX 555-011Y is a customer with a username who withholds the number: the message comes with the user id and username only.",
        examples: ['+14155550123'],
      }),
    ),
    whatsappUserId: Type.Optional(
      Type.String({
        pattern: WHATSAPP_USER_ID_PATTERN,
        maxLength: 131,
        description:
          'Instead of `from` (or beside it): the customer by their WhatsApp user id. Without `from`, a customer who did not share their number writes in.',
        examples: ['US.13491208655302741918'],
      }),
    ),
    username: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 35,
        pattern: '^[a-z0-9._]+$',
        description: "The customer's WhatsApp username (a–z, 0–9, . and _).",
      }),
    ),
    name: Type.Optional(Text(200, "The customer's profile name (a new contact's name).")),
    replyTo: Type.Optional({
      ...MessageId,
      description:
        'The id of the message of yours this one answers (WhatsApp’s context): required with `interactive` and `button`. It must have been sent to this number.',
    }),
    text: Type.Optional(Text(4096, 'What the customer writes.')),
    interactive: Type.Optional(
      Type.Object(
        {
          id: Text(256, 'The id of the reply button, or of the list row, tapped in your `replyTo` message.'),
        },
        {
          additionalProperties: false,
          description: 'A tap on your interactive message: its title comes from it.',
        },
      ),
    ),
    button: Type.Optional(
      Type.Object(
        {
          text: Text(25, 'The label of a quick-reply button of your `replyTo` template message.'),
          payload: Type.Optional(Text(256, 'The payload your send set (else the label).')),
        },
        { additionalProperties: false, description: 'A tap on a template’s quick-reply button.' },
      ),
    ),
    media: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([
            Type.Literal('image'),
            Type.Literal('video'),
            Type.Literal('audio'),
            Type.Literal('document'),
            Type.Literal('sticker'),
          ]),
          caption: Type.Optional(Text(1024, 'Image, video and document only.')),
          filename: Type.Optional(Text(240, 'Document only.')),
          mimeType: Type.Optional(Text(100, "Else the kind's usual one.")),
          voice: Type.Optional(Type.Boolean({ description: 'Audio recorded as a voice note.' })),
          animated: Type.Optional(Type.Boolean({ description: 'An animated sticker.' })),
          id: Type.Optional(
            Type.String({
              maxLength: 100,
              description:
                'An upload of yours (med_…, of this kind) as the file the customer sends: GET /messages/{id}/media then gives its bytes. Without it no file exists.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description: 'A file the customer sends (no file is kept: the sandbox gives it an id).',
        },
      ),
    ),
    location: Type.Optional(
      Type.Object(
        {
          latitude: Type.Number({ minimum: -90, maximum: 90 }),
          longitude: Type.Number({ minimum: -180, maximum: 180 }),
          name: Type.Optional(Text(1000)),
          address: Type.Optional(Text(1000)),
          url: Type.Optional(Text(2000)),
        },
        { additionalProperties: false, description: 'A shared place (a dropped pin has coordinates only).' },
      ),
    ),
    contacts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.Object(
              { formatted_name: Text(512) },
              {
                additionalProperties: true,
                description: 'WhatsApp’s name object: formatted_name, first_name, …',
              },
            ),
          },
          {
            additionalProperties: true,
            description: 'A contact card in WhatsApp’s shape (name, phones, emails, addresses, org, urls).',
          },
        ),
        { minItems: 1, maxItems: 20 },
      ),
    ),
    reaction: Type.Optional(
      Type.Object(
        {
          messageId: {
            ...MessageId,
            description: 'Your message reacted to; it must have been sent to this number.',
          },
          emoji: Type.String({ maxLength: 20, description: 'Empty: the reaction is taken back.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: `Exactly one of ${CONTENT_KEYS.map((k) => `\`${k}\``).join(', ')}.`,
  },
);

export type SandboxInbound = Static<typeof SandboxInboundBody>;

const MIME_TYPES: Record<InboundMediaKind, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  document: 'application/pdf',
  sticker: 'image/webp',
};

/** The simulated customer: their number (null: withheld) and user id, as the message carries them. */
export interface SandboxCustomer {
  phone: string | null;
  userId: string | null;
  username: string | null;
  /** Every address the customer is written to at: their number (withheld or not) and user id. */
  addresses: string[];
}

/** One of the account's messages that the customer can answer: sent to them, and sent. */
async function answerable(
  sql: Sql,
  accountId: string,
  id: string,
  customer: SandboxCustomer,
  field: string,
): Promise<MessageRow> {
  const message = await findMessage(sql, accountId, id);
  if (message?.direction !== 'outbound') throw notFound('message');
  if (!customer.addresses.includes(message.phone ?? message.whatsapp_user_id ?? ''))
    throw invalidFields([{ field, issue: 'names a message sent to another customer' }]);
  if (!message.provider_message_id) {
    throw conflict('The message has not been sent yet: the customer cannot answer it.', [
      { field, issue: 'has not been sent yet' },
    ]);
  }
  return message;
}

/** The reply button or list row `id` of an interactive message of ours. */
function tapped(message: MessageRow, id: string): Extract<InboundContent, { interactive: unknown }> {
  const content = message.content as OutboundContent;
  if (!('interactive' in content)) {
    throw invalidFields([
      { field: 'replyTo', issue: 'is not an interactive message (interactive needs one)' },
    ]);
  }
  const sent = content.interactive as {
    kind: string;
    buttons?: { id: string; title: string }[];
    sections?: { rows: { id: string; title: string; description?: string }[] }[];
  };
  const button = sent.buttons?.find((b) => b.id === id);
  if (button) return { interactive: { kind: 'button_reply', id, title: button.title, description: null } };
  const row = sent.sections?.flatMap((s) => s.rows).find((r) => r.id === id);
  if (row) {
    return {
      interactive: { kind: 'list_reply', id, title: row.title, description: row.description ?? null },
    };
  }
  throw invalidFields([{ field: 'interactive.id', issue: 'is not a button or row of the replyTo message' }]);
}

/** A quick-reply button of the template our message used (any label if the template is gone). */
async function quickReply(sql: Sql, message: MessageRow, input: NonNullable<SandboxInbound['button']>) {
  if (!message.template_id) {
    throw invalidFields([{ field: 'replyTo', issue: 'is not a template message (button needs one)' }]);
  }
  const template = await findTemplate(sql, message.account_id, message.template_id);
  const labels = (template?.components ?? []).flatMap((c) =>
    c.type === 'BUTTONS' ? c.buttons.flatMap((b) => (b.type === 'QUICK_REPLY' ? [b.text] : [])) : [],
  );
  if (template && !labels.includes(input.text)) {
    throw invalidFields([
      { field: 'button.text', issue: "is not a quick-reply button of the replyTo message's template" },
    ]);
  }
  return { button: { text: input.text, payload: input.payload ?? input.text } };
}

function mediaOf(input: NonNullable<SandboxInbound['media']>): InboundContent {
  const issues = [
    ...(input.caption !== undefined && (input.kind === 'audio' || input.kind === 'sticker')
      ? [{ field: 'media.caption', issue: `is not for ${input.kind}` }]
      : []),
    ...(input.filename !== undefined && input.kind !== 'document'
      ? [{ field: 'media.filename', issue: 'is for documents only' }]
      : []),
    ...(input.voice !== undefined && input.kind !== 'audio'
      ? [{ field: 'media.voice', issue: 'is for audio only' }]
      : []),
    ...(input.animated !== undefined && input.kind !== 'sticker'
      ? [{ field: 'media.animated', issue: 'is for stickers only' }]
      : []),
  ];
  if (issues.length > 0) throw invalidFields(issues);
  const voice = input.voice === true;
  return {
    media: {
      kind: input.kind,
      // Meta's media ids are digits; its sha256 is the file's, in base64 (here: of random bytes).
      id: `${randomInt(1, 10)}${Array.from({ length: 15 }, () => randomInt(0, 10)).join('')}`,
      mimeType: input.mimeType ?? (voice ? 'audio/ogg; codecs=opus' : MIME_TYPES[input.kind]),
      sha256: createHash('sha256').update(randomBytes(32)).digest('base64'),
      caption: input.caption ?? null,
      filename: input.filename ?? null,
      voice,
      animated: input.animated === true,
    },
  };
}

/** The customer's media; with `id`, an upload of the account as its file (modules/media copies it). */
async function sentUpload(
  sql: Sql,
  accountId: string,
  input: NonNullable<SandboxInbound['media']>,
): Promise<InboundContent> {
  const { id, ...rest } = input;
  const content = mediaOf(rest) as Extract<InboundContent, { media: unknown }>;
  if (id === undefined) return content;
  const { rows } = await sql.query<{
    kind: string;
    mime_type: string | null;
    sha256: string | null;
    filename: string | null;
  }>(
    `SELECT kind, mime_type, sha256, filename FROM media
      WHERE account_id = $1 AND id = $2 AND direction = 'uploaded' AND status = 'ready' AND expires_at > now()`,
    [accountId, id],
  );
  const upload = rows[0];
  if (!upload)
    throw invalidFields([
      { field: 'media.id', issue: 'is not an upload of this account (unknown, deleted or expired)' },
    ]);
  if (upload.kind !== input.kind)
    throw invalidFields([
      { field: 'media.kind', issue: `must be ${upload.kind}: the kind media.id was uploaded as` },
    ]);
  return {
    media: {
      ...content.media,
      id,
      mimeType: input.mimeType ?? upload.mime_type ?? content.media.mimeType,
      sha256: upload.sha256,
      filename: input.kind === 'document' ? (input.filename ?? upload.filename) : content.media.filename,
    },
  };
}

/** The type and content of the message, from the one content key the body has. */
async function contentOf(
  sql: Sql,
  accountId: string,
  customer: SandboxCustomer,
  body: SandboxInbound,
  replyTo: MessageRow | null,
): Promise<{ type: InboundType; content: InboundContent }> {
  if (body.text !== undefined) return { type: 'text', content: { text: { body: body.text } } };
  if (body.interactive) {
    if (!replyTo) throw invalidFields([{ field: 'replyTo', issue: 'is required with interactive' }]);
    return { type: 'interactive', content: tapped(replyTo, body.interactive.id) };
  }
  if (body.button) {
    if (!replyTo) throw invalidFields([{ field: 'replyTo', issue: 'is required with button' }]);
    return { type: 'button', content: await quickReply(sql, replyTo, body.button) };
  }
  if (body.media) return { type: 'media', content: await sentUpload(sql, accountId, body.media) };
  if (body.location) {
    const { latitude, longitude, name, address, url } = body.location;
    return {
      type: 'location',
      content: {
        location: { latitude, longitude, name: name ?? null, address: address ?? null, url: url ?? null },
      },
    };
  }
  if (body.contacts) return { type: 'contacts', content: { contacts: body.contacts } };
  const reaction = body.reaction!;
  const target = await answerable(sql, accountId, reaction.messageId, customer, 'reaction.messageId');
  return {
    type: 'reaction',
    content: {
      reaction: { providerMessageId: target.provider_message_id!, messageId: null, emoji: reaction.emoji },
    },
  };
}

/** The InboundMessage Meta's callback would give for this simulated customer's message. */
export async function simulatedInbound(
  sql: Sql,
  accountId: string,
  customer: SandboxCustomer,
  body: SandboxInbound,
  now: Date,
): Promise<InboundMessage> {
  const given = CONTENT_KEYS.filter((k) => body[k] !== undefined);
  if (given.length !== 1) {
    throw new ApiError('INVALID_REQUEST', `Give exactly one of ${CONTENT_KEYS.join(', ')}.`, {
      details: (given.length === 0 ? CONTENT_KEYS : given).map((field) => ({
        field,
        issue: given.length === 0 ? 'one of these is required' : 'only one of these may be given',
      })),
    });
  }
  const replyTo = body.replyTo ? await answerable(sql, accountId, body.replyTo, customer, 'replyTo') : null;
  const { type, content } = await contentOf(sql, accountId, customer, body, replyTo);
  return {
    providerMessageId: `sandbox.in.${randomBytes(16).toString('hex')}`,
    from: customer.phone,
    waId: customer.phone?.slice(1) ?? null,
    userId: customer.userId,
    username: customer.username,
    profileName: body.name ?? null,
    sentAt: now,
    type,
    content,
    replyTo: replyTo?.provider_message_id ?? null,
  };
}
