// Turns contact fields as a client sends them into what is stored: the phone in E.164, the email
// and tags lower-cased, attribute names checked. Every problem is reported at once, per field, in
// the documented `details` shape; POST/PUT/PATCH and bulk import rows share these rules.

import { type FieldIssue, invalidRequest } from '../../kernel/http/errors.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 50;
export const MAX_ATTRIBUTES = 50;
export const MAX_ATTRIBUTE_VALUE_LENGTH = 500;
export const MAX_NAME_LENGTH = 200;
export const MAX_EMAIL_LENGTH = 254;
export const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,39}$/;
// Letters, digits, spaces and - _ : . — no commas (lists of tags are comma-separated in queries) and
// no slashes (a tag is a path segment in DELETE /contacts/{id}/tags/{tag}).
const TAG = /^[\p{L}\p{N}][\p{L}\p{N} _:.-]*$/u;

export type AttributeValue = string | number | boolean;

export interface ContactFields {
  phone?: string;
  name?: string | null;
  email?: string | null;
  tags?: string[];
  attributes?: Record<string, AttributeValue | null>;
  optedIn?: boolean;
  marketingOptOut?: boolean;
}

/**
 * The same fields after normalizeFields: stored values; absent keys are left as they are (PATCH)
 * or take their defaults (create, PUT); a null attribute value (PATCH only) removes it.
 */
export type NormalizedFields = ContactFields;

/** Lower-cased, trimmed, inner whitespace collapsed; null when it is not an acceptable tag. */
export function normalizeTag(raw: string): string | null {
  const tag = raw.trim().replace(/\s+/g, ' ').toLowerCase();
  return tag.length >= 1 && tag.length <= MAX_TAG_LENGTH && TAG.test(tag) ? tag : null;
}

/** The tags of a list, normalised and de-duplicated in order; problems are added to `issues`. */
export function normalizeTags(raw: string[], field: string, issues: FieldIssue[]): string[] {
  const tags: string[] = [];
  raw.forEach((value, i) => {
    const tag = normalizeTag(value);
    if (tag === null) {
      issues.push({
        field: `${field}[${i}]`,
        issue: `must be 1–${MAX_TAG_LENGTH} letters, digits, spaces or - _ : . and start with a letter or digit`,
      });
    } else if (!tags.includes(tag)) tags.push(tag);
  });
  return tags;
}

/** INVALID_REQUEST listing every fault (the first MAX_DETAILS, and how many more: errors.ts). */
export const invalidFields = invalidRequest;

/** Characters as the schemas' maxLength counts them (code points). */
const lengthOf = (s: string) => [...s].length;

/**
 * Checks and normalises the fields present. Throws INVALID_REQUEST listing every bad field.
 * `removable` lets attribute values be null (PATCH: remove that attribute). The lengths the
 * schemas bound are checked here too, for the writers no schema stands before (automation's
 * rendered values), so no path stores more than a request could.
 */
export function normalizeFields(input: ContactFields, country: string, removable = false): NormalizedFields {
  const issues: FieldIssue[] = [];
  const out: NormalizedFields = {};
  if (input.phone !== undefined) {
    const phone = normalizePhone(input.phone, country);
    if (phone) out.phone = phone;
    else issues.push({ field: 'phone', issue: 'is not a valid phone number (use E.164, e.g. +14155550123)' });
  }
  if (input.name !== undefined) {
    const name = input.name?.trim() ?? '';
    out.name = name === '' ? null : name;
    if (lengthOf(name) > MAX_NAME_LENGTH)
      issues.push({ field: 'name', issue: `must be at most ${MAX_NAME_LENGTH} characters` });
  }
  if (input.email !== undefined) {
    const email = input.email?.trim().toLowerCase() ?? '';
    out.email = email === '' ? null : email;
    if (lengthOf(email) > MAX_EMAIL_LENGTH)
      issues.push({ field: 'email', issue: `must be at most ${MAX_EMAIL_LENGTH} characters` });
  }
  if (input.tags !== undefined) {
    out.tags = normalizeTags(input.tags, 'tags', issues);
    if (out.tags.length > MAX_TAGS)
      issues.push({ field: 'tags', issue: `must hold at most ${MAX_TAGS} tags` });
  }
  if (input.attributes !== undefined) {
    for (const [name, value] of Object.entries(input.attributes)) {
      if (!ATTRIBUTE_NAME.test(name)) {
        issues.push({
          field: `attributes.${name}`,
          issue: 'names must start with a letter or _ and hold at most 40 letters, digits or _',
        });
      } else if (value === null && !removable) {
        issues.push({ field: `attributes.${name}`, issue: 'must be a string, number or boolean' });
      } else if (typeof value === 'string' && lengthOf(value) > MAX_ATTRIBUTE_VALUE_LENGTH) {
        issues.push({
          field: `attributes.${name}`,
          issue: `must be at most ${MAX_ATTRIBUTE_VALUE_LENGTH} characters`,
        });
      }
    }
    out.attributes = input.attributes;
  }
  if (input.optedIn !== undefined) out.optedIn = input.optedIn;
  if (input.marketingOptOut !== undefined) out.marketingOptOut = input.marketingOptOut;
  if (issues.length > 0) throw invalidFields(issues);
  return out;
}
