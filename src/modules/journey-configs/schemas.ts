// How journey configs look on the wire: a `type` and its `config`. The create body is a oneOf told
// apart by `type`, so a bad config is reported against its own type's fields; PATCH does not repeat
// the type, so its `config` is checked against the config's type by checks.ts. What a schema cannot
// check (durations, the appointment's field, the buttons) is checks.ts's too.
import { type Static, type TSchema, Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { Timestamp } from '../../kernel/http/schemas.ts';
import { messageFields } from '../messages/index.ts';
import type { ConfigRow } from './repo.ts';

export const CONFIG_TYPES = ['appointment_reminder', 'welcome_message', 're_engagement'] as const;
export type ConfigType = (typeof CONFIG_TYPES)[number];

const Duration = (description: string, examples: string[]) =>
  Type.String({ maxLength: 40, description, examples });
const Tag = Type.String({ minLength: 1, maxLength: 100 });

const TemplateSend = Type.Object(
  {
    templateName: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'An approved template of the account.',
      examples: ['appointment_reminder'],
    }),
    templateLanguage: Type.String({ minLength: 2, maxLength: 15, examples: ['en_US'] }),
    parameters: messageFields.parameters,
  },
  {
    additionalProperties: false,
    description: 'A template send (the contact may not have written for a while). Parameters are Liquid.',
  },
);

const Outcome = (what: string) =>
  Type.Object(
    {
      addTags: Type.Optional(Type.Array(Tag, { minItems: 1, maxItems: 20 })),
      removeTags: Type.Optional(Type.Array(Tag, { minItems: 1, maxItems: 20 })),
      setAttributes: Type.Optional(
        Type.Record(
          Type.String(),
          Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean(), Type.Null()]),
          {
            minProperties: 1,
            maxProperties: 20,
            description: 'Strings are Liquid templates; null removes the attribute.',
          },
        ),
      ),
      reply: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 4096,
          description: 'A text message sent back (Liquid), inside the window the tap opened.',
        }),
      ),
    },
    { additionalProperties: false, description: `What a tap on the ${what} button does; the run then ends.` },
  );

export const AppointmentReminderConfig = Type.Object(
  {
    appointmentAt: Type.String({
      maxLength: 140,
      description:
        'Where the appointment’s date-time is: contact.attributes.<key>, or trigger.data.<key> (the data of POST /journeys/{journeyId}/trigger).',
      examples: ['contact.attributes.appointmentAt'],
    }),
    remindBefore: Type.Array(Duration('How long before the appointment (ISO-8601, at most P30D).', ['P1D']), {
      minItems: 1,
      maxItems: 5,
      description:
        'A reminder for each, the earliest first whatever the order. One whose time passed more than an hour before the run got there is skipped.',
    }),
    message: TemplateSend,
    confirm: Type.Optional(
      Type.Object(
        {
          buttons: Type.Object(
            {
              confirm: Type.String({ minLength: 1, maxLength: 25, examples: ['Confirm'] }),
              cancel: Type.String({ minLength: 1, maxLength: 25, examples: ['Cancel'] }),
            },
            {
              additionalProperties: false,
              description:
                'The template’s quick-reply labels (a tap answers with its label): checked against the template when the config is saved (400 at confirm.buttons.confirm or .cancel), and when each reminder is sent (a template changed since: the run fails, BUTTONS_MISSING).',
            },
          ),
          onConfirm: Outcome('confirm'),
          onCancel: Outcome('cancel'),
        },
        {
          additionalProperties: false,
          description:
            'After each reminder, wait for a tap on one of the buttons until the next reminder (after the last: for its own lead time, at most P7D).',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const WelcomeMessageConfig = Type.Object(
  {
    on: Type.Enum(['contact.created', 'first_inbound'], {
      description:
        'contact.created: when a contact is made (by the API, an import or a first message); first_inbound: the first message from a contact the journey sees. Once per contact.',
    }),
    delay: Type.Optional(Duration('Wait this long first (ISO-8601, at most P30D).', ['PT5M'])),
    message: Type.Object(messageFields, {
      additionalProperties: false,
      description:
        'A `POST /messages` body without `to`. A free-form message needs the customer service window: use a template for contact.created.',
    }),
  },
  { additionalProperties: false },
);

export const ReEngagementConfig = Type.Object(
  {
    inactiveFor: Duration('Silence (no message from the contact) that starts a run (ISO-8601).', ['P30D']),
    message: TemplateSend,
    maxAttempts: Type.Integer({ minimum: 1, maximum: 5, description: 'Sends at most.' }),
    spacing: Duration(
      'Time between sends, and after the last (at most P7D with exitOnReply, else P30D; all of them within P30D).',
      ['P3D'],
    ),
    exitOnReply: Type.Boolean({ description: 'A reply ends the run: no more sends.' }),
  },
  { additionalProperties: false },
);

export const CONFIG_SCHEMAS: Record<ConfigType, TSchema> = {
  appointment_reminder: AppointmentReminderConfig,
  welcome_message: WelcomeMessageConfig,
  re_engagement: ReEngagementConfig,
};

export type AppointmentReminder = Static<typeof AppointmentReminderConfig>;
export type WelcomeMessage = Static<typeof WelcomeMessageConfig>;
export type ReEngagement = Static<typeof ReEngagementConfig>;
export type Config = AppointmentReminder | WelcomeMessage | ReEngagement;

/** A config with its type: what compile.ts and checks.ts take. */
export type TypedConfig =
  | { type: 'appointment_reminder'; config: AppointmentReminder }
  | { type: 'welcome_message'; config: WelcomeMessage }
  | { type: 're_engagement'; config: ReEngagement };

const Name = Type.String({ minLength: 1, maxLength: 200, examples: ['Appointment reminders'] });

const DESCRIPTIONS: Record<ConfigType, string> = {
  appointment_reminder:
    'Template reminders before an appointment (started by POST /journeys/{journeyId}/trigger), with an optional confirm/cancel tap.',
  welcome_message: 'A message to each new contact, or on their first message.',
  re_engagement: 'Template messages to contacts silent for a while, until they reply.',
};

export const CreateConfigBody = Type.Unsafe<{ name: string } & TypedConfig>({
  // AJV's discriminator lets anything but an object through: the type says it must be one.
  type: 'object',
  oneOf: CONFIG_TYPES.map((type) =>
    Type.Object(
      { name: Name, type: Type.Literal(type), config: CONFIG_SCHEMAS[type] },
      { additionalProperties: false, description: DESCRIPTIONS[type] },
    ),
  ),
  discriminator: { propertyName: 'type' },
  description: 'A journey config: `type` says which, and which `config` it takes.',
});

const ConfigStatus = Type.Enum(['active', 'paused'], {
  description: 'active: its journey is published; paused: its journey starts no run and its runs hold.',
});

export const UpdateConfigBody = Type.Object(
  {
    name: Type.Optional(Name),
    config: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'The whole config, as its type takes it (see POST /journey-configs).',
      }),
    ),
    status: Type.Optional(ConfigStatus),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const JourneyConfigSchema = Type.Object(
  {
    id: Type.String({ examples: ['jcf_01jv0000000000000000000000'] }),
    name: Type.String(),
    type: Type.Enum([...CONFIG_TYPES]),
    config: Type.Record(Type.String(), Type.Unknown(), { description: 'As its type takes it.' }),
    journeyId: Type.String({
      description:
        'The journey built from it (read-only through /journeys): its runs and statistics are there.',
    }),
    status: ConfigStatus,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'JourneyConfig' },
);

export const ConfigIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const ConfigListQuery = Type.Object(
  {
    ...PageQuery,
    type: Type.Optional(Type.Enum([...CONFIG_TYPES])),
    status: Type.Optional(Type.Enum(['active', 'paused'])),
  },
  { additionalProperties: false },
);

export function toConfig(row: ConfigRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    config: row.config as Record<string, unknown>,
    journeyId: row.journey_id,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
