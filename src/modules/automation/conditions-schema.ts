// The schema of a rule's, a sequence's or a journey's conditions (conditions.ts evaluates them).
import { Type } from 'typebox';
import { MAX_CONDITIONS, OPS } from './conditions.ts';

const ConditionSchema = Type.Object(
  {
    field: Type.String({
      maxLength: 140,
      description:
        'contact.phone|name|email|tags|country|optedIn|marketingOptOut|attributes.<key>, message.text|type|buttonId, conversation.status|assigneeId|teamId|labels, event.data.<path>, time.localHour|weekday (in the contact’s zone; weekday 1 = Monday), time.businessHours (`open` or `closed`: the account’s business hours; rules and triggers).',
      examples: ['message.text'],
    }),
    op: Type.Enum([...OPS]),
    value: Type.Optional(
      Type.Unknown({ description: 'What the op compares with; none for exists, not_exists, changed.' }),
    ),
  },
  { additionalProperties: false },
);

export const ConditionsSchema = Type.Object(
  {
    all: Type.Optional(
      Type.Array(ConditionSchema, {
        maxItems: MAX_CONDITIONS,
        description: `Every one must hold (at most ${MAX_CONDITIONS} conditions in all and any together).`,
      }),
    ),
    any: Type.Optional(
      Type.Array(ConditionSchema, {
        maxItems: MAX_CONDITIONS,
        description: 'At least one must hold (when there are any).',
      }),
    ),
  },
  { additionalProperties: false, description: 'When the rule matches. None: always.' },
);
