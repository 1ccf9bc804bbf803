// How broadcast campaigns look on the wire (docs/messaging.md § Campaigns).
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { MoneySchema, NullableTimestamp, Timestamp } from '../../kernel/http/schemas.ts';
import { WEEKDAYS } from '../automation/index.ts';
import { money } from '../billing/index.ts';
import { AudienceSchema, CAMPAIGN_STATUSES } from '../campaign-shared/index.ts';
import { PricingRuleSchema } from '../pricing/index.ts';
import type { CampaignRow, Counters, RecipientRow } from './repo.ts';

const Status = Type.Enum([...CAMPAIGN_STATUSES]);
const HHMM = Type.String({
  pattern: '^([01]\\d|2[0-3]):[0-5]\\d$',
  description: 'Local "HH:MM".',
  examples: ['09:00'],
});

/** The most any campaign is paced at: its messages per second, set or not. */
export const MAX_MESSAGES_PER_SECOND = 1000;

export const MessageSchema = Type.Object(
  {
    templateName: Type.String({ minLength: 1, maxLength: 512 }),
    templateLanguage: Type.String({ minLength: 2, maxLength: 15, examples: ['en_US'] }),
    parameters: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 20 }),
          Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), Type.String({ maxLength: 1024 }), {
            maxProperties: 20,
          }),
        ],
        {
          description:
            'The template’s parameters: in order for a POSITIONAL template, an object by placeholder name for a NAMED one (`{"first_name": "{{ contact.name }}"}`); each may use Liquid over the recipient’s contact: `{{ contact.name | default: "there" }}`, `{{ contact.attributes.city }}`. Each renders to at most 1024 characters (a recipient past it fails with TEMPLATE_RENDER_FAILED).',
        },
      ),
    ),
  },
  { additionalProperties: false, description: 'The approved template each recipient gets.' },
);

const SendWindowSchema = Type.Object(
  {
    from: HHMM,
    until: HHMM,
    days: Type.Optional(
      Type.Array(Type.Enum([...WEEKDAYS]), {
        minItems: 1,
        maxItems: 7,
        uniqueItems: true,
        description: 'Days it opens (every day by default).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Send only between these times of each recipient’s local day (its `timezone` attribute, else its number’s country); a recipient outside it waits for its next opening.',
  },
);

const ScheduleSchema = Type.Object(
  {
    startAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'Start later (the campaign is `scheduled`).' }),
    ),
    sendWindow: Type.Optional(SendWindowSchema),
  },
  { additionalProperties: false },
);

const PacingSchema = Type.Object(
  {
    messagesPerSecond: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_MESSAGES_PER_SECOND,
        description:
          'Messages sent per second, at most. Left out: as fast as the channel allows (its throughput, and no more unique recipients a day than its messaging limit tier).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateCampaignBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    message: MessageSchema,
    audience: AudienceSchema,
    schedule: Type.Optional(ScheduleSchema),
    pacing: Type.Optional(PacingSchema),
  },
  { additionalProperties: false },
);

export const UpdateCampaignBody = Type.Partial(CreateCampaignBody, {
  additionalProperties: false,
  minProperties: 1,
});

const CountersSchema = Type.Object(
  {
    total: Type.Integer({ description: 'Recipients (the audience, fixed at start).' }),
    queued: Type.Integer({ description: 'Not sent yet: waiting for their turn, send window or hand-over.' }),
    sent: Type.Integer(),
    delivered: Type.Integer(),
    read: Type.Integer(),
    failed: Type.Integer({ description: 'Refused by the send path or by WhatsApp.' }),
    skipped: Type.Integer({
      description: 'Never sent: opted out of marketing, or deleted before their turn.',
    }),
    replied: Type.Integer({ description: 'Answered within 72 hours of their message (counted apart).' }),
  },
  {
    description:
      'Each recipient is in exactly one of queued, sent, delivered, read, failed and skipped: they add up to `total`.',
  },
);

export const CampaignSchema = Type.Object(
  {
    id: Type.String({ examples: ['cmp_01jv0000000000000000000000'] }),
    name: Type.String(),
    message: Type.Object({
      templateName: Type.String(),
      templateLanguage: Type.String(),
      parameters: Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.String())]),
    }),
    audience: AudienceSchema,
    schedule: Type.Object({
      startAt: NullableTimestamp,
      sendWindow: Type.Union([SendWindowSchema, Type.Null()]),
    }),
    pacing: Type.Object({
      messagesPerSecond: Type.Union([Type.Integer(), Type.Null()]),
      throttledTo: Type.Union([Type.Integer(), Type.Null()], {
        description: 'While WhatsApp answers that it is throttling: the rate the campaign is held to.',
      }),
    }),
    status: Status,
    pausedReason: Type.Union([Type.Enum(['insufficient_balance', 'template_not_approved']), Type.Null()], {
      description:
        'Why Tidings paused it: the wallet could not pay the next message (top it up, then resume), or the template is no longer approved. Null when paused through the API.',
    }),
    counters: CountersSchema,
    cost: Type.Object({
      estimated: Type.Union([MoneySchema, Type.Null()], {
        description: 'The last estimate (POST …/estimate, and again at start); null before one.',
      }),
      charged: MoneySchema,
    }),
    sandbox: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'Started with a sandbox key (its messages simulated, free); null before start.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    startedAt: NullableTimestamp,
    completedAt: NullableTimestamp,
  },
  { title: 'Campaign' },
);

export const EstimateSchema = Type.Object(
  {
    campaignId: Type.String(),
    recipients: Type.Integer({ description: 'Who would be messaged now.' }),
    skipped: Type.Integer({ description: 'Who would be skipped (opted out of marketing).' }),
    cost: MoneySchema,
    liveCost: {
      ...MoneySchema,
      description:
        'What the audience would cost on a live channel (WhatsApp Cloud API), with the same service-window rules: what a sandbox estimate’s 0 stands for. Equal to `cost` off the sandbox.',
    },
    lines: Type.Array(
      Type.Object({
        country: Type.Union([Type.String(), Type.Null()]),
        category: Type.String(),
        rule: PricingRuleSchema,
        unitPrice: MoneySchema,
        count: Type.Integer(),
        amount: MoneySchema,
        liveAmount: { ...MoneySchema, description: 'What these sends would cost on a live channel.' },
        free: Type.Integer({ description: 'Of `count`, those free (an open service window, the sandbox).' }),
      }),
      { description: "By country, category and the price book's rule that prices them." },
    ),
    balance: MoneySchema,
    shortfall: MoneySchema,
    estimatedAt: Timestamp,
  },
  { title: 'CampaignEstimate' },
);

export const RECIPIENT_STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed', 'skipped'] as const;

export const RecipientSchema = Type.Object(
  {
    contactId: Type.String(),
    phone: Type.Union([Type.String(), Type.Null()], {
      description: "The contact's number; null for one known by WhatsApp user id alone (sent to by that id).",
    }),
    status: Type.Enum([...RECIPIENT_STATUSES]),
    messageId: Type.Union([Type.String(), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why skipped (`opted_out`, `contact_deleted`, `canceled`) or failed (the error code).',
    }),
    error: Type.Union([
      Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true }),
      Type.Null(),
    ]),
    messagedAt: NullableTimestamp,
    repliedAt: NullableTimestamp,
  },
  { title: 'CampaignRecipient' },
);

export const CampaignIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const CampaignListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Status) },
  { additionalProperties: false },
);
export const RecipientListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Type.Enum([...RECIPIENT_STATUSES])),
    replied: Type.Optional(
      Type.Boolean({ description: 'Only those who replied (true) or did not (false).' }),
    ),
  },
  { additionalProperties: false },
);

export function toCampaign(row: CampaignRow, counters: Counters, chargedMicros: number, currency: string) {
  return {
    id: row.id,
    name: row.name,
    message: { ...row.message, parameters: row.message.parameters ?? [] },
    audience: row.audience,
    schedule: { startAt: row.start_at?.toISOString() ?? null, sendWindow: row.send_window },
    pacing: { messagesPerSecond: row.messages_per_second, throttledTo: row.backoff_rate },
    status: row.status,
    pausedReason: row.paused_reason as 'insufficient_balance' | 'template_not_approved' | null,
    counters,
    cost: {
      estimated: row.estimated_micros === null ? null : money(Number(row.estimated_micros), currency),
      charged: money(chargedMicros, currency),
    },
    sandbox: row.mode === null ? null : row.mode === 'sandbox',
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

export function toRecipient(row: RecipientRow) {
  return {
    contactId: row.contact_id,
    phone: row.phone,
    status: row.status,
    messageId: row.message_id,
    reason: row.reason,
    error: row.error,
    messagedAt: row.messaged_at?.toISOString() ?? null,
    repliedAt: row.replied_at?.toISOString() ?? null,
  };
}
