// How voice campaigns look on the wire (docs/voice.md § Campaigns).
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { MoneySchema, NullableTimestamp, Timestamp } from '../../kernel/http/schemas.ts';
import { liquidData } from '../automation/index.ts';
import { money } from '../billing/index.ts';
import { AudienceSchema, CAMPAIGN_STATUSES } from '../campaign-shared/index.ts';
import type { CampaignRow, Counters } from './repo.ts';

const Status = Type.Enum([...CAMPAIGN_STATUSES]);

const HHMM = Type.String({
  pattern: '^([01]\\d|2[0-3]):[0-5]\\d$',
  description: 'Local "HH:MM".',
  examples: ['09:00'],
});

export const CAMPAIGN_DEFAULTS = {
  callingHours: { from: '09:00', until: '20:00' },
  pacing: { callsPerSecond: 1, maxConcurrent: 10 },
  retry: { on: ['busy', 'no_answer'], maxAttempts: 1, after: 'PT30M' },
  maxDurationSeconds: 120,
} as const;

// The campaign engine's audience, as broadcast campaigns take it.
const Audience = AudienceSchema;

const Schedule = Type.Object(
  {
    startAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'Start later (the campaign is `scheduled`).' }),
    ),
    callingHours: Type.Optional(
      Type.Object(
        { from: HHMM, until: HHMM },
        {
          additionalProperties: false,
          description: `Calls are made between these times in each contact’s time zone (its \`timezone\` attribute, else its number’s country); ${CAMPAIGN_DEFAULTS.callingHours.from}–${CAMPAIGN_DEFAULTS.callingHours.until} by default, never outside 08:00–21:00.`,
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const Pacing = Type.Object(
  {
    callsPerSecond: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 50,
        description: 'Calls started per second, at most (and at most the plan’s rate).',
      }),
    ),
    maxConcurrent: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'Calls not yet over at once.' }),
    ),
  },
  { additionalProperties: false },
);

const Retry = Type.Object(
  {
    on: Type.Optional(Type.Array(Type.Enum(['busy', 'no_answer']), { uniqueItems: true, maxItems: 2 })),
    maxAttempts: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3, description: 'Calls to one contact, at most.' }),
    ),
    after: Type.Optional(
      Type.String({
        maxLength: 20,
        description: 'ISO-8601 duration before a retry (PT30M), from 1 second to a day.',
      }),
    ),
  },
  { additionalProperties: false },
);

const CallSettings = Type.Object(
  {
    variables: Type.Optional(liquidData('Each call’s `{{ variables.<name> }}`.')),
    machineDetection: Type.Optional(Type.Boolean()),
    ringTimeoutSeconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 600 })),
    maxDurationSeconds: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 14_400,
        description: `Each call’s limit (${CAMPAIGN_DEFAULTS.maxDurationSeconds}); the estimate counts it.`,
      }),
    ),
  },
  { additionalProperties: false, description: 'How each call is made (as POST /voice/calls takes it).' },
);

export const CreateCampaignBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scriptId: Type.String({ maxLength: 100, description: 'A published voice script.' }),
    audience: Audience,
    schedule: Type.Optional(Schedule),
    pacing: Type.Optional(Pacing),
    retry: Type.Optional(Retry),
    call: Type.Optional(CallSettings),
  },
  { additionalProperties: false },
);

export const UpdateCampaignBody = Type.Partial(CreateCampaignBody, {
  additionalProperties: false,
  minProperties: 1,
});

const CountersSchema = Type.Object(
  {
    total: Type.Integer({ description: 'Contacts in the audience (fixed at start).' }),
    queued: Type.Integer({ description: 'Waiting for a call (or a retry, or their calling hours).' }),
    inProgress: Type.Integer({ description: 'With a call not over.' }),
    completed: Type.Integer(),
    answered: Type.Integer(),
    busy: Type.Integer(),
    noAnswer: Type.Integer(),
    failed: Type.Integer(),
    canceled: Type.Integer(),
    skipped: Type.Integer({
      description:
        'Not called, reason `no_phone`: the contact has no phone (WhatsApp knows them by their user id alone), and a call needs one.',
    }),
  },
  { description: 'Per contact, by its last call once no retry is left: they add up to `total`.' },
);

export const CampaignSchema = Type.Object(
  {
    id: Type.String({ examples: ['vcp_01jv0000000000000000000000'] }),
    name: Type.String(),
    scriptId: Type.String(),
    status: Status,
    audience: Audience,
    schedule: Type.Object({
      startAt: NullableTimestamp,
      callingHours: Type.Object({ from: Type.String(), until: Type.String() }),
    }),
    pacing: Type.Object({ callsPerSecond: Type.Integer(), maxConcurrent: Type.Integer() }),
    retry: Type.Object({ on: Type.Array(Type.String()), maxAttempts: Type.Integer(), after: Type.String() }),
    call: Type.Record(Type.String(), Type.Unknown()),
    counters: CountersSchema,
    estimatedCost: MoneySchema,
    sandbox: Type.Union([Type.Boolean(), Type.Null()], {
      description: 'Started with a sandbox key (its calls simulated); null before start.',
    }),
    startedAt: NullableTimestamp,
    endedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'VoiceCampaign' },
);

export const CampaignIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const CampaignListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Status) },
  { additionalProperties: false },
);
export const CampaignCallsQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export function toCampaign(row: CampaignRow, counters: Counters, currency: string) {
  return {
    id: row.id,
    name: row.name,
    scriptId: row.script_id,
    status: row.status,
    audience: row.audience,
    schedule: {
      startAt: row.start_at?.toISOString() ?? null,
      callingHours: { from: row.calling_from, until: row.calling_until },
    },
    pacing: { callsPerSecond: row.calls_per_second, maxConcurrent: row.max_concurrent },
    retry: { on: row.retry_on, maxAttempts: row.max_attempts, after: row.retry_after },
    call: { ...row.call_settings } as Record<string, unknown>,
    counters,
    estimatedCost: money(Number(row.estimated_cost_micros), currency),
    sandbox: row.mode === null ? null : row.mode === 'sandbox',
    startedAt: row.started_at?.toISOString() ?? null,
    endedAt: row.ended_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
