// The actions rules run (and, next, journey nodes): one object per action, told apart by `type`.
// The schema checks their shape (a OneOf with a discriminator: a bad action is reported against its
// own type's fields only); action-checks.ts checks what a schema cannot (templates, tags, keys, ids).
import { Type } from 'typebox';
import { messageFields } from '../messages/index.ts';
import { liquidData } from './liquid-data.ts';

const action = <P extends Record<string, Parameters<typeof Type.Object>[0][string]>>(
  type: string,
  properties: P,
  description: string,
) => Type.Object({ type: Type.Literal(type), ...properties }, { additionalProperties: false, description });

const Tag_ = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });
const Tag = Tag_('A contact tag (stored lower-cased).');

/**
 * The contact's own fields an update_contact action (and a journey's update_contact node) sets:
 * what PATCH /contacts takes for them, name and email as Liquid templates.
 */
export const CONTACT_CHANGE = {
  optedIn: Type.Optional(
    Type.Boolean({
      description:
        'Whether the contact agreed to receive messages; false after true is an opt-out (its active sequence enrollments exit, reason opted_out).',
    }),
  ),
  marketingOptOut: Type.Optional(
    Type.Boolean({
      description:
        'The contact stopped marketing messages: a MARKETING template to it is refused (422 CONTACT_OPTED_OUT) and campaigns skip it.',
    }),
  ),
  name: Type.Optional(
    Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
      description:
        'A Liquid template; the rendered name (at most 200 characters) replaces the stored one; null, or an empty result, clears it.',
    }),
  ),
  email: Type.Optional(
    Type.Union([Type.String({ maxLength: 254 }), Type.Null()], {
      description:
        'A Liquid template; the rendered address must be an email (stored lower-cased), else the action fails with INVALID_REQUEST; null clears it.',
    }),
  ),
};

const UPDATE_CONTACT =
  "Change the contact's optedIn, marketingOptOut, name or email (at least one) as PATCH /contacts does: the same checks and the same contact.updated event, caused by the run.";

export const ACTION_SCHEMAS = [
  action(
    'send_message',
    {
      message: Type.Object(messageFields, {
        additionalProperties: false,
        description:
          'A `POST /messages` body without `to` (the contact is the recipient): a template, or text, media or interactive inside the customer service window. Text fields are Liquid templates, each rendered within the size `POST /messages` gives its field (text 4,096 characters, caption 1,024, a template parameter 1,024; past it the action fails with TEMPLATE_RENDER_FAILED).',
      }),
    },
    'Send the contact a message through the send path: its window rule, price and charge.',
  ),
  action('add_tag', { tag: Tag }, 'Tag the contact.'),
  action('remove_tag', { tag: Tag }, 'Remove a tag from the contact.'),
  action(
    'set_attribute',
    {
      key: Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'An attribute name (letters, digits, _).',
      }),
      value: Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean(), Type.Null()], {
        description:
          'A string (a Liquid template, rendered to at most 500 characters), a number, a boolean, or null to remove it.',
      }),
    },
    "Set (or, with null, remove) one of the contact's attributes.",
  ),
  action(
    'assign',
    {
      assigneeId: Type.Optional(Type.String({ maxLength: 100, description: 'A team member.' })),
      strategy: Type.Optional(
        Type.Literal('round_robin', { description: 'The team member assigned longest ago (or never).' }),
      ),
    },
    "Assign the contact's open conversation: to `assigneeId`, or by `strategy` (one of the two).",
  ),
  action(
    'add_label',
    { label: Tag_('A conversation label (stored lower-cased).') },
    "Label the contact's open conversation.",
  ),
  action(
    'remove_label',
    { label: Tag_('A conversation label.') },
    "Remove a label from the contact's open conversation.",
  ),
  action(
    'assign_team',
    { teamId: Type.String({ maxLength: 100, description: 'A team of the account (`tem_…`).' }) },
    "Route the contact's open conversation to a team: its assignment picks an available member (or queues it).",
  ),
  action('update_contact', CONTACT_CHANGE, UPDATE_CONTACT),
  action('close_conversation', {}, "Close the contact's open conversation."),
  action(
    'enroll_in_sequence',
    { sequenceId: Type.String({ maxLength: 100 }) },
    'Enrol the contact in a sequence (as its reenroll setting allows).',
  ),
  action(
    'exit_sequences',
    { sequenceId: Type.Optional(Type.String({ maxLength: 100 })) },
    "End the contact's active enrollments: in one sequence, or in all.",
  ),
  action(
    'trigger_journey',
    {
      journeyId: Type.String({ maxLength: 100 }),
      data: Type.Optional(
        liquidData(
          'The run’s trigger data (string values are Liquid templates; rendered, their strings hold at most 16384 characters together).',
        ),
      ),
    },
    'Start a journey for the contact.',
  ),
  action(
    'call_webhook',
    {
      url: Type.String({ format: 'uri', maxLength: 2048, description: 'Checked like webhook URLs.' }),
      body: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description:
            'Sent as JSON (string values are Liquid templates, rendered to at most 65536 characters together); the run and event are added.',
        }),
      ),
    },
    'POST to a URL, signed like webhook deliveries.',
  ),
  action(
    'place_call',
    { scriptId: Type.String({ maxLength: 100 }) },
    'Call the contact with a published voice script of the account (docs/voice.md).',
  ),
];

export const ActionSchema = Type.Unsafe<{ type: string } & Record<string, unknown>>({
  oneOf: ACTION_SCHEMAS,
  // ajv's discriminator checks objects only: without this, a number passed as a valid one.
  type: 'object',
  discriminator: { propertyName: 'type' },
  description: 'An action: `type` says which, and which fields it takes.',
});

export const MAX_ACTIONS = 10;
