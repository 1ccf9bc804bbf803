import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import type { Conditions } from '../automation/index.ts';
import { ConditionsSchema, TRIGGER_EVENTS, WEEKDAYS } from '../automation/index.ts';
import { jobProperties } from '../bulk/index.ts';
import { messageFields } from '../messages/index.ts';
import type { EnrollmentRow, SequenceRow } from './repo.ts';

export const MAX_STEPS = 20;
export const MAX_BULK_ENROLLMENTS = 1000;

/** Events a sequence may enrol on: those of rules, without the timed triggers. */
export const ENROLL_EVENTS = TRIGGER_EVENTS.filter(
  (t) => t !== 'conversation.unanswered' && t !== 'contact.inactive',
);

const StepId = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,40}$',
  description: 'Names the step in enrollments; made (step_1, step_2 …) when not given.',
  examples: ['welcome'],
});

const Delay = Type.Union(
  [
    Type.Object(
      {
        after: Type.String({
          maxLength: 40,
          description:
            'An ISO-8601 duration (PT2H, P1D, P1W; at most P365D): after the enrollment for the first step, after the step before for the others. PT0S: at once.',
          examples: ['P1D'],
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        at: Type.String({
          maxLength: 80,
          pattern: '^contact\\.attributes\\.[A-Za-z_][A-Za-z0-9_]{0,39}$',
          description:
            'A contact attribute holding an ISO-8601 date or date-time (a date alone is midnight in the contact’s zone).',
          examples: ['contact.attributes.appointmentAt'],
        }),
        offset: Type.Optional(
          Type.String({
            maxLength: 40,
            description: 'Added to that time; negative ("-P1D") for before it.',
            examples: ['-P1D'],
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'When the step is due: a wait (`after`), or a time a contact attribute holds (`at`). Left out: at once, as `{"after": "PT0S"}` (on enrolment for the first step, right after the step before for the others), and stored so.',
  },
);

const StepSchema = Type.Object(
  {
    id: Type.Optional(StepId),
    delay: Type.Optional(Delay),
    message: Type.Object(messageFields, {
      additionalProperties: false,
      description:
        'A `POST /messages` body without `to`: sent to the contact through the send path (window rule, price, charge). Text fields are Liquid templates, each rendered within the size `POST /messages` gives its field (text 4,096 characters, caption 1,024, a template parameter 1,024; past it the step fails with TEMPLATE_RENDER_FAILED).',
    }),
  },
  { additionalProperties: false },
);

export const SendWindowSchema = Type.Object(
  {
    timezone: Type.String({
      maxLength: 64,
      description: '"contact" (the contact’s own zone) or an IANA zone such as Europe/Berlin.',
      examples: ['contact'],
    }),
    fallbackTimezone: Type.Optional(
      Type.String({ maxLength: 64, description: 'For a contact whose zone is not known.' }),
    ),
    days: Type.Array(Type.Enum([...WEEKDAYS]), { minItems: 1, maxItems: 7 }),
    from: Type.String({ maxLength: 5, description: 'Local "HH:MM", inclusive.', examples: ['09:00'] }),
    until: Type.String({ maxLength: 5, description: 'Local "HH:MM", exclusive.', examples: ['18:00'] }),
  },
  {
    additionalProperties: false,
    description: 'When steps may be sent; a step due outside waits for the next opening.',
  },
);

const EnrollmentSettings = Type.Object(
  {
    trigger: Type.Optional(
      Type.Object(
        {
          event: Type.Enum(ENROLL_EVENTS, { description: 'The event that enrols its contact.' }),
          conditions: Type.Optional(ConditionsSchema),
        },
        { additionalProperties: false },
      ),
    ),
    reenroll: Type.Optional(
      Type.Enum(['never', 'after_exit', 'always'], {
        description:
          'never (default): once per contact; after_exit: again once the previous enrollment ended; always: even while one is active.',
      }),
    ),
  },
  { additionalProperties: false },
);

const ExitSettings = Type.Object(
  {
    onReply: Type.Optional(
      Type.Boolean({ description: 'A message from the contact ends it (default true).' }),
    ),
    onTagAdded: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    onTagRemoved: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false, description: 'Opting out always ends an enrollment.' },
);

const sequenceFields = {
  name: Type.String({ minLength: 1, maxLength: 200, examples: ['Onboarding'] }),
  description: Type.Optional(nullable(Type.String({ maxLength: 1000 }))),
  steps: Type.Array(StepSchema, { minItems: 1, maxItems: MAX_STEPS }),
  enrollment: Type.Optional(EnrollmentSettings),
  exit: Type.Optional(ExitSettings),
  sendWindow: Type.Optional(nullable(SendWindowSchema)),
};

export const CreateSequenceBody = Type.Object(sequenceFields, { additionalProperties: false });

export const UpdateSequenceBody = Type.Object(
  {
    name: Type.Optional(sequenceFields.name),
    description: sequenceFields.description,
    steps: Type.Optional(sequenceFields.steps),
    enrollment: sequenceFields.enrollment,
    exit: sequenceFields.exit,
    sendWindow: sequenceFields.sendWindow,
  },
  { additionalProperties: false, minProperties: 1 },
);

const SequenceStatus = Type.Enum(['draft', 'active', 'paused', 'archived']);

export const SequenceSchema = Type.Object(
  {
    id: Type.String({ examples: ['seq_01jv0000000000000000000000'] }),
    name: Type.String(),
    description: nullable(Type.String()),
    status: SequenceStatus,
    version: Type.Integer({
      description: 'Edited in place while a draft; each edit of a published sequence makes the next.',
    }),
    steps: Type.Array(Type.Object({ id: StepId, delay: Delay, message: StepSchema.properties.message })),
    enrollment: Type.Object({
      trigger: nullable(EnrollmentSettings.properties.trigger),
      reenroll: Type.Enum(['never', 'after_exit', 'always']),
    }),
    exit: Type.Object({
      onReply: Type.Boolean(),
      onTagAdded: nullable(Type.String()),
      onTagRemoved: nullable(Type.String()),
    }),
    sendWindow: nullable(SendWindowSchema),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Sequence' },
);

export const SequenceIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const EnrollmentParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  enrollmentId: Type.String({ maxLength: 100 }),
});

export const SequenceListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(SequenceStatus) },
  { additionalProperties: false },
);

const EnrollmentStatus = Type.Enum(['active', 'completed', 'exited', 'failed', 'canceled']);

export const EnrollmentSchema = Type.Object(
  {
    id: Type.String({ examples: ['enr_01jv0000000000000000000000'] }),
    sequenceId: Type.String(),
    sequenceVersion: Type.Integer({ description: 'The version it runs on, whatever is edited after.' }),
    contactId: Type.String(),
    status: EnrollmentStatus,
    exitReason: nullable(
      Type.Enum(['replied', 'tag_added', 'tag_removed', 'opted_out', 'manual', 'archived']),
    ),
    reason: nullable(Type.String({ description: 'Why a failed enrollment failed.' })),
    currentStepId: nullable(Type.String({ description: 'The step waited for; null once ended.' })),
    nextRunAt: nullable(
      Type.String({
        format: 'date-time',
        description: 'When the current step is sent: its delay, moved into the send window.',
      }),
    ),
    steps: Type.Array(
      Type.Object({
        stepId: Type.String(),
        status: Type.Enum(['pending', 'sent', 'skipped', 'failed']),
        messageId: Type.Optional(Type.String()),
        at: Type.Optional(Timestamp),
        reason: Type.Optional(
          Type.String({
            description:
              'skipped: past_due (due more than an hour before it could be sent), contact_cap, no_date (the `at` attribute holds no date); failed: the send’s error.',
          }),
        ),
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    endedAt: NullableTimestamp,
  },
  { title: 'Enrollment' },
);

export const EnrollBody = Type.Object(
  {
    contactId: Type.Optional(
      Type.String({ maxLength: 100, description: 'One contact: 201 with its enrollment.' }),
    ),
    contactIds: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), {
        minItems: 1,
        maxItems: MAX_BULK_ENROLLMENTS,
        description: `Up to ${MAX_BULK_ENROLLMENTS} contacts: 202 with a bulk job (GET /bulk/enrollments/{jobId}).`,
      }),
    ),
  },
  { additionalProperties: false, description: 'Either contactId or contactIds.' },
);

export const EnrollmentListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(EnrollmentStatus),
    contactId: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

const EnrollmentJobResult = Type.Object({
  index: Type.Integer({ description: 'Position in `contactIds`, from 0.' }),
  outcome: Type.Union([Type.Literal('enrolled'), Type.Literal('failed')]),
  enrollmentId: nullable(Type.String()),
  error: nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const BulkEnrollmentJob = Type.Object(
  {
    ...jobProperties,
    sequenceId: Type.String(),
    results: Type.Array(EnrollmentJobResult, { description: 'One per processed contact, in order.' }),
  },
  { title: 'BulkEnrollmentJob' },
);

export const WakeBody = Type.Object(
  {
    enrollmentId: Type.Optional(Type.String({ maxLength: 100 })),
    runId: Type.Optional(Type.String({ maxLength: 100, description: 'A journey run.' })),
  },
  { additionalProperties: false, description: 'Either enrollmentId or runId.' },
);

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toSequence(row: SequenceRow) {
  const d = row.definition;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    version: row.version,
    steps: d.steps,
    enrollment: {
      trigger: (d.enrollment.trigger ?? null) as {
        event: (typeof ENROLL_EVENTS)[number];
        conditions?: Conditions;
      } | null,
      reenroll: d.enrollment.reenroll,
    },
    exit: {
      onReply: d.exit.onReply,
      onTagAdded: d.exit.onTagAdded ?? null,
      onTagRemoved: d.exit.onTagRemoved ?? null,
    },
    sendWindow: d.sendWindow ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toEnrollment(row: EnrollmentRow) {
  return {
    id: row.id,
    sequenceId: row.sequence_id,
    sequenceVersion: row.version,
    contactId: row.contact_id,
    status: row.status,
    exitReason: row.exit_reason,
    reason: row.reason,
    currentStepId: row.status === 'active' ? (row.steps[row.step_index]?.stepId ?? null) : null,
    nextRunAt: row.status === 'active' ? iso(row.next_run_at) : null,
    steps: row.steps,
    createdAt: iso(row.created_at)!,
    updatedAt: iso(row.updated_at)!,
    endedAt: iso(row.ended_at),
  };
}
