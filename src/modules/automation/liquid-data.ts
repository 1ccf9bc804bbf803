// The data a request hands to Liquid: a call's `variables` (`{{ variables.when }}`), a journey run's
// trigger data (`{{ trigger.data.… }}`), a rule's trigger_journey data. Bounded like a contact's
// attributes, which feed the same templates: at most 50 names of up to 64 characters, each value a
// string of up to 1,000 characters, a number, a boolean or null, or one level of list (50 items) or
// object (50 names) of those; and at most 16 KiB as JSON in all, what a journey's webhook node keeps of
// an answer in run.vars. The shape is one JSON Schema (a type list, so a value that is too long is
// told so once, not once per type it is not), the total a check of its own.
import { Type } from 'typebox';
import type { FieldIssue } from '../../kernel/http/errors.ts';

export const MAX_DATA_NAMES = 50;
export const MAX_DATA_NAME_LENGTH = 64;
export const MAX_DATA_VALUE_LENGTH = 1000;
export const MAX_DATA_ITEMS = 50;
export const MAX_DATA_JSON = 16 * 1024;

const SCALAR_TYPES = ['string', 'number', 'boolean', 'null'];
const Names = { minLength: 1, maxLength: MAX_DATA_NAME_LENGTH };
const Scalar = { type: SCALAR_TYPES, maxLength: MAX_DATA_VALUE_LENGTH };
const Value = {
  type: [...SCALAR_TYPES, 'array', 'object'],
  maxLength: MAX_DATA_VALUE_LENGTH,
  items: Scalar,
  maxItems: MAX_DATA_ITEMS,
  additionalProperties: Scalar,
  maxProperties: MAX_DATA_NAMES,
  propertyNames: Names,
};

/** What the bounds are, for descriptions. */
export const DATA_BOUNDS = `At most ${MAX_DATA_NAMES} names of 1–${MAX_DATA_NAME_LENGTH} characters; each value a string of up to ${MAX_DATA_VALUE_LENGTH} characters, a number, a boolean or null, or a list (≤ ${MAX_DATA_ITEMS} items) or object (≤ ${MAX_DATA_NAMES} names) of those; at most ${MAX_DATA_JSON} characters as JSON in all.`;

/** The schema of data given to Liquid, with the field's own description before the bounds. */
export function liquidData(description: string) {
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: Value,
    maxProperties: MAX_DATA_NAMES,
    propertyNames: Names,
    description: `${description} ${DATA_BOUNDS}`,
  });
}

/** The bound a schema cannot say: the whole, as JSON. */
export function liquidDataIssue(value: unknown, field: string): FieldIssue | null {
  if (value === undefined) return null;
  const size = JSON.stringify(value).length;
  return size > MAX_DATA_JSON
    ? { field, issue: `must be at most ${MAX_DATA_JSON} characters as JSON (it is ${size})` }
    : null;
}
