// The largest bodies an operation's schema admits, and those just past it, for the fuzzer's
// "largest body" pass: work on the request path must grow no faster than the body. Each body is as
// large as the size given (the body limit, or a small step first), made of what makes code slow:
//   - the fullest body: every property present, every array at its maxItems (as many items as fit
//     where it has none), strings at their maxLength, open values nested as deep as the input guard
//     lets a body go;
//   - every array one item over its maxItems;
//   - each array filled to the size with its own items, and with values of the wrong type (10,000
//     non-objects in template components once held the event loop for most of a minute);
//   - each object filled with properties (unknown ones where it is closed);
//   - each open value (a schema that admits anything) nested to the depth limit, wide at the bottom.
// JSON is written as text, so that a body of half a million values costs little to make.
import { MAX_DEPTH } from '../../src/kernel/http/input-guard.ts';
import { fieldsOf, type Path, plausible, RawJson, toJsonText, typesOf, withField } from './fuzz-values.ts';
import type { JsonSchema } from './openapi-operations.ts';

export interface LargeBody {
  kind: string;
  payload: string;
}

function branches(schema: JsonSchema): JsonSchema[] {
  const alternatives = schema.anyOf ?? schema.oneOf;
  return alternatives ? alternatives.flatMap(branches) : [schema];
}

/** The branch a value follows: the first one that is not null. */
function mainBranch(schema: JsonSchema): JsonSchema {
  return branches(schema).find((b) => b.type !== 'null' && b.const !== null) ?? schema;
}

function typeOf(s: JsonSchema): string | undefined {
  if (s.properties || s.additionalProperties !== undefined) return 'object';
  return [s.type ?? []].flat().find((t) => t !== 'null');
}

/** `count` copies of `item` as a JSON array's text. */
function repeated(item: string, count: number): string {
  return count === 0 ? '[]' : `[${`${item},`.repeat(count - 1)}${item}]`;
}

/** As many copies of `item` as fit in `size` bytes, as a JSON array's text. */
function filling(item: string, size: number): string {
  return repeated(item, Math.max(1, Math.floor((size - 2) / (item.length + 1))));
}

/** An array nested so that its innermost level sits at the depth limit, holding `1`s up to `size`. */
function nestedToTheLimit(depth: number, size: number): string {
  const levels = Math.max(1, MAX_DEPTH - depth - 1);
  return `${'['.repeat(levels - 1)}${filling('1', size - 2 * levels)}${']'.repeat(levels - 1)}`;
}

/** An object holding as many properties `p0`, `p1`, … as fit in `size` bytes. */
function manyProperties(size: number, value = '1'): string {
  const parts: string[] = [];
  let used = 2;
  for (let i = 0; used < size; i++) {
    const part = `"p${i}":${value}`;
    used += part.length + 1;
    parts.push(part);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The fullest value of the schema within `size` bytes of JSON text, at `depth` (the root is 0).
 * The budget left by each part goes to the next, containers last, so that the arrays take most.
 */
function fullest(schema: JsonSchema, size: number, depth: number): string {
  const s = mainBranch(schema);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return JSON.stringify(s.enum[0]);
  if (typesOf(s) === null && !s.properties) return nestedToTheLimit(depth, size);
  switch (typeOf(s)) {
    case 'object': {
      const named = Object.entries(s.properties ?? {});
      const grows = ([, p]: [string, JsonSchema]) =>
        ['object', 'array'].includes(typeOf(mainBranch(p)) ?? '');
      const ordered = [...named.filter((p) => !grows(p)), ...named.filter(grows)];
      const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : null;
      const extras = extra ? Math.min(s.maxProperties ?? 20, 20) : 0;
      const parts: string[] = [];
      let left = size - 2;
      const add = (name: string, sub: JsonSchema, share: number) => {
        const text = fullest(sub, share - name.length - 4, depth + 1);
        parts.push(`${JSON.stringify(name)}:${text}`);
        left -= name.length + 4 + text.length;
      };
      ordered.forEach(([name, sub], i) => {
        add(name, sub, Math.floor(left / (ordered.length - i + extras)));
      });
      for (let i = 0; i < extras; i++) add(`extra_${i}`, extra!, Math.floor(left / (extras - i)));
      return `{${parts.join(',')}}`;
    }
    case 'array': {
      if (!s.items) return nestedToTheLimit(depth, size);
      const most = s.maxItems ?? Number.POSITIVE_INFINITY;
      const share = Number.isFinite(most) ? Math.floor(size / most) - 1 : Math.min(size, 200);
      const item = fullest(s.items, Math.max(share, 8), depth + 1);
      const fit = Math.floor((size - 2) / (item.length + 1));
      return repeated(item, Math.max(s.minItems ?? 0, Math.min(most, fit)));
    }
    case 'integer':
    case 'number':
      return String(s.maximum ?? s.minimum ?? 1);
    case 'boolean':
      return 'true';
    default: {
      if (s.format || s.pattern) return JSON.stringify(plausible(s));
      const length = Math.max(s.minLength ?? 0, Math.min(s.maxLength ?? size, size - 2));
      return JSON.stringify('x'.repeat(Math.max(length, 0)));
    }
  }
}

/**
 * A plausible value with every array one item over its maxItems (and each object with
 * maxProperties one property over), as JSON text; null when it would exceed `size` bytes. Items of
 * an array are alike, so each is made once: the cost is that of the text, not of the nesting.
 */
function overfull(schema: JsonSchema, size: number): string | null {
  const s = mainBranch(schema);
  if (s.const !== undefined || s.enum) return toJsonText(plausible(s));
  switch (typeOf(s)) {
    case 'object': {
      const parts: string[] = [];
      let used = 2;
      const add = (name: string, sub: JsonSchema) => {
        const text = overfull(sub, size - used);
        if (text === null) return false;
        parts.push(`${JSON.stringify(name)}:${text}`);
        used += name.length + 4 + text.length;
        return used <= size;
      };
      for (const [name, sub] of Object.entries(s.properties ?? {})) if (!add(name, sub)) return null;
      const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : {};
      for (let i = parts.length; s.maxProperties !== undefined && i <= s.maxProperties; i++) {
        if (!add(`extra_${i}`, extra)) return null;
      }
      return `{${parts.join(',')}}`;
    }
    case 'array': {
      if (!s.items || s.maxItems === undefined) return toJsonText(plausible(s));
      const count = s.maxItems + 1;
      const item = overfull(s.items, Math.floor(size / count));
      return item === null ? null : repeated(item, count);
    }
    default:
      return toJsonText(plausible(s));
  }
}

/** A scalar of a type the items do not admit (a small one: the point is how many there are). */
function wrongItem(items: JsonSchema): string {
  const types = typesOf(items);
  if (!types) return '1';
  return types.has('integer') || types.has('number') ? (types.has('string') ? 'true' : '"x"') : '1';
}

/**
 * The bodies of the pass for one operation's body schema, each at about `size` bytes and never over
 * it (the over-by-one body is as large as its schema makes it, when that fits), made one at a time:
 * a megabyte each. `sample` marks a few of them, of each kind the first: the fullest, the over-by-one,
 * the first array filled each way, the first object filled, the first open value nested.
 */
export function* largestBodies(schema: JsonSchema, size: number): Generator<LargeBody & { sample: boolean }> {
  const base = plausible(schema);
  const baseSize = toJsonText(base).length;
  // The body with `path` holding what `fill` makes of the room left, brought under `size` when the
  // parts made on the way (plausible parents) took more than expected.
  const filled = (path: Path, fill: (room: number) => string) => {
    let room = size - baseSize - 64;
    for (;;) {
      const payload = toJsonText(withField(base, schema, path, new RawJson(fill(room))));
      if (payload.length <= size || room < 64) return payload;
      room -= payload.length - size + 64;
    }
  };
  const seen = new Set<string>();
  const first = (kind: string) => !seen.has(kind) && Boolean(seen.add(kind));
  const fullestBody = fullest(schema, size - 64, 0);
  if (fullestBody.length <= size) yield { kind: 'the fullest body', payload: fullestBody, sample: true };
  const over = overfull(schema, size);
  if (over !== null) yield { kind: 'every array one over its maxItems', payload: over, sample: true };
  for (const { path, schema: sub } of [{ path: [] as Path, schema }, ...fieldsOf(schema)]) {
    const name = path.join('.') || 'the body';
    const s = mainBranch(sub);
    const type = typeOf(s);
    if (type === 'array' && s.items) {
      const item = toJsonText(plausible(s.items));
      yield {
        kind: `${name} filled with its items`,
        payload: filled(path, (room) => filling(item, room)),
        sample: first('items'),
      };
      const wrong = wrongItem(s.items);
      yield {
        kind: `${name} filled with wrong values`,
        payload: filled(path, (room) => filling(wrong, room)),
        sample: first('wrong'),
      };
    } else if (type === 'object') {
      yield {
        kind: `${name} filled with properties`,
        payload: filled(path, (room) => manyProperties(room)),
        sample: first('properties'),
      };
    } else if (typesOf(s) === null) {
      yield {
        kind: `${name} nested to the depth limit`,
        payload: filled(path, (room) => nestedToTheLimit(path.length, room)),
        sample: first('nested'),
      };
    }
  }
}
