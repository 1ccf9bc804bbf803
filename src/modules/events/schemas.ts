import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { Timestamp } from '../../kernel/http/schemas.ts';
import type { EventEnvelope } from '../../kernel/outbox/events.ts';
import { EVENT_TYPES } from '../../kernel/outbox/events.ts';
import type { EventRow } from './repo.ts';

const EVENT_ID_EXAMPLE = 'evt_01jv0000000000000000000000';

export const EventSchema = Type.Object(
  {
    id: Type.String({
      description: 'The event id, also the `webhook-id` of its webhook deliveries.',
      examples: [EVENT_ID_EXAMPLE],
    }),
    type: Type.String({ description: `One of: ${EVENT_TYPES.join(', ')}.`, examples: ['message.delivered'] }),
    createdAt: Timestamp,
    accountId: Type.Union([Type.String(), Type.Null()], { description: 'The account the event is about.' }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'The resource as the API shows it (plus `previousStatus` on status changes).',
      },
    ),
    causedBy: Type.Optional(
      Type.Object(
        {
          kind: Type.Enum(['rule', 'sequence', 'journey']),
          id: Type.String(),
          runId: Type.String(),
          depth: Type.Integer({ minimum: 1 }),
        },
        { description: 'Set when automation caused the event: the rule, sequence or journey and its run.' },
      ),
    ),
  },
  { title: 'Event' },
);

const TypeFilter = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'An exact event type, a family such as `message.*`, or `*`.',
  examples: ['message.*'],
});

export const EventListQuery = Type.Object(
  {
    ...PageQuery,
    type: Type.Optional(TypeFilter),
    since: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events created at or after this time.' }),
    ),
    until: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only events created before this time.' }),
    ),
  },
  { additionalProperties: false },
);

export const EventIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const StreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description:
          'Comma-separated event filters (exact type, `family.*` or `*`); all events when left out.',
        examples: ['message.*,contact.created'],
      }),
    ),
    since: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Replay from here before going live: an event id (the events after it) or a date-time (the events created at or after it). The `Last-Event-ID` header, when sent, wins.',
        examples: [EVENT_ID_EXAMPLE, '2026-11-26T12:00:00Z'],
      }),
    ),
  },
  { additionalProperties: false },
);

export const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'The `id` of the last message received: the stream resumes after it. Browsers’ EventSource sends it on reconnection.',
    }),
  ),
});

export const ReplayBody = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description: 'Replay the events created at or after this time.',
    }),
    until: Type.Optional(
      Type.String({ format: 'date-time', description: 'And before this time (now when left out).' }),
    ),
    types: Type.Optional(
      Type.Array(TypeFilter, {
        minItems: 1,
        maxItems: 50,
        description: 'Only events these filters take too (the webhook’s own filters always apply).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ReplaySchema = Type.Object(
  {
    replayed: Type.Integer({ minimum: 0, description: 'Deliveries made: one per event, sent from now on.' }),
    since: Timestamp,
    until: Timestamp,
  },
  { title: 'WebhookReplay' },
);

/** An event as the API shows it: the stored envelope, parsed. */
export function toEvent(row: EventRow): EventEnvelope {
  return JSON.parse(row.payload) as EventEnvelope;
}
