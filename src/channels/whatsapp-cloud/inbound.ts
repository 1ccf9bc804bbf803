// One customer message from Meta's `messages` webhook (an element of `value.messages[]`) turned into
// Tidings' InboundMessage. The rule is "never lose a message": a type Tidings models but whose fields
// are missing or mistyped, and any type it does not model (order, system, unsupported, whatever Meta
// adds next), comes back as `unsupported` with Meta's message whole. Only a message without an id,
// a sender or a time is refused (null), since it could be neither stored once nor shown in order.
// The sender is their number (`from`), their business-scoped user id (`from_user_id`), or both:
// since usernames (2026) Meta may leave the number out (docs/history/issue-45-meta-identity.md).
import { fromProviderDigits, providerDigits } from '../../kernel/values/phones.ts';
import { providerUserId, usernameFrom } from '../../kernel/values/whatsapp-user-ids.ts';
import type {
  InboundContent,
  InboundMediaKind,
  InboundMessage,
  InboundReferral,
  InboundType,
  ReferredProduct,
} from '../types.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';

/** What a message's content parses to; null when the fields its type needs are missing or mistyped. */
type Parsed = { type: InboundType; content: InboundContent } | null;

/**
 * The InboundMessage for one of Meta's `value.messages[]`, given the `value.contacts[]` entry of its
 * sender (or null); null when it has no usable id, sender or timestamp. Never throws.
 */
export function parseInboundMessage(
  message: unknown,
  contact: Record<string, unknown> | null,
): InboundMessage | null {
  // The payload came off the wire: whatever shape it has, a bad message must not take its batch
  // (and the callback's other updates) down with it.
  try {
    return parse(message, contact);
  } catch {
    return null;
  }
}

function parse(message: unknown, contact: Json | null): InboundMessage | null {
  if (!isRecord(message)) return null;
  const providerMessageId = optionalString(message.id);
  const from = fromProviderDigits(message.from);
  const userId = providerUserId(message.from_user_id) ?? providerUserId(contact?.user_id);
  const sentAt = unixSeconds(message.timestamp);
  if (!providerMessageId || (!from && !userId) || !sentAt) return null;
  const providerType = typeof message.type === 'string' ? message.type : (contentKeyOf(message) ?? '');
  const parsed = parseContent(providerType, message) ?? {
    type: 'unsupported',
    content: { unsupported: { providerType, raw: message } },
  };
  const context = isRecord(message.context) ? message.context : {};
  const shared = parsed.type === 'contacts' ? sharedPhone(message.contacts) : null;
  const product = referredProduct(context.referred_product);
  const ad = referral(message.referral);
  // Left out where Meta said nothing: most messages are neither forwarded nor from an ad.
  return {
    providerMessageId,
    from,
    // The sender is named by its wa_id (`from` is one); contacts[] repeats it.
    waId: providerDigits(contact?.wa_id) ?? providerDigits(message.from),
    profileName: profileName(contact),
    sentAt,
    type: parsed.type,
    content: parsed.content,
    replyTo: optionalString(context.id),
    // The sender's user id, parent id and username, and a number shared on request, where given.
    ...identityOf(message, contact, userId),
    ...(shared ? { sharedPhone: shared } : {}),
    ...(context.forwarded === true ? { forwarded: true } : {}),
    ...(context.frequently_forwarded === true ? { frequentlyForwarded: true } : {}),
    ...(product ? { referredProduct: product } : {}),
    ...(ad ? { referral: ad } : {}),
  };
}

/**
 * The keys under which Meta puts a message's content, named after its type. Meta's older examples
 * (and some senders still) leave `type` out of location and contacts messages: the content key
 * present says what the message is.
 */
const CONTENT_KEYS = [
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'location',
  'contacts',
  'interactive',
  'button',
  'reaction',
  'order',
  'system',
] as const;

function contentKeyOf(message: Json): string | null {
  return CONTENT_KEYS.find((key) => isRecord(message[key]) || Array.isArray(message[key])) ?? null;
}

/** The catalog product a customer asks about ("Message business" on a product). */
function referredProduct(value: unknown): ReferredProduct | null {
  if (!isRecord(value)) return null;
  const catalogId = optionalString(value.catalog_id);
  const productRetailerId = optionalString(value.product_retailer_id);
  return catalogId && productRetailerId ? { catalogId, productRetailerId } : null;
}

/** A click-to-WhatsApp ad's (or post's) referral, every field kept where Meta gives it. */
function referral(value: unknown): InboundReferral | null {
  if (!isRecord(value)) return null;
  return {
    sourceUrl: optionalString(value.source_url),
    sourceId: optionalString(value.source_id),
    sourceType: optionalString(value.source_type),
    headline: optionalString(value.headline),
    body: optionalString(value.body),
    mediaType: optionalString(value.media_type),
    imageUrl: optionalString(value.image_url),
    videoUrl: optionalString(value.video_url),
    thumbnailUrl: optionalString(value.thumbnail_url),
    ctwaClid: optionalString(value.ctwa_clid),
    welcomeMessage: isRecord(value.welcome_message) ? optionalString(value.welcome_message.text) : null,
  };
}

/** A message's content by its type, as Meta names it; null when its fields are missing or mistyped. */
export function parseContent(providerType: string, message: Json): Parsed {
  // Meta names the content after the type: `{ type: 'image', image: {...} }`.
  switch (providerType) {
    case 'text':
      return text(message.text);
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      return media(providerType, message[providerType]);
    case 'interactive':
      return interactive(message.interactive);
    case 'button':
      return button(message.button);
    case 'reaction':
      return reaction(message.reaction);
    case 'location':
      return location(message.location);
    case 'contacts':
      return contacts(message.contacts);
    default:
      return null;
  }
}

function text(body: unknown): Parsed {
  if (!isRecord(body) || typeof body.body !== 'string') return null;
  return { type: 'text', content: { text: { body: body.body } } };
}

function media(kind: InboundMediaKind, body: unknown): Parsed {
  if (!isRecord(body)) return null;
  const id = optionalString(body.id);
  if (!id) return null;
  return {
    type: 'media',
    content: {
      media: {
        kind,
        id,
        mimeType: optionalString(body.mime_type),
        sha256: optionalString(body.sha256),
        caption: optionalString(body.caption),
        filename: optionalString(body.filename),
        voice: body.voice === true,
        animated: body.animated === true,
      },
    },
  };
}

/** A reply-button tap or a list-row choice; other interactive replies (Flows' nfm_reply) are not modelled. */
function interactive(body: unknown): Parsed {
  if (!isRecord(body)) return null;
  const kind = body.type;
  if (kind !== 'button_reply' && kind !== 'list_reply') return null;
  const reply = body[kind];
  if (!isRecord(reply) || typeof reply.id !== 'string' || typeof reply.title !== 'string') return null;
  // Meta gives a description for list rows only.
  const description = optionalString(reply.description);
  return {
    type: 'interactive',
    content: { interactive: { kind, id: reply.id, title: reply.title, description } },
  };
}

/** A template's quick-reply button: `text` is its label, `payload` what the template set (if any). */
function button(body: unknown): Parsed {
  if (!isRecord(body) || typeof body.text !== 'string') return null;
  return { type: 'button', content: { button: { text: body.text, payload: optionalString(body.payload) } } };
}

/** Meta leaves `emoji` out when the customer takes a reaction back: stored as ''. */
function reaction(body: unknown): Parsed {
  if (!isRecord(body)) return null;
  const providerMessageId = optionalString(body.message_id);
  const emoji = body.emoji ?? '';
  if (!providerMessageId || typeof emoji !== 'string') return null;
  // Tidings' own id of the message reacted to is the storage layer's to find.
  return { type: 'reaction', content: { reaction: { providerMessageId, messageId: null, emoji } } };
}

/** A shared place: a dropped pin has only coordinates; a named place also its name, address and url. */
function location(body: unknown): Parsed {
  if (!isRecord(body) || !isCoordinate(body.latitude, 90) || !isCoordinate(body.longitude, 180)) return null;
  return {
    type: 'location',
    content: {
      location: {
        latitude: body.latitude,
        longitude: body.longitude,
        name: optionalString(body.name),
        address: optionalString(body.address),
        url: optionalString(body.url),
      },
    },
  };
}

/** Contact cards are kept as Meta sends them: every part of a card is optional and Tidings shows them as such. */
function contacts(body: unknown): Parsed {
  if (!Array.isArray(body) || body.length === 0 || !body.every(isRecord)) return null;
  return { type: 'contacts', content: { contacts: body } };
}

/** The sender's WhatsApp identity beside their number, each field only where Meta gave it. */
function identityOf(message: Json, contact: Json | null, userId: string | null) {
  const parentUserId = providerUserId(message.from_parent_user_id) ?? providerUserId(contact?.parent_user_id);
  const username = usernameFrom(isRecord(contact?.profile) ? contact.profile.username : null);
  return {
    ...(userId ? { userId } : {}),
    ...(parentUserId ? { parentUserId } : {}),
    ...(username ? { username } : {}),
  };
}

/**
 * The customer's own number, when the message answers the business's request for it: its first
 * card has origin `contact_request` (Meta: the vcard is left out then; a card the customer shares of
 * their own accord is origin `other`, somebody else's, and names nobody here).
 */
function sharedPhone(cards: unknown): string | null {
  const card = Array.isArray(cards) && isRecord(cards[0]) ? cards[0] : null;
  if (card?.origin !== 'contact_request') return null;
  const phone = records(card.phones)[0];
  if (!phone) return null;
  const written = typeof phone.phone === 'string' ? phone.phone.replace(/[^\d+]/g, '') : null;
  return fromProviderDigits(phone.wa_id) ?? fromProviderDigits(written);
}

function profileName(contact: Json | null): string | null {
  const profile = contact && isRecord(contact.profile) ? contact.profile : null;
  return profile ? optionalString(profile.name) : null;
}

function isCoordinate(value: unknown, limit: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit;
}

/** An optional text field: absent, empty or not a string is null. */
function optionalString(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}
