// How journeys, their runs and their statistics look on the wire. A node is one of a oneOf told
// apart by `type` (as actions are), each with its own `config`; nodes.ts checks what a schema
// cannot, graph.ts the graph as a whole.
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { CONTACT_CHANGE, ConditionsSchema, liquidData, OPS, TRIGGER_EVENTS } from '../automation/index.ts';
import { messageFields, recipientFields } from '../messages/index.ts';
import { SendWindowSchema } from '../sequences/index.ts';
import { type Definition, MAX_NODES } from './graph.ts';
import type { JourneyRow, RunRow, StepRow } from './repo.ts';

export const MAX_EDGES = 1000;

/** Events that may start a journey: those of rules, the timed triggers (with `after`) among them. */
export const ENTRY_EVENTS = TRIGGER_EVENTS;

const NodeId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$', examples: ['remind'] });
const Key = Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' });
const Duration = (description: string, examples: string[]) =>
  Type.String({ maxLength: 40, description, examples });
const Tag = Type.String({ minLength: 1, maxLength: 100 });

const node = (
  type: string,
  config: ReturnType<typeof Type.Object> | ReturnType<typeof Type.Union>,
  description: string,
  optional = false,
) =>
  Type.Object(
    { id: NodeId, type: Type.Literal(type), config: optional ? Type.Optional(config) : config },
    { additionalProperties: false, description },
  );

const Message = Type.Object(messageFields, {
  additionalProperties: false,
  description:
    'A `POST /messages` body without `to` (the run’s contact): a template, or text, media or interactive inside the customer service window. Text fields are Liquid templates, each rendered within the size `POST /messages` gives its field (text 4,096 characters, caption 1,024, a template parameter 1,024; past it the step fails with TEMPLATE_RENDER_FAILED).',
});

export const NODE_SCHEMAS = [
  node(
    'send_message',
    Type.Object({ message: Message }, { additionalProperties: false }),
    'Send the contact a message through the send path (window rule, price, charge). Edges: next, failed (a refused send, the contact cap).',
  ),
  node(
    'wait',
    Type.Union([
      Type.Object(
        { duration: Duration('An ISO-8601 duration (PT2H, P1D), at most P30D.', ['P1D']) },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          until: Type.String({
            maxLength: 140,
            description:
              'A time: an ISO-8601 date-time, or where the run holds one: contact.attributes.<key>, trigger.data.<path>, run.vars.<path>. A time already past ends the wait at once; one past by more than an hour leaves by `late` when the node has that edge.',
            examples: ['contact.attributes.appointmentAt'],
          }),
          offset: Type.Optional(Duration('Added to that time; negative ("-P1D") for before it.', ['-P1D'])),
        },
        { additionalProperties: false },
      ),
    ]),
    'Wait for a duration, or until a time. Edges: next; late (until only: the time had passed by more than an hour).',
  ),
  node(
    'wait_for_reply',
    Type.Object(
      {
        timeout: Duration('How long to wait (ISO-8601, at most P7D).', ['P1D']),
        match: Type.Optional(
          Type.Object(
            {
              buttons: Type.Optional(
                Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
                  minItems: 1,
                  maxItems: 20,
                  description:
                    'Only a tap on one of these buttons counts: a quick-reply label of the template sent before the wait, or a button or row id of its interactive message. Checked at publish against the messages sent before the wait (400 at match.buttons[i] for one none offers), and again when the message is sent (a template changed since: the send fails, BUTTONS_MISSING).',
                }),
              ),
              keywords: Type.Optional(
                Type.Object(
                  {
                    keywords: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1 }),
                    mode: Type.Enum(['exact', 'contains', 'fuzzy']),
                    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
                  },
                  {
                    additionalProperties: false,
                    description: 'Only a message matching these keywords counts.',
                  },
                ),
              ),
            },
            {
              additionalProperties: false,
              description: 'Which reply counts (either one may); none: any message from the contact.',
            },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    'Wait for the contact’s next message (after the wait began). Edges: reply, timeout. The reply is kept in run.vars.<node id> {messageId, text, buttonId}.',
  ),
  node(
    'condition',
    Type.Object({ conditions: ConditionsSchema }, { additionalProperties: false }),
    'Conditions as rules have them, plus run.vars.<path>. Edges: yes, no.',
  ),
  node(
    'switch',
    Type.Object(
      {
        field: Type.String({ maxLength: 140, description: 'A field, as conditions name them.' }),
        cases: Type.Array(
          Type.Object(
            {
              key: Key,
              op: Type.Optional(Type.Enum([...OPS], { description: 'eq when left out.' })),
              value: Type.Optional(Type.Unknown()),
            },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 20 },
        ),
      },
      { additionalProperties: false },
    ),
    'The first case that holds leaves by case:<key>; none: default.',
  ),
  node(
    'split',
    Type.Object(
      {
        weights: Type.Record(
          Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' }),
          Type.Integer({ minimum: 1, maximum: 1000 }),
          {
            minProperties: 2,
            maxProperties: 10,
            description: 'Branch keys and their weights; a run takes one, the same whenever it is asked.',
          },
        ),
      },
      { additionalProperties: false },
    ),
    'A random but fixed branch per run (an A/B test). Edges: split:<key>.',
  ),
  node(
    'update_contact',
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
        ...CONTACT_CHANGE,
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    'Change the contact: its optedIn, marketingOptOut, name and email (as PATCH /contacts does), then its tags and attributes, each change with its event caused by the run. Edge: next (a change the contacts module refuses, such as a rendered email that is not one, fails the run).',
  ),
  node(
    'webhook',
    Type.Object(
      {
        url: Type.String({ format: 'uri', maxLength: 2048, description: 'Checked like webhook URLs.' }),
        body: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), {
            description:
              'Sent as JSON (string values are Liquid templates, rendered to at most 65536 characters together); the run is added.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    'POST to a URL, signed like webhook deliveries with the journey’s secret; up to 3 attempts. The answer {status, body} is kept in run.vars.<node id>. Edges: next (2xx), failed.',
  ),
  node(
    'assign',
    Type.Object(
      {
        assigneeId: Type.Optional(Type.String({ maxLength: 100 })),
        strategy: Type.Optional(Type.Literal('round_robin')),
      },
      { additionalProperties: false },
    ),
    'Assign the contact’s open conversation: to assigneeId, or round robin. Edge: next.',
  ),
  node('end', Type.Object({}, { additionalProperties: false }), 'The run completes.', true),
  node(
    'place_call',
    Type.Object({ scriptId: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
    'Call the contact with a published voice script and wait for the call’s end. Edges: answered, no_answer, failed.',
  ),
];

export const NodeSchema = Type.Unsafe<{ id: string; type: string; config?: Record<string, unknown> }>({
  oneOf: NODE_SCHEMAS,
  // ajv's discriminator checks objects only: without this, a number passed as a valid one.
  type: 'object',
  discriminator: { propertyName: 'type' },
  description: 'A node: `type` says which, and which `config` it takes.',
});

const EdgeSchema = Type.Object(
  {
    from: NodeId,
    to: NodeId,
    when: Type.Optional(
      Type.String({
        maxLength: 50,
        description:
          'The outcome of `from` it follows (next when left out): next, failed, late, reply, timeout, yes, no, case:<key>, default, split:<key>.',
      }),
    ),
  },
  { additionalProperties: false },
);

const EntrySchema = Type.Object(
  {
    trigger: Type.Enum(['api', 'event'], {
      description:
        'api: runs start by POST /journeys/{id}/trigger (and rules’ trigger_journey); event: also when `event` happens to a contact.',
    }),
    event: Type.Optional(
      Type.Enum(ENTRY_EVENTS, {
        description:
          'With trigger event: the event that starts a run, or a timed trigger (`contact.inactive`, `conversation.unanswered`) with `after`: each such wait starts at most one run.',
      }),
    ),
    after: Type.Optional(
      Duration(
        'Timed entry events only (and required for them): how long the contact has been silent, or waited for a reply (ISO-8601).',
        ['P30D'],
      ),
    ),
    conditions: Type.Optional(ConditionsSchema),
    reentry: Type.Optional(
      Type.Enum(['never', 'after_exit', 'always'], {
        description:
          'never (default): once per contact; after_exit: again once its run ended; always: even while one runs.',
      }),
    ),
    start: NodeId,
  },
  { additionalProperties: false },
);

const SettingsSchema = Type.Object(
  {
    sendWindow: Type.Optional(nullable(SendWindowSchema)),
    maxRunDuration: Type.Optional(
      Duration('A run still going after this is expired (ISO-8601, at most P30D, the default).', ['P7D']),
    ),
  },
  { additionalProperties: false },
);

const journeyFields = {
  name: Type.String({ minLength: 1, maxLength: 200, examples: ['Appointment reminder'] }),
  description: Type.Optional(nullable(Type.String({ maxLength: 1000 }))),
  entry: EntrySchema,
  nodes: Type.Array(NodeSchema, { minItems: 1, maxItems: MAX_NODES }),
  edges: Type.Array(EdgeSchema, { maxItems: MAX_EDGES }),
  settings: Type.Optional(SettingsSchema),
};

export const CreateJourneyBody = Type.Object(journeyFields, { additionalProperties: false });

export const UpdateJourneyBody = Type.Object(
  {
    name: Type.Optional(journeyFields.name),
    description: journeyFields.description,
    entry: Type.Optional(EntrySchema),
    nodes: Type.Optional(journeyFields.nodes),
    edges: Type.Optional(journeyFields.edges),
    settings: journeyFields.settings,
  },
  { additionalProperties: false, minProperties: 1 },
);

const JourneyStatus = Type.Enum(['draft', 'published', 'paused', 'archived']);

export const JourneySchema = Type.Object(
  {
    id: Type.String({ examples: ['jny_01jv0000000000000000000000'] }),
    name: Type.String(),
    description: nullable(Type.String()),
    status: JourneyStatus,
    version: Type.Integer({
      description: 'Edited in place while a draft; each edit of a published journey makes the next.',
    }),
    entry: Type.Object({
      trigger: Type.Enum(['api', 'event']),
      event: nullable(Type.String()),
      after: Type.Optional(Type.String({ description: 'A timed entry event’s wait.' })),
      conditions: nullable(ConditionsSchema),
      reentry: Type.Enum(['never', 'after_exit', 'always']),
      start: Type.String(),
    }),
    nodes: Type.Array(NodeSchema),
    edges: Type.Array(Type.Object({ from: Type.String(), to: Type.String(), when: Type.String() })),
    settings: Type.Object({ sendWindow: nullable(SendWindowSchema), maxRunDuration: Type.String() }),
    configId: nullable(
      Type.String({
        description: 'The journey config that owns it: change it there (it is read-only here).',
      }),
    ),
    signingSecret: Type.Optional(
      Type.String({
        description:
          'Signs the calls of webhook nodes (Standard Webhooks). In the answer to POST /journeys only: keep it.',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Journey' },
);

export const JourneyIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const RunParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  runId: Type.String({ maxLength: 100 }),
});

export const JourneyListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(JourneyStatus) },
  { additionalProperties: false },
);

const RunStatus = Type.Enum(['running', 'waiting', 'completed', 'failed', 'canceled', 'expired']);
const ErrorShape = Type.Object({ code: Type.String(), message: Type.String() });

export const StepSchema = Type.Object(
  {
    nodeId: Type.String(),
    type: Type.String(),
    status: Type.Enum(['waiting', 'completed', 'failed', 'canceled']),
    edge: nullable(Type.String({ description: 'The outcome it left by; null while it waits.' })),
    startedAt: Timestamp,
    endedAt: NullableTimestamp,
    output: Type.Optional(Type.Unknown({ description: 'What it did: a message id, a branch, an answer.' })),
    error: Type.Optional(ErrorShape),
  },
  { title: 'JourneyRunStep' },
);

const runProperties = {
  id: Type.String({ examples: ['jrn_01jv0000000000000000000000'] }),
  journeyId: Type.String(),
  journeyVersion: Type.Integer({ description: 'The version it runs on, whatever is edited after.' }),
  contactId: Type.String(),
  status: RunStatus,
  currentNodeId: nullable(
    Type.String({ description: 'The node it is at (waits at); the last one once ended.' }),
  ),
  resumeAt: nullable(
    Type.String({
      format: 'date-time',
      description: 'When its wait ends (a timeout, a timer, a send window).',
    }),
  ),
  vars: Type.Record(Type.String(), Type.Unknown(), {
    description: 'What its nodes kept: replies and webhook answers, by node id.',
  }),
  triggerData: Type.Record(Type.String(), Type.Unknown()),
  error: nullable(ErrorShape),
  startedAt: Timestamp,
  endedAt: NullableTimestamp,
};

export const RunSchema = Type.Object(runProperties, { title: 'JourneyRun' });
export const RunWithStepsSchema = Type.Object(
  { ...runProperties, steps: Type.Array(StepSchema, { description: 'Every node it entered, in order.' }) },
  { title: 'JourneyRunWithSteps' },
);

export const RunListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(RunStatus),
    contactId: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const TriggerBody = Type.Object(
  {
    ...recipientFields,
    data: Type.Optional(
      liquidData('The run’s trigger data: trigger.data.<path> and event.data.<path> in its nodes.'),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Exactly one of contactId, `to` (the contact with that number, made if there is none) or `whatsappUserId` (the contact Meta knows by that user id, made likewise).',
  },
);

export const StatsQuery = Type.Object(
  { version: Type.Optional(Type.Integer({ minimum: 1, description: 'Only runs of this version.' })) },
  { additionalProperties: false },
);

export const StatsSchema = Type.Object(
  {
    journeyId: Type.String(),
    version: nullable(Type.Integer()),
    runs: Type.Object({
      total: Type.Integer(),
      running: Type.Integer(),
      waiting: Type.Integer(),
      completed: Type.Integer(),
      failed: Type.Integer(),
      canceled: Type.Integer(),
      expired: Type.Integer(),
    }),
    nodes: Type.Array(
      Type.Object({
        nodeId: Type.String(),
        type: Type.String(),
        entered: Type.Integer({ description: 'Times a run entered it.' }),
        completed: Type.Integer(),
        failed: Type.Integer(),
        waiting: Type.Integer({ description: 'Runs waiting there now.' }),
        edges: Type.Record(Type.String(), Type.Integer(), { description: 'Times it was left by each edge.' }),
      }),
    ),
  },
  { title: 'JourneyStats' },
);

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toJourney(row: JourneyRow, signingSecret?: string) {
  const d: Definition = row.definition;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    version: row.version,
    entry: {
      trigger: d.entry.trigger,
      event: d.entry.event ?? null,
      ...(d.entry.after !== undefined ? { after: d.entry.after } : {}),
      conditions: d.entry.conditions ?? null,
      reentry: d.entry.reentry,
      start: d.entry.start,
    },
    nodes: d.nodes,
    edges: d.edges,
    settings: { sendWindow: d.settings.sendWindow ?? null, maxRunDuration: d.settings.maxRunDuration },
    configId: row.config_id,
    ...(signingSecret ? { signingSecret } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toRun(row: RunRow) {
  const ended = row.status !== 'running' && row.status !== 'waiting';
  return {
    id: row.id,
    journeyId: row.journey_id,
    journeyVersion: row.version,
    contactId: row.contact_id,
    status: row.status,
    currentNodeId: row.current_node_id,
    resumeAt: ended ? null : iso(row.resume_at),
    vars: row.vars,
    triggerData: row.trigger_data,
    error: row.error,
    startedAt: iso(row.started_at)!,
    endedAt: iso(row.ended_at),
  };
}

export function toStep(row: StepRow) {
  return {
    nodeId: row.node_id,
    type: row.type,
    status: row.status,
    edge: row.edge,
    startedAt: iso(row.started_at)!,
    endedAt: iso(row.ended_at),
    ...(row.output === null ? {} : { output: row.output }),
    ...(row.error === null ? {} : { error: row.error }),
  };
}
