// Conditions of rules (and, next, of journeys and sequence triggers): `{all?: [Cond], any?: [Cond]}`
// with `Cond = {field, op, value?}`. Two pure halves:
//   - conditionProblems: what is wrong with a set, one `{field, issue}` per fault (the API's 400
//     `details`); a field or an op that does not fit the field's type is refused when the rule is
//     saved, not discovered when it runs.
//   - evaluate: whether a set holds in a context, with the trace a run records, condition by
//     condition (`{field, op, expected, actual, result}`), so that a user sees why a rule did or did
//     not fire. Every condition is evaluated (no short cut): the trace is whole.
// A set holds when every `all` holds (or there is none) and at least one `any` holds (or there is
// none). `changed`, `changed_to` and `changed_from` compare with the event's previous values
// (Context.previous); a field the event did not change has not changed.
import { type KeywordMatch, keywordProblems, matchesKeyword } from './keywords.ts';

export const OPS = [
  'eq',
  'neq',
  'in',
  'nin',
  'contains',
  'not_contains',
  'starts_with',
  'exists',
  'not_exists',
  'gt',
  'gte',
  'lt',
  'lte',
  'changed',
  'changed_to',
  'changed_from',
  'matches_keyword',
] as const;
export type Op = (typeof OPS)[number];

export interface Condition {
  field: string;
  op: Op;
  value?: unknown;
}

export interface Conditions {
  all?: Condition[];
  any?: Condition[];
}

/** What a field holds, which decides the ops it takes. `any`: attributes and event data. */
type FieldType = 'string' | 'boolean' | 'number' | 'list' | 'any';

const FIXED_FIELDS: Record<string, FieldType> = {
  'contact.phone': 'string',
  'contact.name': 'string',
  'contact.email': 'string',
  'contact.tags': 'list',
  'contact.country': 'string',
  'contact.optedIn': 'boolean',
  'contact.marketingOptOut': 'boolean',
  'message.text': 'string',
  'message.type': 'string',
  'message.buttonId': 'string',
  'conversation.status': 'string',
  'conversation.assigneeId': 'string',
  'conversation.labels': 'list',
  'conversation.teamId': 'string',
  'time.localHour': 'number',
  'time.weekday': 'number',
  'time.businessHours': 'string',
};

/** Fields whose key is the user's: `contact.attributes.<key>`, `event.data.<path>`. */
export const OPEN_PREFIXES = ['contact.attributes.', 'event.data.'];
/** Journeys read their run's variables too: `run.vars.<path>` (a webhook's answer, a reply). */
export const JOURNEY_PREFIXES = [...OPEN_PREFIXES, 'run.vars.'];

const OPS_BY_TYPE: Record<FieldType, readonly Op[]> = {
  string: [
    'eq',
    'neq',
    'in',
    'nin',
    'contains',
    'not_contains',
    'starts_with',
    'exists',
    'not_exists',
    'changed',
    'changed_to',
    'changed_from',
    'matches_keyword',
  ],
  boolean: ['eq', 'neq', 'exists', 'not_exists', 'changed', 'changed_to', 'changed_from'],
  number: [
    'eq',
    'neq',
    'in',
    'nin',
    'gt',
    'gte',
    'lt',
    'lte',
    'exists',
    'not_exists',
    'changed',
    'changed_to',
    'changed_from',
  ],
  list: ['contains', 'not_contains', 'exists', 'not_exists', 'changed'],
  any: OPS.filter((op) => op !== 'matches_keyword'),
};

export const MAX_CONDITIONS = 20;
const MAX_IN_VALUES = 100;
const MAX_VALUE_LENGTH = 1000;
const KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

export function fieldType(field: string, prefixes: string[] = OPEN_PREFIXES): FieldType | null {
  // A journey's graph reads its scope without the account's hours (journeys/execute.ts).
  if (field === 'time.businessHours' && prefixes.includes('run.vars.')) return null;
  if (field in FIXED_FIELDS) return FIXED_FIELDS[field]!;
  const prefix = prefixes.find((p) => field.startsWith(p));
  return prefix && KEY.test(field.slice(prefix.length)) ? 'any' : null;
}

export interface Problem {
  field: string;
  issue: string;
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** The type a value must have to be compared with a field of this type. */
function scalarProblem(type: FieldType, v: unknown): string | null {
  if (type === 'string' || type === 'list') {
    if (typeof v !== 'string') return 'must be a string';
    return v.length > MAX_VALUE_LENGTH ? `must be at most ${MAX_VALUE_LENGTH} characters` : null;
  }
  if (type === 'number') return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number';
  if (type === 'boolean') return typeof v === 'boolean' ? null : 'must be true or false';
  if (!isScalar(v) && v !== null) return 'must be a string, a number, true, false or null';
  return typeof v === 'string' && v.length > MAX_VALUE_LENGTH
    ? `must be at most ${MAX_VALUE_LENGTH} characters`
    : null;
}

function valueProblem(type: FieldType, op: Op, value: unknown): string | null {
  switch (op) {
    case 'exists':
    case 'not_exists':
    case 'changed':
      return value === undefined ? null : `takes no value with ${op}`;
    case 'in':
    case 'nin': {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES) {
        return `must be a list of 1 to ${MAX_IN_VALUES} values with ${op}`;
      }
      for (const v of value) {
        const problem = scalarProblem(type, v);
        if (problem) return `every value ${problem}`;
      }
      return null;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (type === 'any') {
        return typeof value === 'number' || typeof value === 'string'
          ? null
          : `must be a number (or a string, compared as text) with ${op}`;
      }
      return scalarProblem(type, value);
    case 'matches_keyword':
      return keywordProblems(value);
    default:
      if (value === undefined) return `is required with ${op}`;
      return scalarProblem(type, value);
  }
}

/** Whether the set holds more than MAX_CONDITIONS conditions, in `all` and `any` together. */
function tooMany(groups: Record<string, unknown>): boolean {
  const length = (list: unknown) => (Array.isArray(list) ? list.length : 0);
  return length(groups.all) + length(groups.any) > MAX_CONDITIONS;
}

/**
 * Every fault of a condition set, located under `path` (e.g. `conditions`); `prefixes` are the
 * open fields it may read (journeys add `run.vars.`).
 */
export function conditionProblems(
  conditions: unknown,
  path: string,
  prefixes: string[] = OPEN_PREFIXES,
): Problem[] {
  if (conditions === undefined || conditions === null) return [];
  if (typeof conditions !== 'object' || Array.isArray(conditions)) {
    return [{ field: path, issue: 'must be an object with `all` and/or `any`' }];
  }
  const problems: Problem[] = [];
  const groups = conditions as Record<string, unknown>;
  for (const key of Object.keys(groups)) {
    if (key !== 'all' && key !== 'any') problems.push({ field: `${path}.${key}`, issue: 'is not allowed' });
  }
  // Too many is said before any condition is read: a list as long as the body limit allows would
  // otherwise get a fault per condition (a megabyte of them took a fifth of a second).
  if (tooMany(groups)) {
    return [...problems, { field: path, issue: `holds at most ${MAX_CONDITIONS} conditions` }];
  }
  for (const group of ['all', 'any'] as const) {
    const list = groups[group];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      problems.push({ field: `${path}.${group}`, issue: 'must be a list of conditions' });
      continue;
    }
    for (const [i, raw] of list.entries()) {
      const at = `${path}.${group}[${i}]`;
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
        problems.push({ field: at, issue: 'must be an object {field, op, value?}' });
        continue;
      }
      const c = raw as Record<string, unknown>;
      for (const key of Object.keys(c)) {
        if (!['field', 'op', 'value'].includes(key))
          problems.push({ field: `${at}.${key}`, issue: 'is not allowed' });
      }
      const type = typeof c.field === 'string' ? fieldType(c.field, prefixes) : null;
      if (!type) {
        problems.push({
          field: `${at}.field`,
          issue: `${JSON.stringify(c.field)} is not a field: use contact.phone|name|email|tags|country|optedIn|marketingOptOut|attributes.<key>, message.text|type|buttonId, conversation.status|assigneeId|teamId|labels, event.data.<path>, time.localHour|weekday${prefixes.includes('run.vars.') ? '' : '|businessHours'}${prefixes.includes('run.vars.') ? ', run.vars.<path>' : ''}`,
        });
        continue;
      }
      if (typeof c.op !== 'string' || !(OPS as readonly string[]).includes(c.op)) {
        problems.push({
          field: `${at}.op`,
          issue: `${JSON.stringify(c.op)} is not an op: ${OPS.join(', ')}`,
        });
        continue;
      }
      const op = c.op as Op;
      if (!OPS_BY_TYPE[type].includes(op)) {
        problems.push({
          field: `${at}.op`,
          issue: `${op} does not apply to ${c.field} (${type}); it takes ${OPS_BY_TYPE[type].join(', ')}`,
        });
        continue;
      }
      const problem = valueProblem(type, op, c.value);
      if (problem) problems.push({ field: `${at}.value`, issue: problem });
    }
  }
  return problems;
}

/** conditionProblems, and message.* fields refused where the trigger is not about a message. */
export function triggerConditionProblems(
  conditions: Conditions,
  event: string,
  path: string,
  prefixes: string[] = OPEN_PREFIXES,
): Problem[] {
  const problems = conditionProblems(conditions, path, prefixes);
  if (event.startsWith('message.') || tooMany(conditions as Record<string, unknown>)) return problems;
  for (const group of ['all', 'any'] as const) {
    conditions[group]?.forEach((c, i) => {
      if (typeof c.field === 'string' && c.field.startsWith('message.')) {
        problems.push({
          field: `${path}.${group}[${i}].field`,
          issue: `${c.field} is known only for message.* triggers, not ${event}`,
        });
      }
    });
  }
  return problems;
}

/** What conditions are evaluated against. `previous` holds the event's former values, by field. */
export interface Context {
  values: (field: string) => unknown;
  previous: (field: string) => { known: boolean; value?: unknown };
}

export interface TraceEntry {
  field: string;
  op: Op;
  expected: unknown;
  actual: unknown;
  result: boolean;
}

const same = (a: unknown, b: unknown) =>
  typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : a === b;

function compare(op: 'gt' | 'gte' | 'lt' | 'lte', actual: unknown, expected: unknown): boolean {
  if (typeof actual !== typeof expected || (typeof actual !== 'number' && typeof actual !== 'string'))
    return false;
  const a = actual as number | string;
  const e = expected as number | string;
  if (op === 'gt') return a > e;
  if (op === 'gte') return a >= e;
  if (op === 'lt') return a < e;
  return a <= e;
}

function present(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return false;
  return !(Array.isArray(v) && v.length === 0);
}

function holds(c: Condition, actual: unknown, ctx: Context): boolean {
  switch (c.op) {
    case 'eq':
      return same(actual, c.value);
    case 'neq':
      return !same(actual, c.value);
    case 'in':
      return (c.value as unknown[]).some((v) => same(actual, v));
    case 'nin':
      return !(c.value as unknown[]).some((v) => same(actual, v));
    case 'contains':
      if (Array.isArray(actual)) return actual.some((v) => same(v, c.value));
      return typeof actual === 'string' && actual.toLowerCase().includes(String(c.value).toLowerCase());
    case 'not_contains':
      if (Array.isArray(actual)) return !actual.some((v) => same(v, c.value));
      return !(typeof actual === 'string' && actual.toLowerCase().includes(String(c.value).toLowerCase()));
    case 'starts_with':
      return typeof actual === 'string' && actual.toLowerCase().startsWith(String(c.value).toLowerCase());
    case 'exists':
      return present(actual);
    case 'not_exists':
      return !present(actual);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compare(c.op, actual, c.value);
    case 'changed':
    case 'changed_to':
    case 'changed_from': {
      const before = ctx.previous(c.field);
      if (!before.known || JSON.stringify(before.value) === JSON.stringify(actual)) return false;
      if (c.op === 'changed') return true;
      return c.op === 'changed_to' ? same(actual, c.value) : same(before.value, c.value);
    }
    case 'matches_keyword':
      return typeof actual === 'string' && matchesKeyword(actual, c.value as KeywordMatch);
  }
}

/** Whether the set holds in this context, and the trace of every condition. */
export function evaluate(
  conditions: Conditions | null | undefined,
  ctx: Context,
): { matched: boolean; trace: TraceEntry[] } {
  const trace: TraceEntry[] = [];
  const run = (list: Condition[] | undefined) =>
    (list ?? []).map((c) => {
      const actual = ctx.values(c.field);
      const result = holds(c, actual, ctx);
      trace.push({ field: c.field, op: c.op, expected: c.value ?? null, actual: actual ?? null, result });
      return result;
    });
  const all = run(conditions?.all);
  const any = run(conditions?.any);
  const matched = all.every(Boolean) && (any.length === 0 || any.some(Boolean));
  return { matched, trace };
}
