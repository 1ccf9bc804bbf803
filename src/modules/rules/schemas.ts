import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { ActionSchema, ConditionsSchema, MAX_ACTIONS, TRIGGER_EVENTS } from '../automation/index.ts';
import type { RuleRow } from './repo.ts';

const TriggerSchema = Type.Object(
  {
    event: Type.Enum(TRIGGER_EVENTS, {
      description:
        'The event type the rule reacts to, or a timed trigger: `conversation.unanswered` (the customer has waited `after` for a reply) or `contact.inactive` (no inbound message for `after`).',
    }),
    after: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'Timed triggers only (and required for them): an ISO-8601 duration such as PT4H or P30D.',
        examples: ['PT4H'],
      }),
    ),
  },
  { additionalProperties: false },
);

const Status = Type.Enum(['active', 'paused'], { description: 'Only an active rule runs.' });
const Position = Type.Integer({
  minimum: 1,
  description:
    "Where the rule is evaluated among the account's rules (1 first); the others move to make room.",
});
const Actions = Type.Array(ActionSchema, {
  minItems: 1,
  maxItems: MAX_ACTIONS,
  description: `Run in order when the rule matches (1–${MAX_ACTIONS}).`,
});

const ruleFields = {
  name: Type.String({ minLength: 1, maxLength: 200, examples: ['STOP opts out'] }),
  description: Type.Optional(nullable(Type.String({ maxLength: 1000 }))),
  status: Type.Optional(Status),
  position: Type.Optional(Position),
  trigger: TriggerSchema,
  conditions: Type.Optional(ConditionsSchema),
  actions: Actions,
  stopProcessing: Type.Optional(
    Type.Boolean({ description: 'When it matches, later rules are not evaluated for the event.' }),
  ),
};

export const CreateRuleBody = Type.Object(ruleFields, { additionalProperties: false });

export const UpdateRuleBody = Type.Object(
  {
    name: Type.Optional(ruleFields.name),
    description: ruleFields.description,
    status: ruleFields.status,
    position: ruleFields.position,
    trigger: Type.Optional(TriggerSchema),
    conditions: ruleFields.conditions,
    actions: Type.Optional(Actions),
    stopProcessing: ruleFields.stopProcessing,
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RuleSchema = Type.Object(
  {
    id: Type.String({ examples: ['rul_01jv0000000000000000000000'] }),
    name: Type.String(),
    description: nullable(Type.String()),
    status: Status,
    position: Type.Integer(),
    trigger: TriggerSchema,
    conditions: ConditionsSchema,
    actions: Type.Array(ActionSchema),
    stopProcessing: Type.Boolean(),
    stats: Type.Object({
      runs: Type.Integer({ description: 'Evaluations.' }),
      matched: Type.Integer({ description: 'Evaluations whose conditions held.' }),
      failed: Type.Integer({ description: 'Runs with an action that failed.' }),
      lastRunAt: nullable(Timestamp),
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Rule' },
);

export const SavedRuleSchema = Type.Object(
  {
    ...RuleSchema.properties,
    signingSecret: Type.Optional(
      Type.String({
        description:
          'Shown once, when the rule is created: the Standard Webhooks secret (whsec_…) that signs its call_webhook requests. Keep it; it is never shown again.',
        examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      }),
    ),
  },
  { title: 'SavedRule' },
);

export const RuleIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const RuleListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    event: Type.Optional(Type.Enum(TRIGGER_EVENTS, { description: 'Only rules with this trigger.' })),
  },
  { additionalProperties: false },
);

export function toRule(row: RuleRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    position: row.position,
    trigger: { event: row.trigger_event, ...(row.trigger_after ? { after: row.trigger_after } : {}) },
    conditions: row.conditions,
    actions: row.actions,
    stopProcessing: row.stop_processing,
    stats: {
      runs: row.runs,
      matched: row.matched,
      failed: row.failed,
      lastRunAt: row.last_run_at ? row.last_run_at.toISOString() : null,
    },
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const TraceSchema = Type.Object({
  field: Type.String(),
  op: Type.String(),
  expected: Type.Unknown(),
  actual: Type.Unknown({ description: 'The value found (null when the field had none).' }),
  result: Type.Boolean(),
});

const ActionResultSchema = Type.Object({
  type: Type.String(),
  status: Type.Enum(['succeeded', 'failed', 'skipped', 'suppressed'], {
    description: 'skipped: an earlier action did not succeed (or a dry run); suppressed: the contact cap.',
  }),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  ref: Type.Optional(
    Type.String({
      description:
        'What it made or changed: a message, contact, conversation or enrollment id, or a webhook call (whc_…).',
    }),
  ),
  delivery: Type.Optional(
    Type.Object(
      {
        status: Type.Enum(['pending', 'succeeded', 'failed'], {
          description:
            'pending: being attempted (retried on the webhooks’ schedule); failed: the schedule is used up.',
        }),
        attempts: Type.Integer(),
        lastStatusCode: nullable(Type.Integer()),
        lastError: nullable(Type.String()),
      },
      { description: 'call_webhook only: where its call stands now.' },
    ),
  ),
});

export const RunSchema = Type.Object(
  {
    id: Type.String({ examples: ['run_01jv0000000000000000000000'] }),
    ruleId: Type.String(),
    eventId: Type.String({
      description: 'The event evaluated (evt_test for a dry run on an event given inline).',
    }),
    contactId: nullable(Type.String()),
    status: Type.Enum(['not_matched', 'succeeded', 'failed', 'suppressed']),
    reason: nullable(
      Type.String({
        description:
          'suppressed: own_event (its own run caused the event), loop (deeper than 3), contact_cap; failed: the failed action’s message.',
      }),
    ),
    depth: Type.Integer({ description: 'How many automation runs led to this one (1: a user’s event).' }),
    conditions: Type.Array(TraceSchema),
    actions: Type.Array(ActionResultSchema),
    createdAt: Timestamp,
  },
  { title: 'RuleRun' },
);

export const RunListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Type.Enum(['not_matched', 'succeeded', 'failed', 'suppressed'])) },
  { additionalProperties: false },
);

export const TestRuleBody = Type.Object(
  {
    eventId: Type.Optional(Type.String({ maxLength: 100, description: 'A stored event of the account.' })),
    event: Type.Optional(
      Type.Object(
        {
          type: Type.Enum(TRIGGER_EVENTS),
          data: Type.Record(Type.String(), Type.Unknown(), {
            description: 'As the event would carry it (a message with its contactId, a contact with its id).',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'Either eventId or event.' },
);
