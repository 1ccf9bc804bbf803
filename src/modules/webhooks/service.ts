// Webhook subscriptions of an owner (an account, or a partner for all its accounts): create, change,
// delete, rotate the signing secret, send a test event, list deliveries and retry one.

import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Sql } from '../../kernel/database/db.ts';
import { ApiError, conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import { type EventOutbox, filterProblem } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { DELIVERY_CHANNEL, type WebhookAudience, wakePayload } from './outbox.ts';
import {
  countEndpoints,
  type DeliveryRow,
  deleteEndpoint,
  type EndpointChanges,
  type EndpointRow,
  failPendingDeliveries,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  type Owner,
  requeueDelivery,
  updateEndpoint,
} from './repo.ts';
import { generateSecret, secretProblem } from './signing.ts';

/** Subscriptions one owner may have (Stripe allows 16; docs/decisions.md § Events and webhooks). */
export const MAX_ENDPOINTS_PER_OWNER = 20;

const DISABLED_BY_OWNER = 'disabled by you';

/** How long the secret replaced by a rotation keeps signing. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

export interface WebhookServices {
  db: Database;
  egress: Egress;
  secrets: SecretBox;
  events: EventOutbox;
  now: () => Date;
}

export interface EndpointInput {
  url: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  secret?: string;
}

async function checkUrl(egress: Egress, url: string): Promise<void> {
  const problem = await egress.check(url);
  // The message is a sentence naming the URL, since it is what a newcomer reads first.
  if (problem) {
    throw new ApiError('INVALID_REQUEST', `The webhook URL ${url} ${problem}.`, {
      details: [{ field: 'url', issue: problem }],
    });
  }
}

function checkFilters(filters: string[]): string[] {
  filters.forEach((filter, i) => {
    const problem = filterProblem(filter);
    if (problem) throw invalid(`events[${i}]`, `${problem}; use an event type, "family.*" or "*"`);
  });
  return [...new Set(filters)];
}

function checkSecret(secret: string): string {
  const problem = secretProblem(secret);
  if (problem) throw invalid('secret', problem);
  return secret;
}

async function endpointOf(sql: Sql, owner: Owner, id: string, forUpdate = false): Promise<EndpointRow> {
  const row = await findEndpoint(sql, owner, id, { forUpdate });
  if (!row) throw notFound('webhook');
  return row;
}

export async function createEndpoint(
  s: WebhookServices,
  owner: Owner,
  input: EndpointInput,
): Promise<{ row: EndpointRow; secret: string }> {
  const filters = checkFilters(input.events ?? ['*']);
  const secret = input.secret === undefined ? generateSecret() : checkSecret(input.secret);
  await checkUrl(s.egress, input.url);
  const row = await s.db.transaction(async (tx) => {
    // Serialises concurrent creations of one owner so the count below holds.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhooks:${owner.id}`]);
    if ((await countEndpoints(tx, owner)) >= MAX_ENDPOINTS_PER_OWNER) {
      throw conflict(`At most ${MAX_ENDPOINTS_PER_OWNER} webhooks are allowed; delete one first.`);
    }
    return insertEndpoint(
      tx,
      owner,
      {
        id: newId('webhook'),
        url: input.url,
        description: input.description ?? null,
        event_filters: filters,
        enabled: input.enabled ?? true,
        disabled_reason: input.enabled === false ? DISABLED_BY_OWNER : null,
        secret_sealed: s.secrets.seal(secret),
      },
      s.now(),
    );
  });
  return { row, secret };
}

export async function getEndpoint(s: WebhookServices, owner: Owner, id: string): Promise<EndpointRow> {
  return endpointOf(s.db, owner, id);
}

export async function changeEndpoint(
  s: WebhookServices,
  owner: Owner,
  id: string,
  input: Partial<Omit<EndpointInput, 'secret'>>,
): Promise<EndpointRow> {
  const changes: EndpointChanges = {};
  if (input.events !== undefined) changes.event_filters = checkFilters(input.events);
  if (input.description !== undefined) changes.description = input.description;
  if (input.url !== undefined) {
    await checkUrl(s.egress, input.url);
    changes.url = input.url;
  }
  return s.db.transaction(async (tx) => {
    const row = await endpointOf(tx, owner, id, true);
    const now = s.now();
    if (input.enabled === true && !row.enabled) {
      // A fresh start: the failure streak that may have disabled it is forgotten.
      Object.assign(changes, { enabled: true, disabled_reason: null, failing_since: null });
    } else if (input.enabled === false && row.enabled) {
      Object.assign(changes, { enabled: false, disabled_reason: DISABLED_BY_OWNER });
      await failPendingDeliveries(tx, [id], 'the webhook was disabled before this delivery was made', now);
    }
    return updateEndpoint(tx, id, changes, now);
  });
}

export async function removeEndpoint(s: WebhookServices, owner: Owner, id: string): Promise<void> {
  if (!(await deleteEndpoint(s.db, owner, id))) throw notFound('webhook');
}

export async function rotateSecret(
  s: WebhookServices,
  owner: Owner,
  id: string,
  input: { secret?: string },
): Promise<{ row: EndpointRow; secret: string }> {
  const secret = input.secret === undefined ? generateSecret() : checkSecret(input.secret);
  return s.db.transaction(async (tx) => {
    const row = await endpointOf(tx, owner, id, true);
    const now = s.now();
    const updated = await updateEndpoint(
      tx,
      id,
      {
        secret_sealed: s.secrets.seal(secret),
        previous_secret_sealed: row.secret_sealed,
        previous_secret_expires_at: new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS),
      },
      now,
    );
    return { row: updated, secret };
  });
}

/** Queues a `webhook.test` event to this one webhook. */
export async function sendTestEvent(s: WebhookServices, owner: Owner, id: string): Promise<DeliveryRow> {
  return s.db.transaction(async (tx) => {
    const row = await endpointOf(tx, owner, id);
    if (!row.enabled) throw conflict('The webhook is disabled; enable it before sending a test event.');
    const event = await s.events.emit(
      tx,
      {
        type: 'webhook.test',
        accountId: row.account_id,
        data: { webhookId: row.id, url: row.url, message: 'A test event from Tidings.' },
      },
      {
        to: {
          audiences: {
            webhooks: [
              { id: row.id, filters: ['*'], owner: (row.account_id ?? row.partner_id)! },
            ] satisfies WebhookAudience,
          },
          partnerId: row.partner_id,
        },
      },
    );
    const delivery = await findDelivery(tx, row.id, event.added.webhooks![0]!);
    if (!delivery) throw new ApiError('INTERNAL_ERROR');
    return delivery;
  });
}

/** Makes a delivery due now: another attempt, whatever its state (a replay when it succeeded). */
export async function retryDelivery(
  s: WebhookServices,
  owner: Owner,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryRow> {
  return s.db.transaction(async (tx) => {
    const endpoint = await endpointOf(tx, owner, endpointId);
    const delivery = await findDelivery(tx, endpointId, deliveryId, { forUpdate: true });
    if (!delivery) throw notFound('delivery');
    if (!endpoint.enabled) throw conflict('The webhook is disabled; enable it before retrying deliveries.');
    await requeueDelivery(tx, delivery, s.now());
    await tx.query(`SELECT pg_notify('${DELIVERY_CHANNEL}', $1)`, [
      wakePayload([{ endpoint_id: endpoint.id, owner: (endpoint.account_id ?? endpoint.partner_id)! }]),
    ]);
    return (await findDelivery(tx, endpointId, deliveryId))!;
  });
}
