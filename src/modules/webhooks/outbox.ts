// Webhook fan-out, as a subscriber of the event outbox (kernel/events.ts): for each event, one
// pending delivery per enabled webhook of its account, or of its account's partner, whose filters
// take the event's type. The dispatcher (dispatcher.ts) sends them, woken by DELIVERY_CHANNEL.
import type { EventEnvelope, OutboxSubscriber } from '../../kernel/events.ts';
import { newId } from '../../kernel/ids.ts';
import { AUTOMATIC_ATTEMPTS } from './schedule.ts';

/** The channel dispatchers LISTEN on. */
export const DELIVERY_CHANNEL = 'tidings_webhook_deliveries';

/** The webhooks an account's events may go to, with their filters. */
export type WebhookAudience = { id: string; filters: string[] }[];

/** Whether a subscription's filters take this event type. */
export function subscribes(filters: string[], type: string): boolean {
  const family = `${type.split('.')[0]}.*`;
  return filters.some((f) => f === '*' || f === type || f === family);
}

export const webhookFanOut: OutboxSubscriber<WebhookAudience> = {
  name: 'webhooks',
  lookup: `SELECT jsonb_agg(jsonb_build_object('id', e.id, 'filters', e.event_filters) ORDER BY e.id)
             FROM webhook_endpoints e
            WHERE e.enabled AND (e.account_id = a.id OR e.partner_id = a.partner_id)`,
  rows(event: EventEnvelope, audience: WebhookAudience | null) {
    return (audience ?? [])
      .filter((endpoint) => subscribes(endpoint.filters, event.type))
      .map((endpoint) => ({
        id: newId('delivery'),
        endpoint_id: endpoint.id,
        event_id: event.id,
        type: event.type,
      }));
  },
  insert: `INSERT INTO webhook_deliveries
             (id, endpoint_id, event_id, event_type, attempts_allowed, next_attempt_at, created_at, updated_at)
           SELECT d.id, d.endpoint_id, d.event_id, d.type, ${AUTOMATIC_ATTEMPTS}, <now>, <now>, <now>
             FROM jsonb_to_recordset(<rows>) AS d (id text, endpoint_id text, event_id text, type text)`,
  channel: DELIVERY_CHANNEL,
};
