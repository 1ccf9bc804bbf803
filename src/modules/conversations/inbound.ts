// A customer's messages arriving, from any channel (the WhatsApp Cloud callback, the sandbox's
// POST /sandbox/inbound-messages). Each one, in one transaction with the rest of its batch:
//   - is stored once: a provider message id already stored is a redelivery and changes nothing;
//   - finds or makes the sender's contact (by user id, wa_id or number: contacts/identity.ts, which
//     merges two contacts the message shows to be one customer), and (re)opens the customer service
//     window on it (the contact's last_inbound_at, which the send path reads: 24 hours from the
//     customer's message);
//   - continues the contact's open conversation, or opens a new one, which takes in the business's
//     messages sent since the contact's previous conversation closed (the template the customer is
//     answering belongs to the conversation the answer opens);
//   - emits message.received, and conversation.opened / contact.created where it made them.
import type { InboundContent, InboundMessage, Provider } from '../../channels/types.ts';
import { sqlState, type Tx } from '../../kernel/database/db.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import {
  type ContactRow,
  type CustomerIdentity,
  customerContact,
  identityKey,
  noteInbound,
} from '../contacts/index.ts';
import {
  adoptIntoConversation,
  findByProviderId,
  idsByProviderIds,
  insertInbound,
  type MessageContext,
  type MessageRow,
  type StoredContent,
  toMessage,
} from '../messages/index.ts';
import { storeSurveyAnswer, takeSurveyComment, takeSurveyTap } from './csat.ts';
import { CONVERSATION_COLUMNS, type ConversationRow, type ConversationView } from './repo.ts';
import { toConversation } from './schemas.ts';
import type { ConversationServices } from './service.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /** A known contact wrote, in the transaction that stores the message (modules/campaigns: a reply). */
    'conversations.customer-wrote': {
      contact: { account_id: string; id: string; phone: string | null; whatsapp_user_id: string | null };
      at: Date;
    };
  }
}

export interface InboundSource {
  accountId: string;
  provider: Provider;
  /** Came through the sandbox (a sandbox key's simulated customer). */
  sandbox: boolean;
}

export interface InboundResult {
  /** The stored message: the new one, or, for a redelivery, the one stored the first time. */
  message: MessageRow;
  duplicate: boolean;
}

/** Raised inside the transaction when the message was stored before (a redelivery) or meanwhile (a race). */
class RacedDuplicate extends Error {}

const RETRYABLE = new Set(['40P01', '40001', '23505']);

/** Stores a channel's inbound messages (see the top of this file); answers them in the order given. */
export async function receiveInbound(
  s: ConversationServices,
  source: InboundSource,
  messages: InboundMessage[],
): Promise<InboundResult[]> {
  // One sender's messages in the order sent, senders in a fixed order: two batches never lock
  // contacts in a cycle.
  const order = messages
    .map((m, i) => ({ m, i, key: identityKey(identityOf(m)) }))
    .sort((a, b) => a.key.localeCompare(b.key) || a.m.sentAt.getTime() - b.m.sentAt.getTime() || a.i - b.i);
  for (let attempt = 1; ; attempt++) {
    try {
      const results = await s.db.transaction(async (tx) => {
        const out: InboundResult[] = new Array(messages.length);
        for (const { m, i } of order) out[i] = await receiveOne(s, tx, source, m, attempt > 1);
        return out;
      });
      return results;
    } catch (err) {
      // A redelivery (of a message stored before, or racing its first delivery), or two batches of
      // one contact crossing: run again (the rolled-back attempt wrote nothing; the next one looks
      // for each message first and finds what the other committed).
      const raced = err instanceof RacedDuplicate || RETRYABLE.has(sqlState(err) ?? '');
      if (!raced || attempt >= 4) throw err;
    }
  }
}

async function receiveOne(
  s: ConversationServices,
  tx: Tx,
  source: InboundSource,
  m: InboundMessage,
  /**
   * Look for the provider's id first. A first attempt does not: most messages are new, and a
   * redelivery's insert finds the stored one (ON CONFLICT) and has the batch run again, looking.
   */
  lookFirst: boolean,
): Promise<InboundResult> {
  const { accountId } = source;
  if (lookFirst) {
    const existing = await findByProviderId(tx, accountId, m.providerMessageId);
    if (existing) return { message: existing, duplicate: true };
  }

  const now = s.now();
  const events: EventInput[] = [];
  // The window runs from when the customer wrote (never from the future, whatever the clock said).
  const wroteAt = new Date(Math.min(m.sentAt.getTime(), now.getTime()));
  const { contact, isNew } = await lockOrCreateContact(s, tx, accountId, m, now, wroteAt, events);
  // A contact made by this message has nothing before it: no window to move, no campaign message to
  // answer, no conversation to continue and no message to adopt (nothing else can have referred to
  // its row, which no other transaction sees yet). Five statements fewer for a first message.
  if (!isNew) {
    await noteInbound(tx, accountId, contact.id, wroteAt);
    await s.events.hook(tx, 'conversations.customer-wrote', { contact, at: wroteAt });
  }
  const store = async (conversationId: string) => {
    const stored = await insertInbound(tx, {
      id: newId('message'),
      accountId,
      contactId: contact.id,
      conversationId,
      type: m.type,
      phone: contact.phone,
      whatsappUserId: m.userId ?? contact.whatsapp_user_id,
      content: await storedContent(tx, accountId, m),
      provider: source.provider,
      sandbox: source.sandbox,
      providerMessageId: m.providerMessageId,
      now,
      sentAt: m.sentAt,
    });
    if (!stored) throw new RacedDuplicate();
    return stored;
  };
  const contactLastInbound =
    contact.last_inbound_at && contact.last_inbound_at > wroteAt ? contact.last_inbound_at : wroteAt;
  // An answer to a closed conversation's survey (csat.ts) stays in it: no conversation opens. A tap
  // on the survey names it; a comment is looked for only when the contact has none open.
  let answer = isNew ? null : await takeSurveyTap(tx, accountId, contact.id, m);
  const open = isNew || answer ? null : await lockOpenConversation(tx, accountId, contact.id);
  if (!isNew && !answer && !open) answer = await takeSurveyComment(tx, accountId, contact.id, m, now);
  if (answer) {
    const message = await store(answer.conversation.id);
    const row = await storeSurveyAnswer(tx, answer, message, wroteAt, now);
    const view = toConversation(
      { ...row, contact_last_inbound_at: contactLastInbound, last_message: message },
      now,
    );
    events.push({ type: 'message.received', accountId, data: toMessage(message) });
    events.push({ type: 'csat.received', accountId, data: view });
    await s.events.emitMany(tx, events);
    return { message, duplicate: false };
  }
  const conversation = open ?? (await openConversation(tx, accountId, contact, now, isNew));
  const opened = open === null;
  const message = await store(conversation.id);

  const { rows } = await tx.query<ConversationRow>(
    `UPDATE conversations SET last_message_at = greatest(last_message_at, $3), last_message_id = $4,
            last_inbound_at = greatest(last_inbound_at, $5), unread_count = unread_count + 1,
            snoozed_until = NULL, updated_at = $3
      WHERE account_id = $1 AND id = $2
      RETURNING ${CONVERSATION_COLUMNS}`,
    [accountId, conversation.id, now, message.id, wroteAt],
  );
  // A new conversation joins its team (modules/teams: the default team's queue), before its event
  // shows it.
  if (opened)
    await s.events.hook(tx, 'conversations.route', {
      accountId,
      conversation: rows[0]!,
      teamId: null,
      reason: 'auto',
      occasion: 'opened',
    });
  // Then its SLA, which may follow the team (modules/sla: due times set on the row, for the event).
  if (opened) await s.events.hook(tx, 'conversations.sla', { accountId, conversation: rows[0]! });
  events.push({ type: 'message.received', accountId, data: toMessage(message) });
  // The customer writing wakes a snoozed conversation (snooze.ts), told once, here.
  const woke = !opened && conversation.snoozed_until !== null;
  if (opened || woke) {
    // The conversation's view from what this transaction holds: its row as just updated, the
    // contact's window (its row is locked here: the later of what it had and this message) and the
    // message, which is the conversation's last.
    const view: ConversationView = {
      ...rows[0]!,
      contact_last_inbound_at: contactLastInbound,
      last_message: message,
    };
    const data = toConversation(view, now);
    if (opened) events.push({ type: 'conversation.opened', accountId, data });
    else events.push({ type: 'conversation.unsnoozed', accountId, data: { ...data, reason: 'customer' } });
  }
  await s.events.emitMany(tx, events);
  return { message, duplicate: false };
}

/**
 * Who the sender is, as the message says: their number (or, writing without one, the number they
 * shared when the business asked for it), wa_id, user id, parent id and username.
 */
function identityOf(m: InboundMessage): CustomerIdentity {
  return {
    phone: m.from ?? m.sharedPhone ?? null,
    waId: m.waId ?? null,
    userId: m.userId ?? null,
    parentUserId: m.parentUserId ?? null,
    username: m.username ?? null,
  };
}

/**
 * The sender's contact, locked for this transaction; made (contact.created) if the customer is new.
 * Found by user id, then by the provider's id for the number (WhatsApp's wa_id, which the
 * business's number for the customer may not match: Brazil's ninth digit, Mexico's 1 after +52),
 * then by number; what it did not know is learnt, and two contacts the message names are merged
 * (contacts/identity.ts). A number shared on request (sharedPhone) names the sender like `from`.
 */
async function lockOrCreateContact(
  s: ConversationServices,
  tx: Tx,
  accountId: string,
  m: InboundMessage,
  now: Date,
  wroteAt: Date,
  events: EventInput[],
): Promise<{ contact: ContactRow; isNew: boolean }> {
  const who = identityOf(m);
  const name = m.profileName?.trim().slice(0, 200) || null;
  return customerContact(s, tx, accountId, who, { name, now, lastInboundAt: wroteAt }, events);
}

/** The contact's open conversation, locked, or null. */
async function lockOpenConversation(tx: Tx, accountId: string, contactId: string) {
  const { rows } = await tx.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations
      WHERE account_id = $1 AND contact_id = $2 AND status = 'open' FOR UPDATE`,
    [accountId, contactId],
  );
  return rows[0] ?? null;
}

/**
 * A new conversation for the contact, which has none open. Unless the contact is new too (nothing
 * before it), it takes in the business's messages to the contact that are in no conversation and
 * were sent since its previous one closed.
 */
async function openConversation(
  tx: Tx,
  accountId: string,
  contact: ContactRow,
  now: Date,
  contactIsNew: boolean,
): Promise<ConversationRow> {
  const conversation = await insertConversation(tx, accountId, contact, now);
  if (contactIsNew) return conversation;
  const closed = await tx.query<{ at: Date | null }>(
    'SELECT max(closed_at) AS at FROM conversations WHERE account_id = $1 AND contact_id = $2',
    [accountId, contact.id],
  );
  await adoptIntoConversation(tx, {
    accountId,
    contactId: contact.id,
    phone: contact.phone,
    whatsappUserId: contact.whatsapp_user_id,
    conversationId: conversation.id,
    since: closed.rows[0]?.at ?? null,
  });
  return conversation;
}

async function insertConversation(
  tx: Tx,
  accountId: string,
  contact: ContactRow,
  now: Date,
): Promise<ConversationRow> {
  const { rows } = await tx.query<ConversationRow>(
    `INSERT INTO conversations (id, account_id, contact_id, phone, status, last_message_at, opened_at,
                                created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'open', $5, $5, $5, $5)
     RETURNING ${CONVERSATION_COLUMNS}`,
    [newId('conversation'), accountId, contact.id, contact.phone, now],
  );
  return rows[0]!;
}

/** The content to store: the channel's, with Tidings' own ids for the messages it refers to. */
async function storedContent(tx: Tx, accountId: string, m: InboundMessage): Promise<StoredContent> {
  const referred = [m.replyTo, 'reaction' in m.content ? m.content.reaction.providerMessageId : null].filter(
    (id): id is string => !!id,
  );
  const ours = await idsByProviderIds(tx, accountId, referred);
  let content: InboundContent = m.content;
  if ('reaction' in content) {
    const { reaction } = content;
    content = { reaction: { ...reaction, messageId: ours.get(reaction.providerMessageId) ?? null } };
  }
  const context: MessageContext | undefined =
    m.replyTo || m.forwarded || m.frequentlyForwarded || m.referredProduct
      ? {
          providerMessageId: m.replyTo,
          messageId: m.replyTo ? (ours.get(m.replyTo) ?? null) : null,
          forwarded: m.forwarded ?? false,
          frequentlyForwarded: m.frequentlyForwarded ?? false,
          referredProduct: m.referredProduct ?? null,
        }
      : undefined;
  return { ...content, ...(context ? { context } : {}), ...(m.referral ? { referral: m.referral } : {}) };
}
