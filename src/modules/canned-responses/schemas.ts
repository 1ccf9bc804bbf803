// How canned responses look on the wire, and the bodies of their routes.
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { messageFields } from '../messages/index.ts';
import type { CannedResponseRow } from './repo.ts';

export const MAX_TEXT = 4096;
export const MAX_PARAMETERS = 20;

const Shortcut = Type.String({
  minLength: 1,
  maxLength: 32,
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$',
  description:
    'What the agent types after `/` to find it (stored lower-cased; letters, digits, - and _), one per account.',
  examples: ['refund'],
});

const CannedMedia = Type.Object(
  {
    kind: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('document')], {
      description: 'The text is its caption (at most 1,024 characters rendered).',
    }),
    id: Type.Optional(
      Type.String({ maxLength: 100, description: 'An upload of the account (POST /media), or give `url`.' }),
    ),
    url: Type.Optional(
      Type.String({ format: 'uri', maxLength: 2000, description: 'A public http(s) link.' }),
    ),
    filename: Type.Optional(
      Type.String({ minLength: 1, maxLength: 240, description: 'document: its name.' }),
    ),
  },
  { additionalProperties: false, description: 'A file sent with the text as its caption.' },
);

const CannedTemplate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 512, description: 'An approved template of the account.' }),
    language: Type.String({ minLength: 2, maxLength: 15, examples: ['en_US'] }),
    parameters: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        maxItems: MAX_PARAMETERS,
        description: 'Its body parameters in order, each a Liquid template like the text.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Sent instead of the text when the customer service window is closed (free-form messages may not be sent then).',
  },
);

const fields = {
  title: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'What the menu shows beside the shortcut.',
  }),
  text: Type.String({
    minLength: 1,
    maxLength: MAX_TEXT,
    description:
      'A Liquid template over the customer and the conversation: `{{ contact.name | default: "there" }}`, `{{ contact.attributes.<key> }}`, `{{ conversation.labels }}`, `{{ agent.name }}` (the member answering).',
  }),
  media: nullable(CannedMedia),
  template: nullable(CannedTemplate),
};

export const CannedResponseSchema = Type.Object(
  {
    id: Type.String({ examples: ['cnr_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    shortcut: Type.String(),
    ...fields,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'CannedResponse' },
);

export const CreateCannedBody = Type.Object(
  {
    shortcut: Shortcut,
    title: fields.title,
    text: fields.text,
    media: Type.Optional(fields.media),
    template: Type.Optional(fields.template),
  },
  { additionalProperties: false },
);

export const UpdateCannedBody = Type.Partial(CreateCannedBody, {
  additionalProperties: false,
  description: 'The fields to change; null clears media or template.',
});

export const CannedIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const CannedListQuery = Type.Object(
  {
    ...PageQuery,
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'Those whose shortcut starts with it, or whose title contains it (case aside): what the agent typed after `/`.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RenderBody = Type.Object(
  {
    conversationId: Type.String({ minLength: 1, maxLength: 100, description: 'The conversation answered.' }),
  },
  { additionalProperties: false },
);

export const RenderedSchema = Type.Object(
  {
    cannedResponseId: Type.String(),
    conversationId: Type.String(),
    serviceWindowOpen: Type.Boolean({ description: "Whether the customer's window is open now." }),
    text: nullable(Type.String({ description: 'The text rendered for this customer (null if it failed).' })),
    message: nullable(
      Type.Object(messageFields, {
        additionalProperties: false,
        description:
          'The body to send as it is (POST /conversations/{id}/messages): the text (with its media) inside the window, the template outside it when there is one. Null when a field failed to render.',
      }),
    ),
    problems: Type.Array(
      Type.Object({ field: Type.String(), issue: Type.String() }, { additionalProperties: false }),
      {
        description:
          'What did not render (a variable the customer lacks: give it a `default`), by field. Empty when it rendered.',
      },
    ),
  },
  { title: 'RenderedCannedResponse' },
);

export function toCanned(row: CannedResponseRow) {
  return {
    id: row.id,
    shortcut: row.shortcut,
    title: row.title,
    text: row.text,
    media: row.media,
    template: row.template,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
