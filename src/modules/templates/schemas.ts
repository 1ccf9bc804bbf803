// The template resource and its inputs, in the WhatsApp Cloud API's own JSON (uppercase component
// types, snake_case `example` fields), so a template written for Meta works here unchanged. The
// schemas carry the shapes and limits (and so the OpenAPI document); components.ts the rules
// between fields.
import type { FastifySchemaValidationError } from 'fastify';
import { Type } from 'typebox';
import { validationIssues } from '../../kernel/http/error-handler.ts';
import type { ApiError } from '../../kernel/http/errors.ts';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { invalidFields } from '../contacts/index.ts';
import { CATEGORIES, LIMITS } from './components.ts';
import { TEMPLATE_STATUSES, type TemplateRow } from './repo.ts';

const text = (max: number, description: string) => Type.String({ minLength: 1, maxLength: max, description });
const oneValue = (max: number, description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: max }), { minItems: 1, maxItems: 1, description });

const NamedExample = Type.Object(
  {
    param_name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The placeholder’s name, as in {{first_name}}.',
    }),
    example: Type.String({ minLength: 1, maxLength: LIMITS.exampleValue }),
  },
  { additionalProperties: false, title: 'TemplateNamedExample' },
);

export const ParameterFormatSchema = Type.Enum(['POSITIONAL', 'NAMED'], {
  description:
    'How placeholders are written: POSITIONAL {{1}}, {{2}}, … (the default; a send gives `parameters` as a list) or NAMED {{first_name}} (lowercase letters, digits and underscores; a send gives `parameters` as an object by name).',
});

const Header = Type.Object(
  {
    type: Type.Literal('HEADER'),
    format: Type.Enum(['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT'], {
      description: 'TEXT, or the kind of media file shown above the body.',
    }),
    text: Type.Optional(
      text(
        LIMITS.headerText,
        `TEXT headers only: up to ${LIMITS.headerText} characters on one line, with at most one placeholder, {{1}}.`,
      ),
    ),
    example: Type.Optional(
      Type.Object(
        {
          header_text: Type.Optional(
            oneValue(LIMITS.headerText, 'TEXT headers with {{1}}: an example value for it (required then).'),
          ),
          header_text_named_params: Type.Optional(
            Type.Array(NamedExample, {
              minItems: 1,
              maxItems: 1,
              description: 'NAMED templates, TEXT headers with a placeholder: its example (required then).',
            }),
          ),
          header_handle: Type.Optional(
            oneValue(
              LIMITS.url,
              'IMAGE, VIDEO and DOCUMENT headers: the https URL of an example file (required). The file of each send is given when sending.',
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'TemplateHeader', description: 'Optional; at most one, first.' },
);

const Body = Type.Object(
  {
    type: Type.Literal('BODY'),
    text: text(
      LIMITS.body,
      `Up to ${LIMITS.body} characters. Placeholders {{1}}, {{2}}, … in order, each once, without gaps; never at the very start or end, never two side by side.`,
    ),
    example: Type.Optional(
      Type.Object(
        {
          body_text: Type.Optional(
            Type.Array(
              Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.exampleValue }), { minItems: 1 }),
              {
                minItems: 1,
                maxItems: 1,
                description:
                  'One list holding an example value per placeholder, in order (required with placeholders).',
                examples: [[['Ada', 'ORD-1042']]],
              },
            ),
          ),
          body_text_named_params: Type.Optional(
            Type.Array(NamedExample, {
              minItems: 1,
              maxItems: 100,
              description:
                'NAMED templates: an example value per placeholder, by its name (required with placeholders).',
              examples: [[{ param_name: 'first_name', example: 'Ada' }]],
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'TemplateBody', description: 'Required; exactly one.' },
);

const Footer = Type.Object(
  {
    type: Type.Literal('FOOTER'),
    text: text(LIMITS.footer, `Up to ${LIMITS.footer} characters on one line, without placeholders.`),
  },
  { additionalProperties: false, title: 'TemplateFooter', description: 'Optional; at most one.' },
);

const ButtonText = text(LIMITS.buttonText, `The label, up to ${LIMITS.buttonText} characters.`);

const QuickReplyButton = Type.Object(
  { type: Type.Literal('QUICK_REPLY'), text: ButtonText },
  { additionalProperties: false, title: 'TemplateQuickReplyButton' },
);

const UrlButton = Type.Object(
  {
    type: Type.Literal('URL'),
    text: ButtonText,
    url: text(
      LIMITS.url,
      'An http(s) URL; it may end with the placeholder {{1}}, completed at each send (e.g. https://example.com/orders/{{1}}).',
    ),
    example: Type.Optional(
      oneValue(LIMITS.url, 'With {{1}} in the url: the full URL with an example value (required then).'),
    ),
  },
  { additionalProperties: false, title: 'TemplateUrlButton', description: 'At most 2.' },
);

const PhoneNumberButton = Type.Object(
  {
    type: Type.Literal('PHONE_NUMBER'),
    text: ButtonText,
    phone_number: text(LIMITS.phoneNumber, 'The number to call, with its country code (e.g. +14155550123).'),
  },
  { additionalProperties: false, title: 'TemplatePhoneNumberButton', description: 'At most 1.' },
);

const Buttons = Type.Object(
  {
    type: Type.Literal('BUTTONS'),
    buttons: Type.Array(Type.Union([QuickReplyButton, UrlButton, PhoneNumberButton]), {
      minItems: 1,
      maxItems: LIMITS.buttons,
      description: `1–${LIMITS.buttons} buttons; quick replies grouped together, before or after the others.`,
    }),
  },
  { additionalProperties: false, title: 'TemplateButtons', description: 'Optional; at most one, last.' },
);

export const Components = Type.Array(Type.Union([Header, Body, Footer, Buttons]), {
  minItems: 1,
  // Four at most in fact; a repeated type is reported by the rules, with its position.
  maxItems: 10,
  description:
    'As in the WhatsApp Cloud API, in this order: HEADER (optional), BODY (required), FOOTER (optional), BUTTONS (optional). A send fills the placeholders with its positional `parameters`: the header’s {{1}} first, then the body’s, then each URL button’s.',
});

const Category = Type.Enum([...CATEGORIES], {
  description:
    'MARKETING (promotions, offers, news), UTILITY (about a transaction or account the customer started: orders, bookings, billing; never promotional), AUTHENTICATION (one-time codes only: the body holds exactly one placeholder, the code; no media header, no phone button, no URL with a placeholder).',
});

const Name = Type.String({
  minLength: 1,
  maxLength: LIMITS.name,
  description:
    'Lowercase letters, digits and underscores (`^[a-z0-9_]+$`). Unique per language in the account.',
  examples: ['order_update'],
});

const Language = Type.String({
  minLength: 2,
  maxLength: 10,
  description:
    "One of Meta's template language codes, case-sensitive with an underscore: `en`, `en_US`, `pt_BR`, …",
  examples: ['en_US'],
});

const Status = Type.Enum([...TEMPLATE_STATUSES], {
  description:
    'DRAFT (editable) → PENDING (in review) → APPROVED (sendable) | REJECTED (editable, see rejectionReason); the provider may later set PAUSED or DISABLED.',
});

const Provider = Type.Enum(['sandbox', 'whatsapp_cloud']);

export const CreateTemplateBody = Type.Object(
  {
    name: Name,
    language: Language,
    category: Category,
    parameterFormat: Type.Optional(ParameterFormatSchema),
    components: Components,
  },
  {
    additionalProperties: false,
    title: 'TemplateInput',
    examples: [
      {
        name: 'order_update',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['ORD-1042'] } },
          {
            type: 'BODY',
            text: 'Hi {{1}}, your order has shipped and arrives on {{2}}.',
            example: { body_text: [['Ada', 'Friday']] },
          },
          { type: 'FOOTER', text: 'Reply STOP to opt out' },
          {
            type: 'BUTTONS',
            buttons: [
              {
                type: 'URL',
                text: 'Track it',
                url: 'https://example.com/track/{{1}}',
                example: ['https://example.com/track/ORD-1042'],
              },
            ],
          },
        ],
      },
    ],
  },
);

export const UpdateTemplateBody = Type.Object(
  { category: Type.Optional(Category), components: Type.Optional(Components) },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Only while DRAFT or REJECTED; the name and language never change (create another template).',
  },
);

export const TemplateIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const TemplateListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    name: Type.Optional(Type.String({ maxLength: LIMITS.name, description: 'Exactly this name.' })),
    language: Type.Optional(Type.String({ maxLength: 10, description: 'Exactly this language code.' })),
    category: Type.Optional(Category),
  },
  { additionalProperties: false },
);

export const TemplateSchema = Type.Object(
  {
    id: Type.String({ examples: ['tpl_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    name: Type.String(),
    language: Type.String(),
    category: Category,
    components: Components,
    parameterCount: Type.Integer({
      description:
        'How many `parameters` a send gives: header, body and URL-button placeholders, in that order.',
    }),
    status: Status,
    rejectionReason: nullable(
      Type.String({
        description:
          "Why the provider rejected it: Meta's reason code (INVALID_FORMAT, TAG_CONTENT_MISMATCH, …), often followed by an explanation after a colon.",
        examples: ['TAG_CONTENT_MISMATCH: promotional wording ("discount") in a UTILITY template'],
      }),
    ),
    provider: nullable(Provider),
    providerTemplateId: nullable(Type.String({ description: "The provider's id of the last submission." })),
    submittedAt: NullableTimestamp,
    parameterFormat: ParameterFormatSchema,
    qualityScore: nullable(
      Type.Object(
        {
          score: Type.Enum(['GREEN', 'YELLOW', 'RED', 'UNKNOWN'], {
            description: 'GREEN (high), YELLOW (medium), RED (low), UNKNOWN (not rated yet).',
          }),
          updatedAt: NullableTimestamp,
        },
        {
          description:
            "Meta's quality rating of the template, from message_template_quality_update or a sync; null until Meta gives one (always null in the sandbox).",
        },
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Template' },
);

export function toTemplate(row: TemplateRow) {
  return {
    id: row.id,
    name: row.name,
    language: row.language,
    category: row.category,
    components: row.components,
    parameterCount: row.parameter_count,
    status: row.status,
    rejectionReason: row.rejection_reason,
    provider: row.provider,
    providerTemplateId: row.provider_template_id,
    submittedAt: row.submitted_at?.toISOString() ?? null,
    parameterFormat: row.parameter_format,
    qualityScore: row.quality_score
      ? { score: row.quality_score, updatedAt: row.quality_updated_at?.toISOString() ?? null }
      : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** A branch of a `type`-discriminated union that the data's `type` does not name. */
interface Mismatch {
  /** The branch's schema path, ending in `/anyOf/<n>/`. */
  branch: string;
  allowed: unknown;
}

const TYPE_CONST = /^(.*\/anyOf\/\d+\/)properties\/type\/const$/;
const TYPE_REQUIRED = /^(.*\/anyOf\/\d+\/)required$/;

/**
 * What is known of each schema path and each instance path met, computed once: a body of many
 * wrong values has errors by the thousand, on the few schema paths of its schema.
 */
class Paths {
  readonly #branches = new Map<string, string | null>();
  readonly #sites = new Map<string, string[]>();
  readonly #ancestors = new Map<string, string[]>();

  /** The branch (`…/anyOf/<n>/`) of a branch's `type` const or required check, or null. */
  typeBranch(schemaPath: string, check: RegExp): string | null {
    const key = `${check.source}|${schemaPath}`;
    let branch = this.#branches.get(key);
    if (branch === undefined) {
      branch = check.exec(schemaPath)?.[1] ?? null;
      this.#branches.set(key, branch);
    }
    return branch;
  }

  /** Each union (`…/anyOf/`) the schema path passes through. */
  unionSites(schemaPath: string): string[] {
    let sites = this.#sites.get(schemaPath);
    if (!sites) {
      sites = [];
      for (let at = schemaPath.indexOf('/anyOf/'); at >= 0; at = schemaPath.indexOf('/anyOf/', at + 1)) {
        sites.push(schemaPath.slice(0, at + '/anyOf/'.length));
      }
      this.#sites.set(schemaPath, sites);
    }
    return sites;
  }

  /** The instance path and each of its ancestors: `/a/0/b`, `/a/0`, `/a`, ``. */
  selfAndAncestors(path: string): string[] {
    let out = this.#ancestors.get(path);
    if (!out) {
      out = [path];
      for (let cut = path.lastIndexOf('/'); cut >= 0; cut = cut === 0 ? -1 : path.lastIndexOf('/', cut - 1)) {
        out.push(path.slice(0, cut));
      }
      this.#ancestors.set(path, out);
    }
    return out;
  }
}

function mismatchOf(paths: Paths, e: FastifySchemaValidationError): (Mismatch & { at: string }) | null {
  if (e.keyword === 'const' && e.instancePath.endsWith('/type')) {
    const branch = paths.typeBranch(e.schemaPath, TYPE_CONST);
    if (branch)
      return { branch, at: e.instancePath.slice(0, -'/type'.length), allowed: e.params.allowedValue };
  }
  if (e.keyword === 'required' && e.params.missingProperty === 'type') {
    const branch = paths.typeBranch(e.schemaPath, TYPE_REQUIRED);
    if (branch) return { branch, at: e.instancePath, allowed: undefined };
  }
  return null;
}

/**
 * The 400 for a body that fails the schema. A component (and a button) is one of several shapes
 * told apart by `type`, and Ajv reports why the value fails every one of them; only the shape its
 * `type` names is reported here (or, when it names none, that `type` is wrong).
 *
 * A body of many wrong values has as many errors, so each error is looked at a bounded number of
 * times, through maps keyed by path (how deep a path goes and how many unions a schema path passes
 * are the schema's, not the body's): the work is linear in the errors.
 */
export function templateSchemaErrors(errors: FastifySchemaValidationError[], part: string): ApiError {
  const paths = new Paths();
  // Mismatched branches by the instance path of the value the union is about.
  const mismatches = new Map<string, Mismatch[]>();
  // The instance paths each union (by its `…/anyOf/` site) failed at.
  const unions = new Map<string, Set<string>>();
  for (const e of errors) {
    const m = mismatchOf(paths, e);
    if (m) mismatches.set(m.at, [...(mismatches.get(m.at) ?? []), { branch: m.branch, allowed: m.allowed }]);
    if (e.keyword === 'anyOf') {
      const site = `${e.schemaPath}/`;
      unions.set(site, (unions.get(site) ?? new Set()).add(e.instancePath));
    }
  }
  const inMismatchedBranch = (e: FastifySchemaValidationError) =>
    paths
      .selfAndAncestors(e.instancePath)
      .some((at) => mismatches.get(at)?.some((m) => e.schemaPath.startsWith(m.branch)));
  const kept = errors.filter((e) => !inMismatchedBranch(e));
  // `${site}|${instance path}` of each union that a kept error shows a matching branch of.
  const matched = new Set<string>();
  const markMatched = (k: FastifySchemaValidationError) => {
    for (const site of paths.unionSites(k.schemaPath)) {
      const failedAt = unions.get(site);
      if (!failedAt) continue;
      for (const at of paths.selfAndAncestors(k.instancePath))
        if (failedAt.has(at)) matched.add(`${site}|${at}`);
    }
  };
  for (const k of kept) markMatched(k);
  for (const union of errors) {
    if (union.keyword !== 'anyOf') continue;
    const site = `${union.schemaPath}/`;
    const own = (mismatches.get(union.instancePath) ?? []).filter((m) => m.branch.startsWith(site));
    if (own.length === 0 || matched.has(`${site}|${union.instancePath}`)) continue;
    const replaced: FastifySchemaValidationError = own.some((m) => m.allowed === undefined)
      ? { ...union, keyword: 'required', params: { missingProperty: 'type' } }
      : {
          ...union,
          instancePath: `${union.instancePath}/type`,
          keyword: 'type-of-union',
          message: `must be one of ${own.map((m) => m.allowed).join(', ')}`,
        };
    kept.push(replaced);
    markMatched(replaced);
  }
  return invalidFields(validationIssues(kept, part));
}

export const TemplateSyncSchema = Type.Object(
  {
    provider: Type.Enum(['sandbox', 'whatsapp_cloud'], {
      description: 'sandbox: the account has no Meta to read; nothing was read or changed.',
    }),
    pages: Type.Integer({
      description: 'Pages of `GET /{waba-id}/message_templates` read (100 templates each).',
    }),
    seen: Type.Integer({ description: 'Templates Meta listed.' }),
    created: Type.Integer({
      description: 'Templates Meta has that Tidings had not: created with Meta’s id.',
    }),
    updated: Type.Integer({
      description:
        'Templates whose status, category, components, quality score, parameter format or rejection reason changed.',
    }),
    unchanged: Type.Integer({ description: 'Templates already as Meta has them.' }),
    skipped: Type.Array(
      Type.Object({
        name: Type.String(),
        language: Type.String(),
        providerTemplateId: Type.String(),
        reason: Type.String({
          description:
            'Why it was left as it is: a DRAFT here, a status or components Tidings does not keep, …',
        }),
      }),
      { description: 'Templates Meta listed that were not brought in, each with why.' },
    ),
  },
  {
    title: 'TemplateSync',
    description:
      'What a sync did. Every page is read before anything is written, and all of it is written at once.',
  },
);
