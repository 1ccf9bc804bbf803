// Message rows. Every read is scoped by account_id: another account's id finds nothing.
import type {
  InboundContent,
  InboundReferral,
  Provider,
  ProviderPricing,
  QuickReplyPayload,
  ReferredProduct,
  TemplateParameters,
} from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { ACCOUNT_ORDER, type Page } from '../../kernel/http/pagination.ts';
import { idAt } from '../../kernel/values/ids.ts';
import type { PriceCategory } from '../pricing/index.ts';
import { raiseSkewSql, readIdSkew, skewOf } from './id-skew.ts';

export type MessageStatus =
  | 'scheduled'
  | 'queued'
  | 'sent'
  | 'delivered'
  | 'read'
  | 'failed'
  | 'canceled'
  | 'received';

/** What messages.content holds: the message as the API shows it, one key per type. */
export type StoredContent = OutboundContent | InboundStoredContent;

/** What the business sent; `context` names the message it quotes (a reply), if any. */
export type OutboundContent = (
  | {
      template: {
        id: string;
        name: string;
        language: string;
        category: string;
        /** A list (POSITIONAL), or an object by name (NAMED). */
        parameters: TemplateParameters;
        body: string;
        /** The quick-reply payloads the send set, if any. */
        buttonPayloads?: QuickReplyPayload[];
      };
    }
  | { text: { body: string; previewUrl: boolean } }
  | { media: { kind: string; url?: string; id?: string; caption?: string; filename?: string } }
  | { interactive: Record<string, unknown> }
  | {
      location: {
        latitude: number;
        longitude: number;
        name: string | null;
        address: string | null;
        url: null;
      };
    }
  | { contacts: Record<string, unknown>[] }
  | { reaction: { messageId: string; providerMessageId: string | null; emoji: string } }
) & { context?: MessageContext };

/** What a customer sent (channels/types.ts), with the message it answers, if any. */
export type InboundStoredContent = InboundContent & { context?: MessageContext; referral?: InboundReferral };

/**
 * Where an inbound message stands: the message it answers (Tidings' id when it is one of ours, and
 * the provider's), whether it was forwarded, the catalog product it asks about. Rows stored before
 * forwarding was kept have only the first two.
 */
export interface MessageContext {
  messageId: string | null;
  providerMessageId: string | null;
  forwarded?: boolean;
  frequentlyForwarded?: boolean;
  referredProduct?: ReferredProduct | null;
}

/** The provider's conversation as stored (its expiry as an ISO string). */
export interface StoredProviderConversation {
  id: string;
  origin: string | null;
  expiresAt: string | null;
}

export interface MessageRow {
  id: string;
  account_id: string;
  contact_id: string | null;
  /** The conversation it belongs to (none for an outbound message sent while none was open). */
  conversation_id: string | null;
  direction: 'outbound' | 'inbound';
  type: string;
  /** The number it went to (or came from); null when it was addressed by the WhatsApp user id alone. */
  phone: string | null;
  content: StoredContent;
  template_id: string | null;
  status: MessageStatus;
  error: { code: string; message: string; providerCode?: number | null } | null;
  provider: Provider;
  sandbox: boolean;
  provider_message_id: string | null;
  country: string | null;
  category: PriceCategory | null;
  list_price_micros: number;
  charged_micros: number;
  free_reason: string | null;
  refunded_at: Date | null;
  idempotency_key: string | null;
  bulk_job_id: string | null;
  bulk_index: number | null;
  /** The broadcast campaign it was sent for (migrations/021_campaigns.sql). */
  campaign_id: string | null;
  created_at: Date;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  failed_at: Date | null;
  updated_at: Date;
  provider_pricing: ProviderPricing | null;
  provider_conversation: StoredProviderConversation | null;
  /** When the provider accepted it (its answer to the hand-over); `sent_at` is the provider's word. */
  accepted_at: Date | null;
  /** The provider's own word on the hand-over (Meta's message_status: accepted, held_for_quality_assessment, paused). */
  provider_status: string | null;
  /** The signed sum of the adjustments that settled its charge (settlement.ts), and what one could not take. */
  adjusted_micros: number;
  unpaid_micros: number;
  /** Inbound: when the business marked it read, and last showed the typing indicator (mark-read.ts). */
  marked_read_at: Date | null;
  typing_shown_at: Date | null;
  /** When the recipient played it (a voice message: WhatsApp's `played`; migrations/025). */
  played_at: Date | null;
  /** The customer's WhatsApp user id, when the message was addressed by it (migrations/037). */
  whatsapp_user_id: string | null;
  /** The price book's rule that set the charge (pricing/book.ts ruleKey); null before migration 038. */
  price_rule: string | null;
  /** Who sent it, where stored (migrations/042): automation, business_app; view.ts derives the rest. */
  source: 'api' | 'automation' | 'campaign' | 'business_app' | null;
  /** When a message accepted with `sendAt` is to go (migrations/050); null for one sent at once. */
  send_at: Date | null;
}

export const MESSAGE_COLUMNS =
  'id, account_id, contact_id, conversation_id, direction, type, phone, content, template_id, status, error, provider, sandbox, ' +
  'provider_message_id, country, category, list_price_micros, charged_micros, free_reason, refunded_at, ' +
  'idempotency_key, bulk_job_id, bulk_index, campaign_id, created_at, sent_at, delivered_at, read_at, failed_at, updated_at, ' +
  'provider_pricing, provider_conversation, accepted_at, provider_status, adjusted_micros, unpaid_micros, ' +
  'marked_read_at, typing_shown_at, played_at, whatsapp_user_id, price_rule, source, send_at';

/**
 * Where a message went (or came from): its number, or the customer's user id when it went by that
 * alone (isPhoneAddress tells them apart). An erased message's number is ERASED.
 */
export const addressOf = (m: Pick<MessageRow, 'phone' | 'whatsapp_user_id'>): string =>
  (m.phone ?? m.whatsapp_user_id)!;

/** The timestamp and int8 columns of MESSAGE_COLUMNS: what a row read as JSON must turn back. */
const DATE_COLUMNS = [
  'created_at',
  'accepted_at',
  'sent_at',
  'delivered_at',
  'read_at',
  'failed_at',
  'refunded_at',
  'updated_at',
  'marked_read_at',
  'typing_shown_at',
  'played_at',
  'send_at',
] as const;
const NUMBER_COLUMNS = ['list_price_micros', 'charged_micros', 'adjusted_micros', 'unpaid_micros'] as const;

/** A message row read as JSON (row_to_json gives timestamps as strings): as a query gives it. */
export function messageFromJson(raw: unknown): MessageRow {
  const m = { ...(raw as Record<string, unknown>) };
  for (const k of DATE_COLUMNS) if (typeof m[k] === 'string') m[k] = new Date(m[k] as string);
  for (const k of NUMBER_COLUMNS) m[k] = Number(m[k] ?? 0);
  return m as unknown as MessageRow;
}

export async function findMessage(sql: Sql, accountId: string, id: string): Promise<MessageRow | null> {
  const { rows } = await sql.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE account_id = $1 AND id = $2`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

/** The contact of each outbound message named (by our id or the provider's), null where none. */
export async function contactIdsOf(
  sql: Sql,
  targets: ({ accountId: string } & ({ id: string } | { providerMessageId: string }))[],
): Promise<(string | null)[]> {
  const { rows } = await sql.query<{ i: number; contact_id: string | null }>(
    `SELECT t.i, m.contact_id
       FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t (account_id, id, provider_id, i)
       JOIN messages m ON m.account_id = t.account_id AND m.direction = 'outbound'
                      AND (m.id = t.id OR m.provider_message_id = t.provider_id)`,
    [
      targets.map((t) => t.accountId),
      targets.map((t) => ('id' in t ? t.id : null)),
      targets.map((t) => ('providerMessageId' in t ? t.providerMessageId : null)),
    ],
  );
  const found = new Map(rows.map((r) => [Number(r.i), r.contact_id]));
  return targets.map((_, i) => found.get(i + 1) ?? null);
}

export async function findByIdempotencyKey(
  sql: Sql,
  accountId: string,
  key: string,
): Promise<MessageRow | null> {
  const { rows } = await sql.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE account_id = $1 AND idempotency_key = $2`,
    [accountId, key],
  );
  return rows[0] ?? null;
}

/** The last millisecond a UUIDv7 can carry. */
const LAST_ID_MS = 2 ** 48 - 1;

export interface MessageFilters {
  status?: MessageStatus;
  direction?: 'outbound' | 'inbound';
  phone?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

export async function listMessages(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: MessageFilters,
): Promise<MessageRow[]> {
  // The account as a one-element array, ordered by (account_id, id): the (account_id, id) and
  // (account_id, phone, id) indexes walk the account's own rows, whatever other tenants hold
  // (kernel/http/pagination.ts, ACCOUNT_ORDER).
  const params: unknown[] = [[accountId]];
  const where = ['account_id = ANY($1::text[])'];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (filters.phone) where.push(`phone = ${param(filters.phone)}`);
  // Scheduled ones as a literal: their partial index (migrations/050) serves a condition it implies.
  if (filters.status === 'scheduled') where.push(`status = 'scheduled'`);
  else if (filters.status && filters.status !== 'failed') where.push(`status = ${param(filters.status)}`);
  if (filters.direction) where.push(`direction = ${param(filters.direction)}`);
  // The ids bound the walk of the account's rows, as far as an id's time may stray from its
  // created_at (id-skew.ts); created_at makes it exact.
  if (filters.createdAfter || filters.createdBefore) {
    const skew = await readIdSkew(sql);
    if (filters.createdAfter) {
      const from = new Date(Math.max(0, filters.createdAfter.getTime() - skew.behindMs));
      where.push(`id >= ${param(idAt('message', from))}`);
      where.push(`created_at > ${param(filters.createdAfter)}`);
    }
    if (filters.createdBefore) {
      const until = new Date(Math.min(LAST_ID_MS, filters.createdBefore.getTime() + skew.aheadMs));
      where.push(`id < ${param(idAt('message', until))}`);
      where.push(`created_at < ${param(filters.createdBefore)}`);
    }
  }
  const limit = page.limit + 1;
  const select = (before: string | null, extra: string[] = []) => {
    const cursor = before ? [`id < $${params.length + 1}`] : [];
    return sql.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages
        WHERE ${[...where, ...extra, ...cursor].join(' AND ')}
        ${ACCOUNT_ORDER} LIMIT ${limit}`,
      before ? [...params, before] : params,
    );
  };
  if (filters.status !== 'failed') return (await select(page.before)).rows;
  // Failed messages: the rows with a failed_at (every failure sets it, transition.ts) walked through
  // their own index (migrations/032), less the few a later delivery took out of `failed`. The
  // status is checked here, not in SQL: with both conditions the planner multiplied their
  // selectivities, expected a few hundred rows where the account had 20,000, and collected and
  // sorted them all (60–110 ms) instead of walking the index to the page's end.
  const rows: MessageRow[] = [];
  let before = page.before;
  for (;;) {
    const { rows: walked } = await select(before, ['failed_at IS NOT NULL']);
    rows.push(...walked.filter((row) => row.status === 'failed'));
    if (rows.length >= limit || walked.length < limit) return rows.slice(0, limit);
    before = walked.at(-1)!.id;
  }
}

/** The message a provider's id names in the account (a customer's message stored before, say). */
export async function findByProviderId(
  sql: Sql,
  accountId: string,
  providerMessageId: string,
): Promise<MessageRow | null> {
  const { rows } = await sql.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE account_id = $1 AND provider_message_id = $2`,
    [accountId, providerMessageId],
  );
  return rows[0] ?? null;
}

/** Tidings' ids of the account's messages with these provider ids, by provider id. */
export async function idsByProviderIds(
  sql: Sql,
  accountId: string,
  providerMessageIds: string[],
): Promise<Map<string, string>> {
  if (providerMessageIds.length === 0) return new Map();
  const { rows } = await sql.query<{ id: string; provider_message_id: string }>(
    'SELECT id, provider_message_id FROM messages WHERE account_id = $1 AND provider_message_id = ANY($2::text[])',
    [accountId, providerMessageIds],
  );
  return new Map(rows.map((r) => [r.provider_message_id, r.id]));
}

export interface InboundRow {
  id: string;
  accountId: string;
  contactId: string;
  conversationId: string;
  type: string;
  /** The sender's number and WhatsApp user id, as far as the provider gave them (one at least). */
  phone: string | null;
  whatsappUserId: string | null;
  content: StoredContent;
  provider: Provider;
  sandbox: boolean;
  providerMessageId: string;
  /** When it was stored, and when the customer sent it. */
  now: Date;
  sentAt: Date;
}

/** Stores a customer's message as `received`; null if its provider id was stored meanwhile. */
export async function insertInbound(sql: Sql, m: InboundRow): Promise<MessageRow | null> {
  const skew = skewOf([m.id], m.now);
  const { rows } = await sql.query<MessageRow>(
    `WITH skew AS (${raiseSkewSql('$13', '$14')})
     INSERT INTO messages (id, account_id, contact_id, conversation_id, direction, type, phone, content, status,
                           provider, sandbox, provider_message_id, created_at, sent_at, updated_at, whatsapp_user_id)
     VALUES ($1, $2, $3, $4, 'inbound', $5, $6, $7, 'received', $8, $9, $10, $11, $12, $11, $15)
     ON CONFLICT (account_id, provider_message_id) WHERE provider_message_id IS NOT NULL DO NOTHING
     RETURNING ${MESSAGE_COLUMNS}`,
    [
      m.id,
      m.accountId,
      m.contactId,
      m.conversationId,
      m.type,
      m.phone,
      JSON.stringify(m.content),
      m.provider,
      m.sandbox,
      m.providerMessageId,
      m.now,
      m.sentAt,
      skew.aheadMs,
      skew.behindMs,
      m.whatsappUserId,
    ],
  );
  return rows[0] ?? null;
}

/** A message the business sent from the WhatsApp Business app (coexistence), as Meta echoed it. */
export interface EchoRow {
  id: string;
  accountId: string;
  contactId: string;
  /** The contact's open conversation, if any (else a later conversation adopts it, as a send). */
  conversationId: string | null;
  type: string;
  phone: string | null;
  whatsappUserId: string | null;
  content: StoredContent;
  providerMessageId: string;
  now: Date;
  sentAt: Date;
}

/**
 * Stores an echoed message as `sent`, with source business_app: nothing to dispatch, nothing to
 * charge (no category, no price), the customer's window untouched. Null if stored before.
 */
export async function insertEcho(sql: Sql, m: EchoRow): Promise<MessageRow | null> {
  const skew = skewOf([m.id], m.now);
  const { rows } = await sql.query<MessageRow>(
    `WITH skew AS (${raiseSkewSql('$11', '$12')})
     INSERT INTO messages (id, account_id, contact_id, conversation_id, direction, type, phone, content, status,
                           provider, sandbox, provider_message_id, created_at, sent_at, updated_at, whatsapp_user_id,
                           source)
     VALUES ($1, $2, $3, $4, 'outbound', $5, $6, $7, 'sent', 'whatsapp_cloud', false, $8, $9, $10, $9, $13,
             'business_app')
     ON CONFLICT (account_id, provider_message_id) WHERE provider_message_id IS NOT NULL DO NOTHING
     RETURNING ${MESSAGE_COLUMNS}`,
    [
      m.id,
      m.accountId,
      m.contactId,
      m.conversationId,
      m.type,
      m.phone,
      JSON.stringify(m.content),
      m.providerMessageId,
      m.now,
      m.sentAt,
      skew.aheadMs,
      skew.behindMs,
      m.whatsappUserId,
    ],
  );
  return rows[0] ?? null;
}

/** A message of a coexistence number's imported history, as history-import.ts makes it. */
export interface HistoryRow {
  id: string;
  contactId: string;
  conversationId: string;
  direction: 'inbound' | 'outbound';
  type: string;
  phone: string | null;
  whatsappUserId: string | null;
  content: StoredContent;
  /** received (the customer's), sent, delivered, read, failed (the business's, from the app). */
  status: string;
  providerMessageId: string;
  sentAt: Date;
}

/**
 * Stores history messages in one statement, each at its own time (created_at and sent_at are when
 * it was sent; delivered and read are dated then too, Meta giving no other time); one stored before
 * (a chunk repeated, a message the webhooks brought already) is skipped. Answers how many were new.
 */
export async function insertHistory(
  sql: Sql,
  accountId: string,
  rows: HistoryRow[],
  now: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const column = <T>(pick: (r: HistoryRow) => T) => rows.map(pick);
  const { rows: stored } = await sql.query<{ id: string }>(
    `INSERT INTO messages (id, account_id, contact_id, conversation_id, direction, type, phone, content, status,
                           provider, sandbox, provider_message_id, created_at, sent_at, delivered_at, read_at,
                           failed_at, updated_at, whatsapp_user_id, source)
     SELECT h.id, $1, h.contact_id, h.conversation_id, h.direction, h.type, h.phone, h.content::jsonb, h.status,
            'whatsapp_cloud', false, h.provider_message_id, h.sent_at, h.sent_at,
            CASE WHEN h.status IN ('delivered', 'read') THEN h.sent_at END,
            CASE WHEN h.status = 'read' THEN h.sent_at END,
            CASE WHEN h.status = 'failed' THEN h.sent_at END,
            $2, h.whatsapp_user_id, CASE WHEN h.direction = 'outbound' THEN 'business_app' END
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                   $10::text[], $11::text[], $12::text[], $13::timestamptz[])
            AS h (id, contact_id, conversation_id, direction, type, phone, whatsapp_user_id, content, status,
                  provider_message_id, sent_at)
     ON CONFLICT (account_id, provider_message_id) WHERE provider_message_id IS NOT NULL DO NOTHING
     RETURNING id`,
    [
      accountId,
      now,
      column((r) => r.id),
      column((r) => r.contactId),
      column((r) => r.conversationId),
      column((r) => r.direction),
      column((r) => r.type),
      column((r) => r.phone),
      column((r) => r.whatsappUserId),
      column((r) => JSON.stringify(r.content)),
      column((r) => r.status),
      column((r) => r.providerMessageId),
      column((r) => r.sentAt),
    ],
  );
  return stored.length;
}

/**
 * Puts into a new conversation the business's messages to the contact that are in none and were
 * sent since its previous conversation closed (`since`; null: ever).
 */
export async function adoptIntoConversation(
  sql: Sql,
  target: {
    accountId: string;
    contactId: string;
    /** The contact's addresses (either may be null): what its messages went to. */
    phone: string | null;
    whatsappUserId: string | null;
    conversationId: string;
    since: Date | null;
  },
): Promise<void> {
  await sql.query(
    `UPDATE messages SET conversation_id = $3
      WHERE account_id = $1 AND (phone = $4 OR whatsapp_user_id = $6) AND contact_id = $2
        AND conversation_id IS NULL AND direction = 'outbound'
        AND created_at >= coalesce($5::timestamptz, '-infinity')`,
    [
      target.accountId,
      target.contactId,
      target.conversationId,
      target.phone,
      target.since,
      target.whatsappUserId,
    ],
  );
}

/**
 * Puts outbound messages in a closed conversation they belong to (a satisfaction survey and its
 * follow-ups: else the customer's next conversation would take them in).
 */
export async function placeInConversation(
  sql: Sql,
  accountId: string,
  ids: string[],
  conversationId: string,
): Promise<void> {
  await sql.query('UPDATE messages SET conversation_id = $3 WHERE account_id = $1 AND id = ANY($2::text[])', [
    accountId,
    ids,
    conversationId,
  ]);
}
