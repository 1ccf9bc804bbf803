import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { EVENT_TYPES } from '../../kernel/outbox/events.ts';
import type { AttemptRow, DeliveryRow, EndpointRow } from './repo.ts';

const EventFilters = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: `Event types to receive: an exact type, a family such as \`message.*\`, or \`*\` for all. Types: ${EVENT_TYPES.join(', ')}.`,
  examples: [['message.*', 'contact.created']],
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'Where events are POSTed. https, reaching a public address (WEBHOOK_ALLOWED_HOSTS lets local hosts through).',
  examples: ['https://example.com/hooks/tidings'],
});

const Secret = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Your own signing secret, `whsec_` + base64 of 24–64 bytes. Omit it to have one generated.',
});

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Type.Optional(EventFilters),
    description: Type.Optional(nullable(Type.String({ maxLength: 500 }))),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    secret: Type.Optional(Secret),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventFilters),
    description: Type.Optional(nullable(Type.String({ maxLength: 500 }))),
    enabled: Type.Optional(
      Type.Boolean({ description: 'false stops deliveries (pending ones fail); true starts them again.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RotateSecretBody = Type.Object(
  { secret: Type.Optional(Secret) },
  { additionalProperties: false },
);

const webhookProperties = {
  id: Type.String(),
  url: Type.String(),
  description: nullable(Type.String()),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabledReason: nullable(
    Type.String({
      description: 'Why deliveries stopped: disabled by you, 410 Gone, or five days of failures.',
    }),
  ),
  previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], {
    description: 'Until then the secret replaced by the last rotation also signs.',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const WebhookSchema = Type.Object(webhookProperties, { title: 'Webhook' });

export const WebhookWithSecret = Type.Object(
  {
    ...webhookProperties,
    secret: Type.String({ description: 'The signing secret. Shown only in this answer: keep it.' }),
  },
  { title: 'WebhookWithSecret' },
);

export const WebhookIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  deliveryId: Type.String({ maxLength: 100 }),
});

export const WebhookListQuery = Type.Object(
  { ...PageQuery, enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

const DeliveryStatusSchema = Type.Union(
  [Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')],
  { description: 'pending: waiting for its next attempt; succeeded: a 2xx answer; failed: out of attempts.' },
);

export const DeliveryListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(DeliveryStatusSchema),
    eventType: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

const AttemptSchema = Type.Object(
  {
    attemptedAt: Timestamp,
    statusCode: nullable(
      Type.Integer({ description: 'null when no answer came (refused, timeout, network).' }),
    ),
    latencyMs: Type.Integer(),
    responseExcerpt: nullable(Type.String({ description: 'The first KiB of the answer body.' })),
    error: nullable(Type.String()),
  },
  { title: 'DeliveryAttempt' },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    webhookId: Type.String(),
    eventId: Type.String({ description: 'Sent as the `webhook-id` header; the same on every attempt.' }),
    eventType: Type.String(),
    status: DeliveryStatusSchema,
    attemptCount: Type.Integer(),
    nextAttemptAt: NullableTimestamp,
    lastAttemptAt: NullableTimestamp,
    lastStatusCode: nullable(Type.Integer()),
    lastError: nullable(Type.String()),
    event: Type.Object({}, { additionalProperties: true, description: 'The event body, as delivered.' }),
    replay: Type.Boolean({ description: 'Made by `POST …/replay`: a repeat of a past event.' }),
    attempts: Type.Array(AttemptSchema, { description: 'Every attempt, oldest first.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WebhookDelivery' },
);

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function toWebhook(row: EndpointRow, now: Date) {
  const graceLeft = row.previous_secret_expires_at && row.previous_secret_expires_at > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.event_filters,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    previousSecretExpiresAt: graceLeft ? iso(row.previous_secret_expires_at) : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toDelivery(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    webhookId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    lastAttemptAt: iso(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    event: JSON.parse(row.payload) as object,
    replay: row.replay,
    attempts: attempts.map((a) => ({
      attemptedAt: a.attempted_at.toISOString(),
      statusCode: a.status_code,
      latencyMs: a.latency_ms,
      responseExcerpt: a.response_excerpt,
      error: a.error,
    })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
