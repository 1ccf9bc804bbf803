import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { WHATSAPP_USER_ID_PATTERN } from '../../kernel/values/whatsapp-user-ids.ts';
import {
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_ATTRIBUTES,
  MAX_EMAIL_LENGTH,
  MAX_NAME_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
} from './fields.ts';
import type { ContactRow } from './repo.ts';

const Phone = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    "E.164 (`+14155550123`); a number without a country code is read as the account's country's. Stored normalised to E.164; one contact per phone per account.",
  examples: ['+14155550123'],
});
const Name = nullable(Type.String({ maxLength: MAX_NAME_LENGTH }));
const Email = nullable(
  Type.String({ maxLength: MAX_EMAIL_LENGTH, format: 'email', description: 'Stored lower-cased.' }),
);
const Tags = Type.Array(Type.String({ maxLength: MAX_TAG_LENGTH * 2 }), {
  maxItems: MAX_TAGS,
  description: `At most ${MAX_TAGS} tags of 1–${MAX_TAG_LENGTH} letters, digits, spaces or - _ : . ; stored trimmed and lower-cased, without repeats.`,
  examples: [['vip', 'lead:2026']],
});
const AttributeValue = Type.Union([
  Type.String({ maxLength: MAX_ATTRIBUTE_VALUE_LENGTH }),
  Type.Number(),
  Type.Boolean(),
]);
const attributesOf = <T extends Parameters<typeof Type.Record>[1]>(value: T, description: string) =>
  Type.Record(Type.String(), value, { maxProperties: MAX_ATTRIBUTES, description });
const Attributes = attributesOf(
  AttributeValue,
  `Your own fields: at most ${MAX_ATTRIBUTES}, named like identifiers (letters, digits, _; ≤ 40), each a string, number or boolean.`,
);
const OptedIn = Type.Boolean({ description: 'Whether the contact agreed to receive messages.' });
const MARKETING_OPT_OUT =
  "The customer stopped marketing messages (WhatsApp's user_preferences, or set by you): broadcast campaigns with a MARKETING template skip the contact.";
const MarketingOptOut = Type.Boolean({ description: MARKETING_OPT_OUT });

const contactInput = {
  phone: Phone,
  name: Type.Optional(Name),
  email: Type.Optional(Email),
  tags: Type.Optional(Tags),
  attributes: Type.Optional(Attributes),
  optedIn: Type.Optional(OptedIn),
  marketingOptOut: Type.Optional(MarketingOptOut),
};

export const CreateContactBody = Type.Object(contactInput, {
  additionalProperties: false,
  title: 'ContactInput',
});

export const ReplaceContactBody = Type.Object(contactInput, {
  additionalProperties: false,
  description:
    'The whole contact: fields left out are reset (no name, email, tags or attributes; not opted in; not opted out of marketing).',
});

export const UpdateContactBody = Type.Object(
  {
    phone: Type.Optional(Phone),
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    tags: Type.Optional(Tags),
    attributes: Type.Optional(
      attributesOf(
        Type.Union([AttributeValue, Type.Null()]),
        'Merged into the stored attributes: a name given a value sets it, a name given null removes it.',
      ),
    ),
    optedIn: Type.Optional(OptedIn),
    marketingOptOut: Type.Optional(MarketingOptOut),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TagsBody = Type.Object(
  { tags: Type.Array(Type.String({ maxLength: MAX_TAG_LENGTH * 2 }), { minItems: 1, maxItems: MAX_TAGS }) },
  { additionalProperties: false },
);

export const ContactIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const EraseQuery = Type.Object({
  erase: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        "Also erase the contact's personal data from its history, irreversibly (docs/operations.md, Erasure).",
    }),
  ),
});
export const ContactTagParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  tag: Type.String({ maxLength: MAX_TAG_LENGTH * 3 }),
});

export const ContactListQuery = Type.Object(
  {
    ...PageQuery,
    q: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 100,
        description:
          'Finds contacts whose name, phone, email or WhatsApp username contains this text (case-insensitive; at least 3 characters). Spaces, dashes and brackets in a phone-like query are ignored.',
      }),
    ),
    tag: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_TAG_LENGTH * 2 }), {
        maxItems: 10,
        description: 'Only contacts carrying every tag given (`tag=vip&tag=lead`, or `tag=vip,lead`).',
      }),
    ),
    phone: Type.Optional(
      Type.String({ maxLength: 40, description: 'Exactly this number (normalised first).' }),
    ),
    whatsappUserId: Type.Optional(
      Type.String({
        pattern: WHATSAPP_USER_ID_PATTERN,
        maxLength: 131,
        description: 'The contact Meta knows by this business-scoped user id (exactly, as Meta reported it).',
      }),
    ),
    optedIn: Type.Optional(Type.Boolean()),
    marketingOptOut: Type.Optional(
      Type.Boolean({
        description: 'Only contacts who stopped marketing messages (true), or who did not (false).',
      }),
    ),
    createdAfter: Type.Optional(Type.String({ format: 'date-time' })),
    updatedAfter: Type.Optional(Type.String({ format: 'date-time' })),
  },
  {
    additionalProperties: false,
    // attributes[plan]=gold: attribute equality (the value matches a string, number or boolean).
    patternProperties: { '^attributes\\[[A-Za-z_][A-Za-z0-9_]{0,39}\\]$': Type.String({ maxLength: 500 }) },
  },
);

export const ContactSchema = Type.Object(
  {
    id: Type.String({ examples: ['ctc_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    phone: Type.Union([Type.String(), Type.Null()], {
      description:
        'E.164. Null for a customer who wrote from WhatsApp without sharing their number (a username): they are known by `whatsappUserId` (docs/messaging.md § Who a customer is).',
    }),
    name: nullable(Type.String()),
    email: nullable(Type.String()),
    tags: Type.Array(Type.String()),
    attributes: Type.Record(Type.String(), AttributeValue),
    optedIn: Type.Boolean(),
    marketingOptOut: Type.Boolean({ description: MARKETING_OPT_OUT }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastInboundAt: Type.Union([Timestamp, Type.Null()], {
      description: 'When the contact last wrote in (opens the 24-hour customer service window).',
    }),
    waId: Type.Union([Type.String(), Type.Null()], {
      description:
        "WhatsApp's id for the number (wa_id, digits), as Meta reported it; it can differ from `phone` (Brazilian numbers with or without the ninth digit, Mexican ones with or without the 1 after +52), and the customer's messages from it reach this contact. Read-only; cleared when the phone changes.",
    }),
    whatsappUserId: Type.Union([Type.String(), Type.Null()], {
      description:
        "Meta's business-scoped user id for the customer (`US.13491208655302741918`): one contact per user id per account, as per phone. Read-only, as Meta reported it; a customer's messages find their contact by it first.",
      examples: ['US.13491208655302741918'],
    }),
    whatsappParentUserId: Type.Union([Type.String(), Type.Null()], {
      description:
        "Meta's parent user id (`US.ENT.…`), where the business portfolio shares one with others. Read-only.",
    }),
    whatsappUsername: Type.Union([Type.String(), Type.Null()], {
      description:
        'The WhatsApp username Meta last showed for the customer (without a leading @). Read-only; `q` finds it; never a key: the customer may change it.',
    }),
  },
  { title: 'Contact' },
);

export function toContact(row: ContactRow) {
  return {
    id: row.id,
    phone: row.phone,
    name: row.name,
    email: row.email,
    tags: row.tags,
    attributes: row.attributes,
    optedIn: row.opted_in,
    marketingOptOut: row.marketing_opt_out,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastInboundAt: row.last_inbound_at?.toISOString() ?? null,
    waId: row.wa_id,
    whatsappUserId: row.whatsapp_user_id,
    whatsappParentUserId: row.whatsapp_parent_user_id,
    whatsappUsername: row.whatsapp_username,
  };
}
