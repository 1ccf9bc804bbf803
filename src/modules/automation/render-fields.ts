// Rendering the strings inside a value, each into the room its field has. A message's strings take
// what the send schema gives their field (WhatsApp's sizes: 4,096 characters for a text body, 1,024
// for a caption or a template parameter, 60 for a header, 20 for a button title, …), so a rendered
// message is never longer than one written by hand could be. A webhook body's or trigger data's
// strings make one whole and share one budget.
import { Type } from 'typebox';
import { MAX_ATTRIBUTE_VALUE_LENGTH } from '../contacts/index.ts';
import { messageFields } from '../messages/index.ts';
import { MAX_DATA_JSON } from './liquid-data.ts';
import { OutputBudget } from './render-budget.ts';
import { render } from './templating.ts';

/** The most a rendered webhook body holds in its strings: what Tidings reads of any answer (64 KiB). */
export const BODY_MAX_CHARACTERS = 64 * 1024;

/** The parts of JSON Schema a walk along a value reads. */
export interface FieldSchema {
  type?: string | string[];
  maxLength?: number;
  properties?: Record<string, FieldSchema>;
  patternProperties?: Record<string, FieldSchema>;
  additionalProperties?: FieldSchema | boolean;
  items?: FieldSchema;
  anyOf?: FieldSchema[];
}

const MESSAGE_SCHEMA = Type.Object(messageFields) as FieldSchema;

/** Whose limit a message field's is, where it is WhatsApp's (by the field's path, without indexes). */
const WHY: Record<string, string> = {
  text: "WhatsApp's limit for a text message",
  'media.caption': "WhatsApp's limit for a caption",
  'interactive.body':
    "WhatsApp's limit for an interactive body; 1024 with buttons, cta_url or location_request",
  'interactive.header': "WhatsApp's limit for an interactive header",
  'interactive.footer': "WhatsApp's limit for an interactive footer",
  'interactive.buttons.title': "WhatsApp's limit for a button title",
  parameters: "WhatsApp's limit for a template parameter",
};

function jsonType(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** The branch of a union that takes a value of this JSON type (the schema itself when no union). */
function branchFor(schema: FieldSchema | undefined, value: unknown): FieldSchema | undefined {
  if (!schema?.anyOf) return schema;
  const type = jsonType(value);
  return schema.anyOf.find((b) => [b.type ?? (b.properties ? 'object' : '')].flat().includes(type));
}

function memberSchema(schema: FieldSchema | undefined, key: string): FieldSchema | undefined {
  if (!schema) return undefined;
  const named = schema.properties?.[key] ?? Object.values(schema.patternProperties ?? {})[0];
  if (named) return named;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

async function renderAt<T>(
  value: T,
  scope: object,
  at: { field: string; path: string },
  schema: FieldSchema | undefined,
  budgetOf: (field: string, path: string, schema: FieldSchema | undefined) => OutputBudget,
): Promise<T> {
  const s = branchFor(schema, value);
  if (typeof value === 'string') return (await render(value, scope, budgetOf(at.field, at.path, s))) as T;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [i, v] of value.entries()) {
      out.push(await renderAt(v, scope, { field: `${at.field}[${i}]`, path: at.path }, s?.items, budgetOf));
    }
    return out as T;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // A named field's path goes on with its name; a map's values (a NAMED template's) share theirs.
      const named = s?.properties?.[k] !== undefined || !at.path;
      const path = named ? (at.path ? `${at.path}.${k}` : k) : at.path;
      out[k] = await renderAt(v, scope, { field: `${at.field}.${k}`, path }, memberSchema(s, k), budgetOf);
    }
    return out as T;
  }
  return value;
}

/**
 * Every string of `value` rendered into the room `schema` gives its field (`maxLength`; a field it
 * does not bound, as long as a template may be). Errors name the field from `at.field`
 * (`message.text`); `at.path` is where `value` is in a message (`parameters`), for whose limit it is.
 */
export function renderFields<T>(
  value: T,
  scope: object,
  schema: FieldSchema,
  at: { field: string; path: string },
): Promise<T> {
  return renderAt(value, scope, at, schema, (field, path, s) => {
    const max = s?.maxLength ?? OutputBudget.default().max;
    return new OutputBudget(field, max, 'characters', WHY[path] ?? 'the most the field takes');
  });
}

/** A message (a `POST /messages` body without `to`) rendered, each string within its field's size. */
export function renderMessage<T>(message: T, scope: object, at = 'message'): Promise<T> {
  return renderFields(message, scope, MESSAGE_SCHEMA, { field: at, path: '' });
}

/** Every string of a value rendered into one shared budget: the strings of a webhook body. */
export function renderWhole<T>(value: T, scope: object, budget: OutputBudget): Promise<T> {
  return renderAt(value, scope, { field: budget.field, path: '' }, undefined, () => budget);
}

/** A webhook body's budget: its strings together. */
export const bodyBudget = (field = 'body') =>
  new OutputBudget(field, BODY_MAX_CHARACTERS, 'characters', 'in all its strings together');

/** A set_attribute value's budget (its field: `attributes.<key>`): what a contact's attribute holds. */
export const attributeBudget = (field: string) =>
  new OutputBudget(field, MAX_ATTRIBUTE_VALUE_LENGTH, 'characters', 'the most a contact attribute holds');

/** A journey's trigger data's budget, as POST /journeys/{id}/trigger bounds it. */
export const dataBudget = (field = 'data') =>
  new OutputBudget(field, MAX_DATA_JSON, 'characters', 'in all its strings together, as trigger data takes');
