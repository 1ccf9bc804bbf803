// POST /webhooks/{id}/replay: the past events an endpoint should have had (after an outage on the
// receiver's side, or before it subscribed to them) delivered to it again, each as a new delivery
// carrying the original event id as `webhook-id` and the stored payload bytes, so a receiver that
// drops duplicates by webhook-id stays correct. Only events still kept (TIDINGS_EVENT_RETENTION_DAYS)
// can be replayed; `webhook.test` events, sent to one webhook each, are never replayed.
import { conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import { filterProblem } from '../../kernel/outbox/events.ts';
import { idAt, newId } from '../../kernel/values/ids.ts';
import { eventsToReplay } from '../events/index.ts';
import { DELIVERY_CHANNEL, wakePayload } from './outbox.ts';
import { findEndpoint, type Owner } from './repo.ts';
import { AUTOMATIC_ATTEMPTS } from './schedule.ts';
import type { WebhookServices } from './service.ts';

/** Events one replay may deliver; a longer period is replayed in several calls (since/until). */
export const MAX_REPLAY_EVENTS = 10_000;

export interface ReplayInput {
  since: string;
  until?: string;
  types?: string[];
}

export async function replayEvents(
  s: WebhookServices,
  owner: Owner,
  id: string,
  input: ReplayInput,
): Promise<{ replayed: number; since: Date; until: Date }> {
  const since = new Date(input.since);
  const until = input.until ? new Date(input.until) : s.now();
  if (until.getTime() <= since.getTime()) throw invalid('until', 'must be after since');
  input.types?.forEach((filter, i) => {
    const problem = filterProblem(filter);
    if (problem) throw invalid(`types[${i}]`, `${problem}; use an event type, "family.*" or "*"`);
  });
  return s.db.transaction(async (tx) => {
    // Locked: a replay and a disable of the endpoint do not cross.
    const endpoint = await findEndpoint(tx, owner, id, { forUpdate: true });
    if (!endpoint) throw notFound('webhook');
    if (!endpoint.enabled) throw conflict('The webhook is disabled; enable it before replaying events.');
    // The endpoint's account, or every account of its partner; a time range is an id range.
    const rows = await eventsToReplay(tx, {
      owner: endpoint.account_id
        ? { accountId: endpoint.account_id }
        : { partnerId: endpoint.partner_id as string },
      fromId: idAt('event', since),
      beforeId: idAt('event', until),
      filters: input.types ? [endpoint.event_filters, input.types] : [endpoint.event_filters],
      limit: MAX_REPLAY_EVENTS + 1,
    });
    if (rows.length > MAX_REPLAY_EVENTS) {
      throw invalid(
        'since',
        `more than ${MAX_REPLAY_EVENTS} events match; replay a shorter period (since/until) in several calls`,
      );
    }
    if (rows.length > 0) {
      const now = s.now();
      const deliveries = rows.map((r) => ({ id: newId('delivery'), event_id: r.id, type: r.type }));
      await tx.query(
        `INSERT INTO webhook_deliveries
           (id, endpoint_id, event_id, event_type, attempts_allowed, next_attempt_at, created_at, updated_at, replay)
         SELECT d.id, $1, d.event_id, d.type, ${AUTOMATIC_ATTEMPTS}, $2, $2, $2, true
           FROM jsonb_to_recordset($3::jsonb) AS d (id text, event_id text, type text)`,
        [endpoint.id, now, JSON.stringify(deliveries)],
      );
      await tx.query(`SELECT pg_notify('${DELIVERY_CHANNEL}', $1)`, [
        wakePayload([{ endpoint_id: endpoint.id, owner: (endpoint.account_id ?? endpoint.partner_id)! }]),
      ]);
    }
    return { replayed: rows.length, since, until };
  });
}
