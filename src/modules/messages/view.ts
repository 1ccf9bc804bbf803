// A message row as the API shows it (GET /messages, the 202 of a send, and message.* events).
import type { InboundReferral } from '../../channels/types.ts';
import { money } from '../billing/index.ts';
import { ruleView } from '../pricing/index.ts';
import type { MessageContext, MessageRow } from './repo.ts';

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** An inbound message's context, with the fields rows stored before they were kept filled in. */
function contextView(context: MessageContext | undefined) {
  if (!context) return null;
  return {
    messageId: context.messageId,
    providerMessageId: context.providerMessageId,
    forwarded: context.forwarded ?? false,
    frequentlyForwarded: context.frequentlyForwarded ?? false,
    referredProduct: context.referredProduct ?? null,
  };
}

/** Who sent an outbound message: as stored, else a campaign's or the API's (null: a customer's). */
export function sourceOf(row: Pick<MessageRow, 'direction' | 'source' | 'campaign_id'>) {
  if (row.direction !== 'outbound') return null;
  return row.source ?? (row.campaign_id ? 'campaign' : 'api');
}

export function toMessage(row: MessageRow, currency = 'USD') {
  const c = row.content as Record<string, unknown>;
  const outbound = row.direction === 'outbound';
  return {
    id: row.id,
    direction: row.direction,
    type: row.type,
    to: outbound ? row.phone : null,
    from: outbound ? null : row.phone,
    whatsappUserId: row.whatsapp_user_id,
    contactId: row.contact_id,
    status: row.status,
    conversationId: row.conversation_id,
    template: (c.template as never) ?? null,
    text: (c.text as { body: string } | undefined)?.body ?? null,
    media: (c.media as never) ?? null,
    interactive: (c.interactive as never) ?? null,
    button: (c.button as never) ?? null,
    reaction: (c.reaction as never) ?? null,
    location: (c.location as never) ?? null,
    contacts: (c.contacts as never) ?? null,
    unsupported: (c.unsupported as never) ?? null,
    context: contextView(c.context as MessageContext | undefined),
    referral: (c.referral as InboundReferral | undefined) ?? null,
    source: sourceOf(row),
    channel: row.provider,
    sandbox: row.sandbox,
    providerMessageId: row.provider_message_id,
    pricing:
      outbound && row.category
        ? {
            country: row.country,
            category: row.category,
            listPrice: money(row.list_price_micros, currency),
            charged: money(row.charged_micros, currency),
            freeReason: row.free_reason as 'customer_service_window' | 'sandbox' | null,
            refunded: row.refunded_at !== null,
            rule: ruleView(row.price_rule),
            adjusted: money(row.adjusted_micros, currency),
            unpaid: money(row.unpaid_micros, currency),
          }
        : null,
    providerPricing: row.provider_pricing,
    providerConversation: row.provider_conversation,
    error: row.error,
    bulkJobId: row.bulk_job_id,
    createdAt: row.created_at.toISOString(),
    acceptedAt: iso(row.accepted_at),
    providerStatus: row.provider_status,
    sendAt: iso(row.send_at ?? null),
    sentAt: iso(row.sent_at),
    deliveredAt: iso(row.delivered_at),
    readAt: iso(row.read_at),
    failedAt: iso(row.failed_at),
    markedReadAt: iso(row.marked_read_at ?? null),
    typingShownAt: iso(row.typing_shown_at ?? null),
    playedAt: iso(row.played_at ?? null),
    updatedAt: row.updated_at.toISOString(),
  };
}
