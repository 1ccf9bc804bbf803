// A campaign's audience, message or voice (docs/messaging.md § Campaigns): the contacts with a tag,
// with all or any of several tags, listed by id, or matching conditions over the contact's fields
// (the automation condition language, contact.* only). It is read in pages of contacts in id order,
// so an audience of any size is rows read a page at a time, never a list held in memory: the first
// three are a WHERE clause, the conditions are evaluated on each page.
import { Type } from 'typebox';
import type { Sql } from '../../kernel/database/db.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import {
  type Conditions,
  conditionContext,
  conditionProblems,
  evaluate,
  scopeOf,
} from '../automation/index.ts';
import type { ContactRow } from '../contacts/index.ts';

export type Audience =
  | { tag: string }
  | { tags: { all?: string[]; any?: string[] } }
  | { contactIds: string[] }
  | { conditions: Conditions };

const Tag = Type.String({ minLength: 1, maxLength: 50 });
const TagList = Type.Array(Tag, { minItems: 1, maxItems: 20, uniqueItems: true });

export const MAX_AUDIENCE_IDS = 10_000;

export const AudienceSchema = Type.Union(
  [
    Type.Object({ tag: Tag }, { additionalProperties: false, description: 'Every contact with the tag.' }),
    Type.Object(
      {
        tags: Type.Object(
          { all: Type.Optional(TagList), any: Type.Optional(TagList) },
          { additionalProperties: false, minProperties: 1 },
        ),
      },
      {
        additionalProperties: false,
        description: 'Contacts with every tag of `all` and at least one of `any` (either may be left out).',
      },
    ),
    Type.Object(
      {
        contactIds: Type.Array(Type.String({ maxLength: 100 }), {
          minItems: 1,
          maxItems: MAX_AUDIENCE_IDS,
        }),
      },
      {
        additionalProperties: false,
        description:
          'These contacts (a repeated id counts once). Every id must be a contact of the account: otherwise 400 naming `audience.contactIds` and the ids.',
      },
    ),
    Type.Object(
      {
        conditions: Type.Object(
          {
            all: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
            any: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
      },
      {
        additionalProperties: false,
        description:
          'Contacts matching the conditions (the automation condition language over `contact.*` fields: `{field, op, value}`, e.g. `{"field": "contact.attributes.city", "op": "eq", "value": "Lagos"}`).',
      },
    ),
  ],
  { description: 'Who the campaign reaches; fixed when it starts.' },
);

/** Ops that compare with an event's previous values: an audience has no event. */
const EVENT_OPS = new Set(['changed', 'changed_to', 'changed_from']);

/** What is wrong with an audience that its schema cannot say, each fault at its field. */
export function audienceProblems(audience: Audience): FieldIssue[] {
  if (!('conditions' in audience)) return [];
  const path = 'audience.conditions';
  const problems = conditionProblems(audience.conditions, path, ['contact.attributes.']);
  for (const group of ['all', 'any'] as const) {
    audience.conditions[group]?.forEach((c, i) => {
      const at = `${path}.${group}[${i}]`;
      if (typeof c?.field === 'string' && !c.field.startsWith('contact.')) {
        problems.push({ field: `${at}.field`, issue: 'an audience reads contact.* fields only' });
      }
      if (typeof c?.op === 'string' && EVENT_OPS.has(c.op)) {
        problems.push({ field: `${at}.op`, issue: `${c.op} needs an event; an audience has none` });
      }
    });
  }
  return problems;
}

/** The ids of `contactIds` that are not the account's contacts (unknown, or another's). */
export async function unknownContactIds(sql: Sql, accountId: string, audience: Audience): Promise<string[]> {
  if (!('contactIds' in audience)) return [];
  // Every column qualified: with the array's alias a bare `id` and the test `c.id = id`, that `id`
  // was the contact's own column, compared with itself: the check fired only for an account with no
  // contacts at all.
  const { rows } = await sql.query<{ id: string }>(
    `SELECT u.id FROM unnest($2::text[]) AS u (id)
      WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.account_id = $1 AND c.id = u.id)`,
    [accountId, audience.contactIds],
  );
  return rows.map((r) => r.id);
}

function whereOf(audience: Audience): { clause: string; value: unknown } | null {
  if ('tag' in audience) return { clause: '$3::text = ANY(tags)', value: audience.tag };
  if ('contactIds' in audience) return { clause: 'id = ANY($3::text[])', value: audience.contactIds };
  if ('tags' in audience) {
    return {
      clause: `($3::jsonb->'all' IS NULL OR tags @> ARRAY(SELECT jsonb_array_elements_text($3::jsonb->'all')))
           AND ($3::jsonb->'any' IS NULL OR tags && ARRAY(SELECT jsonb_array_elements_text($3::jsonb->'any')))`,
      value: JSON.stringify(audience.tags),
    };
  }
  return null;
}

export const AUDIENCE_PAGE = 1000;

/**
 * Calls `take` with the audience's contacts as the account has them now, a page at a time in id
 * order (a page may be empty when conditions match none of it; the walk goes on).
 */
export async function eachAudiencePage(
  sql: Sql,
  accountId: string,
  audience: Audience,
  now: Date,
  take: (contacts: ContactRow[]) => Promise<void>,
  pageSize = AUDIENCE_PAGE,
): Promise<void> {
  const where = whereOf(audience);
  let after = '';
  for (;;) {
    const { rows } = await sql.query<ContactRow>(
      `SELECT * FROM contact_rows
        WHERE account_id = $1 AND id > $2 ${where ? `AND ${where.clause}` : ''}
        ORDER BY id LIMIT ${pageSize}`,
      where ? [accountId, after, where.value] : [accountId, after],
    );
    if (rows.length === 0) return;
    after = rows.at(-1)!.id;
    await take('conditions' in audience ? rows.filter((c) => matches(c, audience.conditions, now)) : rows);
    if (rows.length < pageSize) return;
  }
}

function matches(contact: ContactRow, conditions: Conditions, now: Date): boolean {
  const scope = scopeOf(contact, null, { id: 'audience', type: 'audience', data: {} }, now);
  return evaluate(conditions, conditionContext(scope)).matched;
}
