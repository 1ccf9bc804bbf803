// Values for the OpenAPI fuzzer, derived from JSON schemas: a plausible value (the shape the schema
// asks for, without trying hard to be accepted), values of the wrong type, and the awkward inputs
// that break parsers, databases and recursive code (odd Unicode, numbers JSON.parse cannot keep,
// huge strings, deep nesting). JSON is written as text by toJsonText so that a body can carry
// numbers like 1e400 and -0 that JSON.stringify would change.
import fc from 'fast-check';
import type { JsonSchema } from './openapi-operations.ts';

/** JSON text placed as is into a body (a number JSON.stringify cannot write, a deep nest). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text.length > 60 ? `${this.text.slice(0, 60)}…(${this.text.length} chars)` : this.text;
  }
}

/** JSON.stringify, except that RawJson values are written as their own text. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function branches(schema: JsonSchema): JsonSchema[] {
  const alternatives = schema.anyOf ?? schema.oneOf;
  return alternatives ? alternatives.flatMap(branches) : [schema];
}

const jsonType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

/** The JSON types a schema admits, or null when it admits anything. */
export function typesOf(schema: JsonSchema): Set<string> | null {
  const out = new Set<string>();
  for (const b of branches(schema)) {
    if (b.const !== undefined) out.add(jsonType(b.const));
    else if (b.enum) for (const v of b.enum) out.add(jsonType(v));
    else if (b.type) for (const t of [b.type].flat()) out.add(t);
    else if (b.properties) out.add('object');
    else return null;
  }
  if (out.has('number')) out.add('integer');
  return out;
}

/** The first non-null branch: what a plausible value follows. */
function mainBranch(schema: JsonSchema): JsonSchema {
  return branches(schema).find((b) => b.type !== 'null' && b.const !== null) ?? schema;
}

const PLAUSIBLE_STRINGS: Record<string, string> = {
  'date-time': '2031-01-01T00:00:00.000Z',
  date: '2031-01-01',
  email: 'fuzz@example.com',
  uri: 'https://example.com/fuzz',
};

/** A value of the schema's shape: required properties only, one item in each array. */
export function plausible(schema: JsonSchema): unknown {
  const s = mainBranch(schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const type = [s.type ?? (s.properties ? 'object' : 'string')].flat().find((t) => t !== 'null');
  switch (type) {
    case 'object':
      return Object.fromEntries(
        (s.required ?? []).flatMap((k) => (s.properties?.[k] ? [[k, plausible(s.properties[k])]] : [])),
      );
    case 'array':
      return s.items ? Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => plausible(s.items!)) : [];
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return PLAUSIBLE_STRINGS[s.format ?? ''] ?? 'fuzz'.padEnd(s.minLength ?? 0, 'z');
  }
}

export type Path = (string | number)[];

/** Every property of the schema (objects' properties and arrays' items, nested), with its schema. */
export function fieldsOf(
  schema: JsonSchema,
  depth = 4,
  prefix: Path = [],
): { path: Path; schema: JsonSchema }[] {
  if (depth === 0) return [];
  const out: { path: Path; schema: JsonSchema }[] = [];
  for (const b of branches(schema)) {
    for (const [name, sub] of Object.entries(b.properties ?? {})) {
      out.push({ path: [...prefix, name], schema: sub }, ...fieldsOf(sub, depth - 1, [...prefix, name]));
    }
    if (b.items) {
      out.push({ path: [...prefix, 0], schema: b.items }, ...fieldsOf(b.items, depth - 1, [...prefix, 0]));
    }
  }
  // Union branches can name the same property twice; keep the first.
  const seen = new Set<string>();
  return out.filter((f) => !seen.has(JSON.stringify(f.path)) && seen.add(JSON.stringify(f.path)));
}

/** The required properties at any depth, with the schema of the object that requires each. */
export function requiredFieldsOf(schema: JsonSchema): Path[] {
  const top = branches(schema).flatMap((b) => (b.required ?? []).map((k) => [k] as Path));
  const nested = fieldsOf(schema).flatMap(({ path, schema: sub }) =>
    branches(sub).flatMap((b) => (b.required ?? []).map((k) => [...path, k])),
  );
  return [...top, ...nested];
}

/** Objects (the body or nested) that refuse unknown properties, by path. */
export function closedObjectsOf(schema: JsonSchema): Path[] {
  const closed = (s: JsonSchema) =>
    branches(s).every((b) => b.properties && b.additionalProperties === false);
  return [
    ...(closed(schema) ? [[]] : []),
    ...fieldsOf(schema)
      .filter((f) => closed(f.schema))
      .map((f) => f.path),
  ];
}

/** A copy of `value` with `path` set (or removed, for undefined), creating what is missing. */
export function withField(value: unknown, schema: JsonSchema, path: Path, field: unknown): unknown {
  if (path.length === 0) return field;
  const [head, ...rest] = path;
  const s = branches(schema).find((b) =>
    typeof head === 'number' ? b.items : b.properties?.[head as string],
  );
  const childSchema = (typeof head === 'number' ? s?.items : s?.properties?.[head as string]) ?? {};
  if (typeof head === 'number') {
    const list = Array.isArray(value) ? [...value] : [];
    list[head] = withField(list[head] ?? plausible(childSchema), childSchema, rest, field);
    return list;
  }
  const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value } : {};
  const current = (object as Record<string, unknown>)[head];
  const next = withField(current ?? plausible(childSchema), childSchema, rest, field);
  if (next === undefined) delete (object as Record<string, unknown>)[head];
  else (object as Record<string, unknown>)[head] = next;
  return object;
}

const TYPED_SAMPLES: { type: string; value: unknown }[] = [
  { type: 'string', value: 'fuzz' },
  { type: 'string', value: '42' },
  { type: 'integer', value: 42 },
  { type: 'number', value: 1.5 },
  { type: 'boolean', value: true },
  { type: 'boolean', value: false },
  { type: 'null', value: null },
  { type: 'array', value: [] },
  { type: 'array', value: ['fuzz', 1, null] },
  { type: 'object', value: {} },
  { type: 'object', value: { nested: { deeper: [1] } } },
];

/** Values whose JSON type the schema does not admit (none for a schema that admits anything). */
export function wrongTypedValues(schema: JsonSchema): unknown[] {
  const types = typesOf(schema);
  if (!types) return [];
  return TYPED_SAMPLES.filter(
    (s) => !types.has(s.type) && !(s.type === 'integer' && types.has('number')),
  ).map((s) => s.value);
}

/** Strings that have broken parsers, databases and logs: unpaired surrogates, NUL, bidi marks… */
export const EDGE_STRINGS: string[] = [
  '\ud800',
  'a\udfffb',
  '\udc00\ud800',
  '\u0000',
  'nul\u0000inside',
  '\u202eevil\u202c',
  '\u200f\u200e\u061c',
  '👩‍👩‍👧‍👦🏳️‍🌈',
  'e\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308',
  '\ufeffbom',
  '\uffff\ufffe',
  '\u2028\u2029',
  '\u001b[31mred',
  '',
  ' ',
  '%00%ff',
  '../../etc/passwd',
  "'; DROP TABLE contacts; --",
  '<script>alert(1)</script>',
  '{{1}}{{{2}}}',
  '\\',
  '𝕏'.repeat(5_000),
];

/** Numbers as JSON text that JavaScript cannot keep exactly (or at all). */
export const EDGE_NUMBERS: RawJson[] = [
  '1e400',
  '-1e400',
  '-0',
  '1e-400',
  '-1',
  '0',
  '4.9e-324',
  '9007199254740993',
  '18446744073709551616',
  '123456789012345678901234567890123456789',
  '0.30000000000000000000000000001',
  '1E2',
].map((t) => new RawJson(t));

export const HUGE_STRING_LENGTH = 100 * 1024;

/** An array or object nested `depth` levels deep, as JSON text. */
export function deepNest(depth: number, shape: 'array' | 'object'): RawJson {
  return shape === 'array'
    ? new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`)
    : new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
}

/** Any string: edge cases, and random text of every Unicode plane (lone surrogates included). */
export const edgeString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
);

/** An edge value for a field of this schema: odd strings for text, odd numbers for numbers. */
export function edgeValueFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = typesOf(schema);
  const numeric = types && (types.has('number') || types.has('integer'));
  return numeric ? fc.oneof(fc.constantFrom(...EDGE_NUMBERS), edgeString) : edgeString;
}
