// The event outbox. emit(tx, event) writes an event and one pending delivery per matching webhook in
// the caller's transaction: a change and the events it causes commit together, a rolled-back change
// emits nothing, and a committed event survives any crash (the webhook dispatcher finds its
// deliveries in the table). A NOTIFY, sent by PostgreSQL only at commit, wakes the dispatchers.

import { AUTOMATIC_ATTEMPTS } from '../modules/webhooks/schedule.ts';
import type { Tx } from './db.ts';
import { newId } from './ids.ts';

export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.tagged',
  'contact.untagged',
  'conversation.opened',
  'conversation.assigned',
  'conversation.closed',
  'template.status_changed',
  'bulk_job.completed',
  'wallet.credited',
  'wallet.low_balance',
  'account.status_changed',
  'call.status_changed',
  'campaign.status_changed',
  'journey_run.completed',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const EVENT_FAMILIES = [...new Set(EVENT_TYPES.map((t) => t.split('.')[0]!))];

/** The channel dispatchers LISTEN on. */
export const DELIVERY_CHANNEL = 'tidings_webhook_deliveries';

/** Why a subscription filter is not valid, or null: an exact type, `family.*` or `*`. */
export function filterProblem(filter: string): string | null {
  if (filter === '*') return null;
  if (filter.endsWith('.*')) {
    return EVENT_FAMILIES.includes(filter.slice(0, -2)) ? null : `"${filter}" names no event family`;
  }
  return (EVENT_TYPES as readonly string[]).includes(filter) ? null : `"${filter}" is not an event type`;
}

export interface EventInput {
  type: EventType;
  /** The account the event is about; null only for a partner-level event (a partner webhook test). */
  accountId: string | null;
  /** The resource as the API shows it, plus `previousStatus` on status changes. */
  data: object;
}

export interface EmittedEvent {
  id: string;
  type: EventType;
  createdAt: string;
  accountId: string | null;
  data: object;
  /** The deliveries made, one per webhook that subscribes to it. */
  deliveryIds: string[];
}

export class EventOutbox {
  readonly #now: () => Date;

  constructor(now: () => Date) {
    this.#now = now;
  }

  /**
   * Records the event in the caller's transaction and queues its deliveries to every enabled
   * webhook of the account (and of the account's partner) whose filters match. `only` restricts
   * it to one webhook (a test event), which must belong to `partnerId` when the account is null.
   */
  async emit(
    tx: Tx,
    event: EventInput,
    options: { only?: { endpointId: string; partnerId?: string } } = {},
  ): Promise<EmittedEvent> {
    const id = newId('event');
    const createdAt = this.#now();
    const family = `${event.type.split('.')[0]}.*`;
    const { rows } = options.only
      ? { rows: [{ partner_id: options.only.partnerId ?? null, endpoint_ids: [options.only.endpointId] }] }
      : await tx.query<{ partner_id: string | null; endpoint_ids: string[] }>(
          `WITH owner AS (SELECT partner_id FROM accounts WHERE id = $1)
           SELECT (SELECT partner_id FROM owner) AS partner_id,
                  coalesce(array_agg(e.id ORDER BY e.id), '{}') AS endpoint_ids
             FROM webhook_endpoints e
            WHERE e.enabled
              AND (e.account_id = $1 OR e.partner_id = (SELECT partner_id FROM owner))
              AND e.event_filters && ARRAY['*', $2, $3]::text[]`,
          [event.accountId, event.type, family],
        );
    const partnerId = rows[0]?.partner_id ?? null;
    const endpointIds = rows[0]?.endpoint_ids ?? [];
    const envelope = {
      id,
      type: event.type,
      createdAt: createdAt.toISOString(),
      accountId: event.accountId,
      data: event.data,
    };
    const deliveryIds = endpointIds.map(() => newId('delivery'));
    await tx.query(
      `WITH event AS (
         INSERT INTO events (id, account_id, partner_id, type, payload, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
       ), deliveries AS (
         INSERT INTO webhook_deliveries
           (id, endpoint_id, event_id, event_type, attempts_allowed, next_attempt_at, created_at, updated_at)
         SELECT d.id, d.endpoint_id, $1, $4, $9, $6, $6, $6
           FROM unnest($7::text[], $8::text[]) AS d (id, endpoint_id)
         RETURNING 1
       )
       SELECT pg_notify('${DELIVERY_CHANNEL}', '') WHERE EXISTS (SELECT 1 FROM deliveries)`,
      [
        id,
        event.accountId,
        partnerId,
        event.type,
        JSON.stringify(envelope),
        createdAt,
        deliveryIds,
        endpointIds,
        AUTOMATIC_ATTEMPTS,
      ],
    );
    return { ...envelope, deliveryIds };
  }
}
