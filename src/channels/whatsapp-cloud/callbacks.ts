// What Meta sends to Tidings' callback URL: the GET handshake that proves we own the URL, POSTs
// signed with the app secret (X-Hub-Signature-256), and their payloads turned into ProviderUpdates.
// A payload is whatever arrived on the wire: parsing never throws, and what it does not understand
// comes back as `unknown` to be logged rather than dropped.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { providerDigits } from '../../kernel/values/phones.ts';
import { providerUserId, usernameFrom } from '../../kernel/values/whatsapp-user-ids.ts';
import {
  type CallbackAdapter,
  type CallbackBatch,
  type CallbackRequest,
  type MessageStatusUpdate,
  type ProviderConversation,
  type ProviderError,
  type ProviderPricing,
  type ProviderUpdate,
  type TemplateStatusEvent,
  UnreadableCallback,
} from '../types.ts';
import {
  accountUpdateChange,
  errorsChange,
  numberQualityChange,
  userPreferencesChange,
} from './account-signals.ts';
import { appStateChange, echoesChange } from './coexistence.ts';
import { codeForMetaCode, describeMetaError, trimMessage } from './errors.ts';
import { historyChange } from './history.ts';
import { identityChangeOf, userIdUpdateChange } from './identity.ts';
import { parseInboundMessage } from './inbound.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';
import { qualityOf } from './templates.ts';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** Whether `header` is `sha256=<hex HMAC-SHA256 of rawBody under appSecret>`. */
export function verifyCallbackSignature(
  rawBody: Buffer,
  header: string | undefined,
  appSecret: string,
): boolean {
  if (!appSecret || typeof header !== 'string') return false;
  const found = SIGNATURE.exec(header.trim());
  if (!found) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(found[1]!, 'hex'));
}

// Hashing both sides first makes the compare constant-time whatever the lengths.
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Meta's subscription check: the challenge to echo when mode and token are right, else null. */
export function verifyHandshake(query: Record<string, unknown>, verifyToken: string): string | null {
  const mode = query['hub.mode'];
  const token = query['hub.verify_token'];
  const challenge = query['hub.challenge'];
  if (mode !== 'subscribe' || typeof token !== 'string' || typeof challenge !== 'string') return null;
  if (!verifyToken || !sameSecret(token, verifyToken)) return null;
  return challenge;
}

/**
 * Parses a callback's raw body as JSON, keeping integers too large for a double as their digits:
 * Meta sends `message_template_id` as a bare number, and a template id past 2^53 would otherwise
 * come out rounded and match no template. Throws on invalid JSON, like JSON.parse.
 */
export function readCallbackBody(raw: Buffer | string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source &&
    /^-?\d+$/.test(context.source)
      ? context.source
      : value;
  return JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'), reviver);
}

/** Our message ids (a TypeID with the `msg` prefix). */
const MESSAGE_ID = /^msg_[0-9a-z]{26}$/;
const STATUSES: readonly MessageStatusUpdate[] = ['sent', 'delivered', 'read', 'failed'];
const TEMPLATE_EVENTS: readonly TemplateStatusEvent[] = [
  'APPROVED',
  'REJECTED',
  'PAUSED',
  'DISABLED',
  'REINSTATED',
];

/** The updates a callback payload reports, in the order it reports them. */
export function parseCallback(payload: unknown): ProviderUpdate[] {
  return parseCallbackBatches(payload).flatMap((batch) => batch.updates);
}

const text = (value: unknown) => (typeof value === 'string' && value ? value : null);

/**
 * The updates of a payload grouped by the number and WABA they are for, one group per change, in
 * order. An entry is one WABA (`entry[].id`); a `messages` change names its number in
 * `metadata.phone_number_id`; a template update names only the WABA.
 */
export function parseCallbackBatches(payload: unknown): CallbackBatch[] {
  const nowhere = { phoneNumberId: null, businessAccountId: null };
  if (!isRecord(payload)) return [];
  if (payload.object !== 'whatsapp_business_account' || !Array.isArray(payload.entry)) {
    const field = typeof payload.object === 'string' ? payload.object : '';
    return [{ destination: nowhere, updates: [{ kind: 'unknown', field, raw: payload }] }];
  }
  const batches: CallbackBatch[] = [];
  for (const entry of records(payload.entry)) {
    const businessAccountId = text(entry.id);
    for (const change of records(entry.changes)) {
      const field = typeof change.field === 'string' ? change.field : '';
      const value = change.value;
      const metadata = isRecord(value) && isRecord(value.metadata) ? value.metadata : {};
      const destination = { phoneNumberId: text(metadata.phone_number_id), businessAccountId };
      let updates: ProviderUpdate[];
      if (field === 'messages' && isRecord(value)) updates = messagesChange(value);
      else if (field === 'message_template_status_update' && isRecord(value))
        updates = [templateChange(value)];
      else if (field === 'user_preferences' && isRecord(value))
        updates = userPreferencesChange(value, entry.time);
      else if (field === 'phone_number_quality_update' && isRecord(value))
        updates = [numberQualityChange(value, entry.time)];
      else if (field === 'account_update' && isRecord(value))
        updates = [accountUpdateChange(value, entry.time)];
      else if (field === 'errors' && isRecord(value)) updates = errorsChange(value, entry.time);
      else if (field === 'message_template_quality_update' && isRecord(value))
        updates = [templateQualityChange(value)];
      else if (field === 'template_category_update' && isRecord(value))
        updates = [templateCategoryChange(value)];
      else if (field === 'user_id_update' && isRecord(value)) updates = userIdUpdateChange(value, entry.time);
      else if (field === 'smb_message_echoes' && isRecord(value)) updates = echoesChange(value);
      else if (field === 'smb_app_state_sync' && isRecord(value)) updates = appStateChange(value, entry.time);
      else if (field === 'history' && isRecord(value)) updates = historyChange(value);
      else updates = [{ kind: 'unknown', field, raw: value ?? null }];
      batches.push({ destination, updates });
    }
  }
  return batches;
}

/** The WhatsApp Cloud API's callbacks behind the provider-agnostic CallbackAdapter. */
export const whatsappCallbacks: CallbackAdapter = {
  provider: 'whatsapp_cloud',
  signatureHeader: 'x-hub-signature-256',
  handshake: (request, verifyToken) => verifyHandshake(request.query, verifyToken),
  verify: (request, secret) =>
    verifyCallbackSignature(request.rawBody, header(request, whatsappCallbacks.signatureHeader), secret),
  parse: (request) => {
    let payload: unknown;
    try {
      payload = readCallbackBody(request.rawBody);
    } catch {
      throw new UnreadableCallback('The callback body is not valid JSON.');
    }
    return parseCallbackBatches(payload);
  },
};

function header(request: CallbackRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function messagesChange(value: Json): ProviderUpdate[] {
  const statuses = Array.isArray(value.statuses) ? value.statuses : [];
  const messages = Array.isArray(value.messages) ? value.messages : [];
  if (statuses.length === 0 && messages.length === 0)
    return [{ kind: 'unknown', field: 'messages', raw: value }];
  const contacts = records(value.contacts);
  return [
    ...statuses.map((status) => statusUpdate(status, contacts)),
    ...messages.map((message) => inboundUpdate(message, contacts)),
  ];
}

/**
 * A customer's message, a change of their identity (a `system` message: identity.ts), or `unknown`
 * (to be logged) when it has no id, sender or time to store it by.
 */
function inboundUpdate(message: unknown, contacts: Json[]): ProviderUpdate {
  const unknown: ProviderUpdate = { kind: 'unknown', field: 'messages', raw: message };
  // Whatever shape came off the wire: a bad message must not take its batch down with it.
  try {
    const change = identityChangeOf(message);
    if (change) return change;
    const parsed = parseInboundMessage(message, partyOf(contacts, message, 'from', 'from_user_id'));
    return parsed ? { kind: 'inbound_message', message: parsed } : unknown;
  } catch {
    return unknown;
  }
}

/**
 * The `contacts[]` entry of a message's sender (or a status's recipient): the one whose wa_id is its
 * number (`from`, `recipient_id`), or whose user_id is its user id. Meta warns that a user's wa_id
 * and phone number may differ, so a lone contact is taken as theirs when none matches.
 */
function partyOf(contacts: Json[], item: unknown, numberField: string, userIdField: string): Json | null {
  const number = isRecord(item) && typeof item[numberField] === 'string' ? item[numberField] : null;
  const userId = isRecord(item) && typeof item[userIdField] === 'string' ? item[userIdField] : null;
  const match = contacts.find(
    (c) => (number !== null && c.wa_id === number) || (userId !== null && c.user_id === userId),
  );
  return match ?? (contacts.length === 1 ? contacts[0]! : null);
}

function statusUpdate(status: unknown, contacts: Json[]): ProviderUpdate {
  const unknown: ProviderUpdate = { kind: 'unknown', field: 'messages', raw: status };
  if (!isRecord(status) || typeof status.id !== 'string' || !status.id) return unknown;
  const at = unixSeconds(status.timestamp);
  // Tidings sends its message id as biz_opaque_callback_data; anything else there is not ours.
  const opaque = status.biz_opaque_callback_data;
  const messageId = typeof opaque === 'string' && MESSAGE_ID.test(opaque) ? { messageId: opaque } : {};
  // A voice message played: kept beside the status (read), which it does not move.
  if (status.status === 'played' && at)
    return { kind: 'message_played', providerMessageId: status.id, ...messageId, at };
  const kind = STATUSES.find((s) => s === status.status);
  if (!kind || !at) return unknown;
  const waId = providerDigits(status.recipient_id);
  // Since April 2026: the recipient's user id, and (delivered and read) a contacts[] entry with the
  // username. A failed status has no contacts[], nor a user id when it was sent to a number.
  const userId = providerUserId(status.recipient_user_id);
  const parentUserId = providerUserId(status.recipient_parent_user_id ?? status.parent_recipient_user_id);
  const party = partyOf(contacts, status, 'recipient_id', 'recipient_user_id');
  const username = usernameFrom(isRecord(party?.profile) ? party.profile.username : null);
  const pricing = statusPricing(status.pricing);
  const conversation = statusConversation(status.conversation);
  const update = {
    kind: 'message_status',
    providerMessageId: status.id,
    ...messageId,
    status: kind,
    at,
    ...(waId ? { recipientWaId: waId } : {}),
    ...(userId ? { recipientUserId: userId } : {}),
    ...(parentUserId ? { recipientParentUserId: parentUserId } : {}),
    ...(username ? { recipientUsername: username } : {}),
    ...(pricing ? { pricing } : {}),
    ...(conversation ? { conversation } : {}),
  } as const;
  return kind === 'failed' ? { ...update, error: statusError(records(status.errors)[0]) } : update;
}

/**
 * What Meta says it bills for the message. `billable` is deprecated under per-message pricing
 * (July 2025) in favour of `type`: `regular` is billed, `free_customer_service` and
 * `free_entry_point` are not; where both are given, `billable` is Meta's own answer.
 */
function statusPricing(value: unknown): ProviderPricing | null {
  if (!isRecord(value)) return null;
  const type = text(value.type);
  const billable =
    typeof value.billable === 'boolean'
      ? value.billable
      : type === 'regular'
        ? true
        : type?.startsWith('free_')
          ? false
          : null;
  return { billable, model: text(value.pricing_model), category: text(value.category), type };
}

/** The conversation Meta counted the message in (per-conversation pricing; gone from PMP payloads). */
function statusConversation(value: unknown): ProviderConversation | null {
  if (!isRecord(value) || typeof value.id !== 'string' || !value.id) return null;
  const origin = isRecord(value.origin) && typeof value.origin.type === 'string' ? value.origin.type : null;
  return { id: value.id, origin, expiresAt: unixSeconds(value.expiration_timestamp) };
}

/** The first error of a failed status; what Tidings does not classify is an unreachable recipient. */
function statusError(error: Json | undefined): ProviderError {
  if (!error) {
    return {
      code: 'RECIPIENT_UNREACHABLE',
      message: 'Meta reported the message failed without an error',
      providerCode: null,
    };
  }
  const metaCode = typeof error.code === 'number' ? error.code : null;
  const title = typeof error.title === 'string' ? error.title.trim() : '';
  const described = describeMetaError({ ...error, message: title || error.message });
  return {
    code: (metaCode !== null && codeForMetaCode(metaCode)) || 'RECIPIENT_UNREACHABLE',
    message: trimMessage(described || `Meta error ${metaCode ?? 'without a code'}`),
    providerCode: metaCode,
  };
}

function templateChange(value: Json): ProviderUpdate {
  const id = value.message_template_id;
  const event = TEMPLATE_EVENTS.find((e) => e === value.event);
  const name = value.message_template_name;
  const language = value.message_template_language;
  const providerTemplateId = typeof id === 'number' || typeof id === 'string' ? String(id) : '';
  if (!event || !providerTemplateId || typeof name !== 'string' || typeof language !== 'string') {
    return { kind: 'unknown', field: 'message_template_status_update', raw: value };
  }
  // Meta writes "NONE" when there is no reason (every approval).
  const reason =
    typeof value.reason === 'string' && value.reason && value.reason !== 'NONE' ? value.reason : null;
  return { kind: 'template_status', providerTemplateId, name, language, event, reason };
}

/** The template a template webhook names: Meta's id (a bare number), name and language. */
function namedTemplate(value: Json): { providerTemplateId: string; name: string; language: string } | null {
  const id = value.message_template_id;
  const providerTemplateId = typeof id === 'number' || typeof id === 'string' ? String(id) : '';
  const name = value.message_template_name;
  const language = value.message_template_language;
  if (!providerTemplateId || typeof name !== 'string' || typeof language !== 'string') return null;
  return { providerTemplateId, name, language };
}

/** message_template_quality_update: the template's previous and new quality score. */
function templateQualityChange(value: Json): ProviderUpdate {
  const template = namedTemplate(value);
  const score = qualityOf(value.new_quality_score).score;
  if (!template || !score) return { kind: 'unknown', field: 'message_template_quality_update', raw: value };
  return {
    kind: 'template_quality',
    ...template,
    previousScore: qualityOf(value.previous_quality_score).score,
    score,
  };
}

/**
 * template_category_update, in Meta's two forms: a change made (`previous_category` and
 * `new_category`), or one announced a day ahead (`correct_category`, the category it will become at
 * `category_update_timestamp`; `new_category` is then the current one).
 */
function templateCategoryChange(value: Json): ProviderUpdate {
  const template = namedTemplate(value);
  const category = text(value.new_category);
  if (!template || !category) return { kind: 'unknown', field: 'template_category_update', raw: value };
  const correctCategory = text(value.correct_category);
  return {
    kind: 'template_category',
    ...template,
    previousCategory: correctCategory ? null : text(value.previous_category),
    category,
    correctCategory,
    scheduledAt: correctCategory ? unixSeconds(value.category_update_timestamp) : null,
  };
}
