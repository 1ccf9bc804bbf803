// How voice scripts look on the wire. Actions are a oneOf told apart by `type` (as automation's are).
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { Timestamp } from '../../kernel/http/schemas.ts';
import type { ScriptRow } from './repo.ts';

const NodeId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$', examples: ['menu'] });
const Say = Type.String({
  minLength: 1,
  maxLength: 4000,
  description:
    'Said in the script’s language and voice (Liquid, rendered per call within what Twilio’s <Say> speaks: 3000 bytes of UTF-8 with a Polly voice or none, 5000 with a Google voice, 4096 with man, woman or alice; a plain text longer than that is refused when saved).',
});

const action = (
  type: string,
  properties: Record<string, ReturnType<typeof Type.String>>,
  description: string,
) => Type.Object({ type: Type.Literal(type), ...properties }, { additionalProperties: false, description });

const ActionSchema = Type.Unsafe<{ type: string } & Record<string, unknown>>({
  oneOf: [
    action('hangup', {}, 'End the call.'),
    action(
      'tag',
      { tag: Type.String({ minLength: 1, maxLength: 100 }), next: Type.Optional(NodeId) as never },
      'Tag the called contact; then the `next` node, or the end.',
    ),
    action(
      'webhook',
      {
        url: Type.String({ format: 'uri', maxLength: 2048, description: 'Checked like webhook URLs.' }),
        next: Type.Optional(NodeId) as never,
      },
      'POST the call and the digits to a URL, signed like webhook deliveries; then the `next` node, or the end.',
    ),
    action(
      'transfer',
      { to: Type.String({ minLength: 1, maxLength: 40, description: 'E.164.' }) },
      'Connect the call to another number.',
    ),
  ],
  // ajv's discriminator checks objects only: without this, a number passed as a valid one.
  type: 'object',
  discriminator: { propertyName: 'type' },
  description: 'What happens: `type` says which.',
});

const RouteSchema = Type.Union(
  [
    Type.Object({ next: NodeId }, { additionalProperties: false }),
    Type.Object({ action: ActionSchema }, { additionalProperties: false }),
  ],
  { description: 'Another node (`next`), or an action.' },
);

const GatherSchema = Type.Object(
  {
    numDigits: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, description: 'Digits a choice takes (1).' }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 30, description: 'Wait for input (5).' }),
    ),
    retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 5,
        description: 'Times the prompt is said again before noInput / invalid (1).',
      }),
    ),
    options: Type.Record(Type.String({ maxLength: 10 }), RouteSchema, {
      maxProperties: 12,
      description: 'By the keys pressed ("1", "2", "*"): where each leads.',
    }),
    noInput: Type.Optional(RouteSchema),
    invalid: Type.Optional(RouteSchema),
  },
  { additionalProperties: false },
);

const NodeSchema = Type.Object(
  {
    say: Type.Optional(Say),
    play: Type.Optional(
      Type.String({ format: 'uri', maxLength: 2048, description: 'An audio file played.' }),
    ),
    gather: Type.Optional(GatherSchema),
    action: Type.Optional(ActionSchema),
  },
  { additionalProperties: false },
);

const Tts = Type.Object(
  {
    text: Say,
    loop: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'Times it is said (1).' })),
  },
  { additionalProperties: false },
);

const Ivr = Type.Object(
  {
    start: NodeId,
    nodes: Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' }), NodeSchema, {
      minProperties: 1,
      maxProperties: 50,
    }),
  },
  { additionalProperties: false },
);

const OnMachine = Type.Enum(['hangup', 'leave_message', 'continue'], {
  description:
    'When an answering machine answers: hang up, leave the message (after the beep), or play as to a person.',
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, examples: ['Appointment confirmation'] }),
  language: Type.Optional(
    Type.String({ pattern: '^[a-z]{2,3}(-[A-Z]{2})?$', description: 'BCP 47 (en-US).' }),
  ),
  voice: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 60 }), Type.Null()], {
      description: 'A Twilio voice (Polly.Joanna); the language’s default when null.',
    }),
  ),
  tts: Type.Optional(Tts),
  ivr: Type.Optional(Ivr),
  onMachine: Type.Optional(OnMachine),
};

export const CreateScriptBody = Type.Object(
  { ...fields, type: Type.Enum(['tts', 'ivr']) },
  { additionalProperties: false },
);

export const UpdateScriptBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    language: fields.language,
    voice: fields.voice,
    tts: fields.tts,
    ivr: fields.ivr,
    onMachine: fields.onMachine,
  },
  { additionalProperties: false, minProperties: 1 },
);

const Status = Type.Enum(['draft', 'published', 'archived']);

export const ScriptSchema = Type.Object(
  {
    id: Type.String({ examples: ['vsc_01jv0000000000000000000000'] }),
    name: Type.String(),
    type: Type.Enum(['tts', 'ivr']),
    status: Status,
    version: Type.Integer({
      description: 'Edited in place while a draft; each edit once published makes the next.',
    }),
    language: Type.String(),
    voice: Type.Union([Type.String(), Type.Null()]),
    tts: Type.Union([Type.Object({ text: Type.String(), loop: Type.Integer() }), Type.Null()]),
    ivr: Type.Union([Ivr, Type.Null()]),
    onMachine: OnMachine,
    twiml: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
      description:
        'The published version’s TwiML: `tts`, or one document per ivr node (texts as written; rendered per call). Null while a draft.',
    }),
    signingSecret: Type.Optional(
      Type.String({
        description:
          'Signs the webhook actions’ requests (Standard Webhooks headers, as webhook deliveries). In the answer to POST /voice/scripts only: keep it.',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'VoiceScript' },
);

export const ScriptIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const ScriptListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Status) },
  { additionalProperties: false },
);

export function toScript(row: ScriptRow & { twiml: Record<string, string> | null }) {
  const d = row.definition;
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    status: row.status,
    version: row.version,
    language: d.language,
    voice: d.voice,
    tts: d.tts,
    ivr: d.ivr,
    onMachine: d.onMachine,
    twiml: row.twiml,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
