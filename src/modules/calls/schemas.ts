// How calls look on the wire (docs/voice.md § Calls).
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { MoneySchema, NullableTimestamp, Timestamp } from '../../kernel/http/schemas.ts';
import { liquidData } from '../automation/index.ts';
import { money } from '../billing/index.ts';
import type { CallRow } from './repo.ts';

export const CALL_STATUSES = [
  'queued',
  'initiated',
  'ringing',
  'in_progress',
  'completed',
  'busy',
  'no_answer',
  'failed',
  'canceled',
] as const;

const Status = Type.Enum([...CALL_STATUSES], {
  description:
    'queued → initiated → ringing → in_progress → completed, or an end before: busy, no_answer, failed, canceled. An ended call never changes.',
});

export const CALL_DEFAULTS = { ringTimeoutSeconds: 30, maxDurationSeconds: 600 } as const;

export const CreateCallBody = Type.Object(
  {
    to: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'E.164 (or national, read in the account’s country).',
    }),
    scriptId: Type.String({
      maxLength: 100,
      description: 'A published voice script; the call plays its current version.',
    }),
    variables: Type.Optional(
      liquidData('Read by the script’s Liquid as `{{ variables.<name> }}` (beside `{{ contact.… }}`).'),
    ),
    machineDetection: Type.Optional(
      Type.Boolean({
        description:
          'Ask the provider who answered (`answeredBy`); the script’s `onMachine` then applies. Default false.',
      }),
    ),
    ringTimeoutSeconds: Type.Optional(
      Type.Integer({
        minimum: 5,
        maximum: 600,
        description: `Ring this long before no_answer (${CALL_DEFAULTS.ringTimeoutSeconds}).`,
      }),
    ),
    maxDurationSeconds: Type.Optional(
      Type.Integer({
        minimum: 10,
        maximum: 14_400,
        description: `The call is cut after this long connected (${CALL_DEFAULTS.maxDurationSeconds}); the wallet hold is this many minutes.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const ErrorSchema = Type.Object({
  code: Type.String({ description: 'Tidings’ code: docs/voice.md § Failure codes.' }),
  message: Type.String(),
  providerCode: Type.Union([Type.String(), Type.Null()], {
    description: 'The provider’s own code (Twilio’s, e.g. "21211").',
  }),
});

export const CallSchema = Type.Object(
  {
    id: Type.String({ examples: ['call_01jv0000000000000000000000'] }),
    to: Type.String(),
    from: Type.Union([Type.String(), Type.Null()]),
    contactId: Type.Union([Type.String(), Type.Null()]),
    scriptId: Type.String(),
    scriptVersion: Type.Integer(),
    variables: Type.Record(Type.String(), Type.Unknown()),
    provider: Type.Enum(['sandbox', 'twilio']),
    sandbox: Type.Boolean({
      description:
        'Made with a sandbox key (or by automation a sandbox key or sandbox event started): simulated whatever the voice channel, never charged. A live key’s call on the sandbox channel is simulated too but says false (`provider` says who carried it), as a message does.',
    }),
    providerCallId: Type.Union([Type.String(), Type.Null()], {
      description: 'Twilio’s CallSid (a sandbox one for the sandbox).',
    }),
    status: Status,
    answeredBy: Type.Union([Type.Enum(['human', 'machine', 'unknown']), Type.Null()]),
    digits: Type.Array(
      Type.Object({
        nodeId: Type.String(),
        input: Type.String({ description: 'Empty: nothing pressed before the timeout.' }),
        at: Timestamp,
      }),
      { description: 'Keys pressed at each IVR node, in order.' },
    ),
    machineDetection: Type.Boolean(),
    ringTimeoutSeconds: Type.Integer(),
    maxDurationSeconds: Type.Integer(),
    durationSeconds: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Connected time, once ended.',
    }),
    billableMinutes: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Each started minute of the duration.',
    }),
    price: MoneySchema,
    held: MoneySchema,
    charged: MoneySchema,
    error: Type.Union([ErrorSchema, Type.Null()]),
    campaignId: Type.Union([Type.String(), Type.Null()]),
    queuedAt: Timestamp,
    initiatedAt: NullableTimestamp,
    ringingAt: NullableTimestamp,
    answeredAt: NullableTimestamp,
    endedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Call' },
);

export const CallIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const CallListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'E.164.' })),
  },
  { additionalProperties: false },
);

export const DigitsBody = Type.Object(
  { digits: Type.String({ pattern: '^[0-9*#]{1,20}$', description: 'Keys pressed (0-9, * and #).' }) },
  { additionalProperties: false },
);

export function toCall(row: CallRow, currency: string) {
  return {
    id: row.id,
    to: row.to_number,
    from: row.from_number,
    contactId: row.contact_id,
    scriptId: row.script_id,
    scriptVersion: row.script_version,
    variables: row.variables,
    provider: row.provider,
    sandbox: row.mode === 'sandbox',
    providerCallId: row.provider_call_id,
    status: row.status,
    answeredBy: row.answered_by,
    digits: row.digits,
    machineDetection: row.machine_detection,
    ringTimeoutSeconds: row.ring_timeout_seconds,
    maxDurationSeconds: row.max_duration_seconds,
    durationSeconds: row.duration_seconds,
    billableMinutes: row.billable_minutes,
    price: money(Number(row.rate_micros), currency),
    held: money(Number(row.held_micros), currency),
    charged: money(Number(row.charged_micros), currency),
    error: row.error_code
      ? { code: row.error_code, message: row.error_message ?? '', providerCode: row.provider_error_code }
      : null,
    campaignId: row.campaign_id,
    queuedAt: row.queued_at.toISOString(),
    initiatedAt: row.initiated_at?.toISOString() ?? null,
    ringingAt: row.ringing_at?.toISOString() ?? null,
    answeredAt: row.answered_at?.toISOString() ?? null,
    endedAt: row.ended_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const UsageTotals = {
  calls: Type.Integer(),
  answered: Type.Integer(),
  minutes: Type.Integer({ description: 'Billable minutes (each started minute of each call).' }),
  cost: MoneySchema,
};

export const UsageSchema = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    ...UsageTotals,
    byStatus: Type.Record(Type.String(), Type.Integer(), { description: 'Calls by their status now.' }),
    byCountry: Type.Array(
      Type.Object({ country: Type.Union([Type.String(), Type.Null()]), ...UsageTotals }),
      { description: 'By the called number’s country (ISO 3166-1 alpha-2).' },
    ),
  },
  { title: 'VoiceUsage' },
);
