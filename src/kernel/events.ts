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

/** Whether a subscription's filters take this event type. */
function subscribes(filters: string[], type: string): boolean {
  const family = `${type.split('.')[0]}.*`;
  return filters.some((f) => f === '*' || f === type || f === family);
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
    if (options.only) {
      const { endpointId, partnerId = null } = options.only;
      const [emitted] = await this.#write(tx, [event], () => ({
        partnerId,
        endpoints: [{ id: endpointId, filters: ['*'] }],
      }));
      return emitted!;
    }
    const [emitted] = await this.emitMany(tx, [event]);
    return emitted!;
  }

  /**
   * Emits several events, of any accounts, at once: one lookup of their subscriptions and one
   * statement for all the events and their deliveries (a bulk job's chunk, a batch of statuses).
   */
  async emitMany(tx: Tx, events: EventInput[]): Promise<EmittedEvent[]> {
    if (events.length === 0) return [];
    const accounts = [...new Set(events.map((e) => e.accountId).filter((a): a is string => a !== null))];
    const { rows } = await tx.query<{
      account_id: string;
      partner_id: string | null;
      id: string | null;
      filters: string[] | null;
    }>(
      `SELECT a.id AS account_id, a.partner_id, e.id, e.event_filters AS filters
         FROM accounts a
         LEFT JOIN webhook_endpoints e ON e.enabled AND (e.account_id = a.id OR e.partner_id = a.partner_id)
        WHERE a.id = ANY($1::text[])
        ORDER BY e.id`,
      [accounts],
    );
    const byAccount = new Map<
      string,
      { partnerId: string | null; endpoints: { id: string; filters: string[] }[] }
    >();
    for (const r of rows) {
      const entry = byAccount.get(r.account_id) ?? { partnerId: r.partner_id, endpoints: [] };
      if (r.id && r.filters) entry.endpoints.push({ id: r.id, filters: r.filters });
      byAccount.set(r.account_id, entry);
    }
    return this.#write(
      tx,
      events,
      (e) => byAccount.get(e.accountId ?? '') ?? { partnerId: null, endpoints: [] },
    );
  }

  async #write(
    tx: Tx,
    events: EventInput[],
    audienceOf: (event: EventInput) => {
      partnerId: string | null;
      endpoints: { id: string; filters: string[] }[];
    },
  ): Promise<EmittedEvent[]> {
    const createdAt = this.#now();
    const emitted: EmittedEvent[] = [];
    const rows: {
      id: string;
      account_id: string | null;
      partner_id: string | null;
      type: string;
      payload: string;
    }[] = [];
    const deliveries: { id: string; endpoint_id: string; event_id: string; type: string }[] = [];
    for (const event of events) {
      const id = newId('event');
      const { partnerId, endpoints } = audienceOf(event);
      const deliveryIds: string[] = [];
      for (const endpoint of endpoints) {
        if (!subscribes(endpoint.filters, event.type)) continue;
        const deliveryId = newId('delivery');
        deliveryIds.push(deliveryId);
        deliveries.push({ id: deliveryId, endpoint_id: endpoint.id, event_id: id, type: event.type });
      }
      const envelope = {
        id,
        type: event.type,
        createdAt: createdAt.toISOString(),
        accountId: event.accountId,
        data: event.data,
      };
      // The envelope is serialised once: every retry sends the same signed bytes.
      rows.push({
        id,
        account_id: event.accountId,
        partner_id: partnerId,
        type: event.type,
        payload: JSON.stringify(envelope),
      });
      emitted.push({ ...envelope, deliveryIds });
    }
    // One JSON parameter per table: serialising hundreds of rows as JSON is several times cheaper
    // than as PostgreSQL array literals.
    await tx.query(
      `WITH new_events AS (
         INSERT INTO events (id, account_id, partner_id, type, payload, created_at)
         SELECT e.id, e.account_id, e.partner_id, e.type, e.payload, $1
           FROM jsonb_to_recordset($3::jsonb) AS e (id text, account_id text, partner_id text, type text, payload text)
       ), deliveries AS (
         INSERT INTO webhook_deliveries
           (id, endpoint_id, event_id, event_type, attempts_allowed, next_attempt_at, created_at, updated_at)
         SELECT d.id, d.endpoint_id, d.event_id, d.type, $2, $1, $1, $1
           FROM jsonb_to_recordset($4::jsonb) AS d (id text, endpoint_id text, event_id text, type text)
         RETURNING 1
       )
       SELECT pg_notify('${DELIVERY_CHANNEL}', '') WHERE EXISTS (SELECT 1 FROM deliveries)`,
      [createdAt, AUTOMATIC_ATTEMPTS, JSON.stringify(rows), JSON.stringify(deliveries)],
    );
    return emitted;
  }
}
