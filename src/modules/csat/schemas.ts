// How the satisfaction survey's setting looks on the wire (GET|PUT /account/csat).
import { Type } from 'typebox';
import { NullableTimestamp, nullable } from '../../kernel/http/schemas.ts';

const fields = {
  scale: Type.Enum(['faces', 'five'], {
    description:
      '`faces`: three reply buttons (😞 😐 😊, stored as 1, 3 and 5); `five`: a list of 1 to 5 stars (WhatsApp allows three reply buttons).',
  }),
  question: Type.String({ minLength: 1, maxLength: 1024, description: 'The survey’s text.' }),
  commentPrompt: nullable(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'Sent after the score: the customer’s next text within 30 minutes is the comment. Null: none asked.',
    }),
  ),
  thanks: nullable(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'Sent once the answer (and the comment) is in.',
    }),
  ),
};

export const CsatSchema = Type.Object(
  { enabled: Type.Boolean(), ...fields, updatedAt: NullableTimestamp },
  { title: 'CsatSettings' },
);

export const PutCsatBody = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ description: 'false turns the survey off (the rest may be left out).' }),
    ),
    scale: Type.Optional(fields.scale),
    question: Type.Optional(fields.question),
    commentPrompt: Type.Optional(fields.commentPrompt),
    thanks: Type.Optional(fields.thanks),
  },
  { additionalProperties: false, description: 'The whole setting: what is left out takes its default.' },
);
