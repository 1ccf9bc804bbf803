// Webhook fan-out, as a subscriber of the event outbox (kernel/outbox/events.ts): for each event, one
// pending delivery per enabled webhook of its account, or of its account's partner, whose filters
// take the event's type. The dispatcher (dispatcher.ts) sends them, woken by DELIVERY_CHANNEL.
import type { EventEnvelope, OutboxSubscriber } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { AUTOMATIC_ATTEMPTS } from './schedule.ts';

/** The channel dispatchers LISTEN on. */
export const DELIVERY_CHANNEL = 'tidings_webhook_deliveries';

/** The webhooks an account's events may go to, with their filters and owners. */
export type WebhookAudience = { id: string; filters: string[]; owner: string }[];

/**
 * A NOTIFY's payload naming the endpoints that have new due deliveries, with their owners, as
 * `endpoint owner,endpoint owner`: the dispatchers add them to the endpoints they serve without
 * looking. '' (too many for a NOTIFY's 8,000 bytes) asks them to look at every endpoint instead.
 */
export function wakePayload(endpoints: { endpoint_id: string; owner: string }[]): string {
  const pairs = [...new Set(endpoints.map((e) => `${e.endpoint_id} ${e.owner}`))].join(',');
  return pairs.length <= 7_000 ? pairs : '';
}

/** The endpoints (with their owners) a NOTIFY payload names; null for "look at every endpoint". */
export function parseWakePayload(payload: string): { endpoint: string; owner: string }[] | null {
  if (payload === '') return null;
  return payload.split(',').map((pair) => {
    const [endpoint = '', owner = ''] = pair.split(' ');
    return { endpoint, owner };
  });
}

/** Whether a subscription's filters take this event type. */
export function subscribes(filters: string[], type: string): boolean {
  const family = `${type.split('.')[0]}.*`;
  return filters.some((f) => f === '*' || f === type || f === family);
}

export const webhookFanOut: OutboxSubscriber<WebhookAudience> = {
  name: 'webhooks',
  lookup: `SELECT jsonb_agg(jsonb_build_object('id', e.id, 'filters', e.event_filters,
                                             'owner', coalesce(e.account_id, e.partner_id)) ORDER BY e.id)
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
        // Not stored: for the NOTIFY (notifyPayload).
        owner: endpoint.owner,
      }));
  },
  notifyPayload: (rows) => wakePayload(rows as unknown as { endpoint_id: string; owner: string }[]),
  insert: `INSERT INTO webhook_deliveries
             (id, endpoint_id, event_id, event_type, attempts_allowed, next_attempt_at, created_at, updated_at)
           SELECT d.id, d.endpoint_id, d.event_id, d.type, ${AUTOMATIC_ATTEMPTS}, <now>, <now>, <now>
             FROM jsonb_to_recordset(<rows>) AS d (id text, endpoint_id text, event_id text, type text)`,
  channel: DELIVERY_CHANNEL,
};
