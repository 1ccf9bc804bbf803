// How business hours look on the wire (GET|PUT /account/business-hours).
import { Type } from 'typebox';
import { NullableTimestamp, nullable } from '../../kernel/http/schemas.ts';
import { MAX_HOLIDAYS, MAX_RANGES, WEEKDAYS } from '../automation/index.ts';

const Range = Type.Object(
  {
    day: Type.Enum([...WEEKDAYS]),
    from: Type.String({ maxLength: 5, description: 'Local "HH:MM", inclusive.', examples: ['09:00'] }),
    until: Type.String({
      maxLength: 5,
      description: 'Local "HH:MM", exclusive, later than from ("24:00": the end of the day).',
      examples: ['17:30'],
    }),
  },
  { additionalProperties: false },
);

const Reply = Type.Union(
  [
    Type.Object(
      { text: Type.String({ minLength: 1, maxLength: 4096 }) },
      { additionalProperties: false, description: 'A text (the customer just wrote: their window is open).' },
    ),
    Type.Object(
      {
        templateName: Type.String({ minLength: 1, maxLength: 512 }),
        templateLanguage: Type.String({ minLength: 2, maxLength: 15 }),
        parameters: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 20 })),
      },
      { additionalProperties: false, description: 'An approved template of the account.' },
    ),
  ],
  {
    description:
      '`{text}` or `{templateName, templateLanguage, parameters?}`, sent and charged as any message.',
  },
);

const fields = {
  timezone: Type.String({ maxLength: 64, description: 'An IANA time zone.', examples: ['Europe/Berlin'] }),
  weekly: Type.Array(Range, {
    maxItems: MAX_RANGES,
    description: 'When it is open, by day (several ranges a day; an overnight shift is two).',
  }),
  holidays: Type.Array(Type.String({ maxLength: 10, examples: ['2026-12-25'] }), {
    maxItems: MAX_HOLIDAYS,
    description: 'Dates ("YYYY-MM-DD", in the zone) closed all day.',
  }),
  awayMessage: nullable({
    ...Reply,
    description:
      'Sent to a customer who writes while it is closed, at most once per conversation per `awayEvery`.',
  }),
  awayEvery: Type.String({
    maxLength: 20,
    description:
      'An ISO-8601 duration from one minute to 30 days (`PT12H`): how often one conversation may get the away message.',
    examples: ['PT12H'],
  }),
  greeting: nullable({
    ...Reply,
    description: 'Sent for the first customer message of a conversation while it is open.',
  }),
};

export const BusinessHoursSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'false: always open, no away message, no greeting.' }),
    ...fields,
    openNow: Type.Boolean({
      description: 'Whether it is open now (the rule condition `time.businessHours`).',
    }),
    updatedAt: NullableTimestamp,
  },
  { title: 'BusinessHours' },
);

export const PutBusinessHoursBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'false turns them off (the rest may be left out).' })),
    timezone: Type.Optional(fields.timezone),
    weekly: Type.Optional(fields.weekly),
    holidays: Type.Optional(fields.holidays),
    awayMessage: Type.Optional(fields.awayMessage),
    awayEvery: Type.Optional(fields.awayEvery),
    greeting: Type.Optional(fields.greeting),
  },
  { additionalProperties: false, description: 'The whole setting: what is left out takes its default.' },
);
