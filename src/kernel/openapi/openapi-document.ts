// The last pass over the generated OpenAPI document, so that generators and readers get named types
// and complete responses (docs/history/issue-25.md):
//   - every titled object schema of a response is hoisted into `components/schemas` under its title
//     and replaced by a `$ref`, so that a title written beside a schema in a module's schemas.ts
//     names the type a generator makes; two different shapes under one title throw (the build and
//     the tests fail), identical ones are one component;
//   - response headers are declared once in `components/headers` and referenced where the server
//     sends them (access.ts, idempotency.ts, app.ts);
//   - a success response the route left undescribed gets a description naming what it carries, and
//     each JSON success response an example built from its schema's own examples.
// Only the document changes: validation and serialization use the route schemas as written.
import { canonicalJson } from '../values/canonical-json.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose value is a map of schemas, a list of schemas, or one schema. */
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const LIST_KEYWORDS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const ONE_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
]);

const SCHEMAS = '#/components/schemas/';

/** Hoists titled object schemas into `schemas`; throws when one title names two shapes. */
export class SchemaHoister {
  readonly schemas: Record<string, unknown>;

  constructor(schemas: Record<string, unknown>) {
    this.schemas = schemas;
  }

  hoist(schema: unknown, where: string): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.hoist(s, where));
    if (!isObject(schema)) return schema;
    const out: Json = {};
    for (const [key, value] of Object.entries(schema)) {
      if (MAP_KEYWORDS.has(key) && isObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.hoist(v, where)]));
      } else if (LIST_KEYWORDS.has(key) && Array.isArray(value)) {
        out[key] = value.map((v) => this.hoist(v, where));
      } else if (ONE_KEYWORDS.has(key)) {
        out[key] = this.hoist(value, where);
      } else {
        out[key] = value;
      }
    }
    const title = out.title;
    if (typeof title !== 'string' || !isNamed(out)) return out;
    const existing = this.schemas[title];
    if (existing !== undefined && canonicalJson(existing) !== canonicalJson(out)) {
      throw new Error(
        `OpenAPI: the title ${title} names two different schemas (the second in ${where}); give one another title`,
      );
    }
    this.schemas[title] = out;
    return { $ref: `${SCHEMAS}${title}` };
  }
}

/** An object, or a union of objects: what a generator makes a named type of. */
function isNamed(schema: Json): boolean {
  return schema.type === 'object' || Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf);
}

// --- Response headers -------------------------------------------------------------------------

const integer = { type: 'integer', minimum: 0 };

export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: 'This request’s id (also `error.requestId`): quote it when asking for support.',
    schema: { type: 'string' },
    example: 'req_Yk3uQ0a5b2x9ZcVd',
  },
  'X-RateLimit-Limit': {
    description: 'Requests a second the key’s account (or partner) may make.',
    schema: integer,
    example: 10,
  },
  'X-RateLimit-Remaining': {
    description:
      'How many more requests would be admitted right now (the limit holds over any span of one second).',
    schema: integer,
    example: 9,
  },
  'X-RateLimit-Reset': {
    description:
      'When the oldest request counted in the last second stops counting, freeing one more place (after a 429: when the next request will be admitted), in seconds since the epoch, rounded up.',
    schema: integer,
    example: 1767225600,
  },
  'X-Quota-Limit': {
    description: 'API calls a month the plan includes (absent on a plan without a monthly quota).',
    schema: integer,
    example: 100000,
  },
  'X-Quota-Remaining': {
    description: 'API calls left this calendar month (UTC).',
    schema: integer,
    example: 99958,
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
    example: 5,
  },
  'Idempotent-Replayed': {
    description:
      'Present (`true`) when this is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
} as const;

type HeaderName = keyof typeof RESPONSE_HEADERS;

/** The headers the server sends on a response, by the operation's access and the status. */
function headersOf(
  access: 'public' | 'keyed',
  method: string,
  status: string,
  account: boolean,
): HeaderName[] {
  const names: HeaderName[] = ['X-Request-Id'];
  const success = status.startsWith('2');
  // access.ts: the rate limit is applied (and its headers set) on every keyed call that passes
  // authentication; the quota headers on account calls of a plan with a quota.
  if (access === 'keyed' && (success || status === '429')) {
    names.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');
    if (account) names.push('X-Quota-Limit', 'X-Quota-Remaining');
  }
  if (status === '429' || status === '503') names.push('Retry-After');
  // idempotency.ts: a keyed POST replayed from its Idempotency-Key.
  if (access === 'keyed' && method === 'post' && success) names.push('Idempotent-Replayed');
  return names;
}

// --- Examples ---------------------------------------------------------------------------------

const FORMAT_EXAMPLES: Record<string, unknown> = {
  'date-time': '2026-01-15T09:30:00.000Z',
  date: '2026-01-15',
  email: 'ann@example.com',
  uri: 'https://example.com/hooks/tidings',
  url: 'https://example.com/hooks/tidings',
  uuid: '5f0c6a2e-8a7b-4c59-9d2e-1b7f3c4a5d6e',
  time: '09:30:00',
};

/** A value of a schema, from its own examples where it has them, else plausible for its type. */
export function exampleOf(schema: unknown, schemas: Record<string, unknown>, depth = 0): unknown {
  if (!isObject(schema) || depth > 12) return null;
  if (typeof schema.$ref === 'string') {
    return exampleOf(schemas[schema.$ref.slice(SCHEMAS.length)], schemas, depth + 1);
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const union = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(union)) {
    const branch = union.find((b) => !(isObject(b) && b.type === 'null')) ?? union[0];
    return exampleOf(branch, schemas, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...schema.allOf.map((s) => exampleOf(s, schemas, depth + 1)));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Json;
      const required = new Set((schema.required ?? []) as string[]);
      const out: Json = {};
      for (const [name, property] of Object.entries(properties)) {
        // Optional fields appear when they have an example of their own.
        if (required.has(name) || (isObject(property) && hasOwnExample(property))) {
          out[name] = exampleOf(property, schemas, depth + 1);
        }
      }
      // A map (a Record) with a minimum size gets as many entries, under keys its pattern allows.
      const entry = Object.values((schema.patternProperties ?? {}) as Json)[0] ?? schema.additionalProperties;
      for (let i = 1; Object.keys(out).length < Number(schema.minProperties ?? 0) && isObject(entry); i++) {
        out[`key${i}`] = exampleOf(entry, schemas, depth + 1);
      }
      return out;
    }
    case 'array': {
      const min = Number(schema.minItems ?? 1);
      const item = exampleOf(schema.items, schemas, depth + 1);
      return Array.from({ length: Math.max(1, min) }, () => item);
    }
    case 'string': {
      if (typeof schema.format === 'string' && schema.format in FORMAT_EXAMPLES)
        return FORMAT_EXAMPLES[schema.format];
      const min = Number(schema.minLength ?? 0);
      return 'text'.padEnd(min, 'x').slice(0, Number(schema.maxLength ?? Number.POSITIVE_INFINITY));
    }
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

function hasOwnExample(schema: Json): boolean {
  return Array.isArray(schema.examples) || 'example' in schema || 'const' in schema;
}

// --- The pass ---------------------------------------------------------------------------------

interface Operation {
  security?: Record<string, string[]>[];
  responses?: Record<string, Json>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** What a success response carries, for its description: "The Contact." */
function describeSuccess(status: string, schema: unknown): string {
  const ref = isObject(schema) && typeof schema.$ref === 'string' ? schema.$ref.slice(SCHEMAS.length) : null;
  if (!ref) return status === '204' ? 'Done; no content.' : 'Success.';
  if (ref.endsWith('Page')) {
    return `A page of ${ref.slice(0, -4)} objects; pass \`nextCursor\` as \`cursor\` for the next (null on the last page).`;
  }
  if (status === '201') return `Created: the ${ref}.`;
  if (status === '202') return `Accepted: the ${ref}; the work goes on in the background.`;
  return `The ${ref}.`;
}

/** Whether `{}` satisfies a body schema (all its fields optional); test/openapi-document checks it. */
function satisfiedByEmpty(schema: Json): boolean {
  if (schema.type !== 'object' || ((schema.required as unknown[] | undefined)?.length ?? 0) > 0) return false;
  return ['oneOf', 'anyOf', 'allOf', 'not', 'minProperties', '$ref', 'if'].every((k) => !(k in schema));
}

export function finishDocument(document: Json): Json {
  const components = (document.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Record<string, unknown>;
  const hoister = new SchemaHoister(schemas);
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined;
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const schemeNames = new Set((op.security ?? []).flatMap((s) => Object.keys(s)));
      const access = schemeNames.has('ApiKey') || schemeNames.has('PartnerKey') ? 'keyed' : 'public';
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const content = response.content as Record<string, Json> | undefined;
        for (const media of Object.values(content ?? {})) {
          // A route describes its response on the schema (fastify-swagger makes it the response's
          // description): that use's words, not the named schema's.
          const schema = media.schema;
          const own =
            isObject(schema) && schema.description === response.description
              ? Object.fromEntries(Object.entries(schema).filter(([k]) => k !== 'description'))
              : schema;
          media.schema = hoister.hoist(own, where);
          if (status.startsWith('2') && media.example === undefined && media.examples === undefined) {
            media.example = exampleOf(media.schema, schemas);
          }
        }
        if (status.startsWith('2') && response.description === 'Default Response') {
          response.description = describeSuccess(status, content?.['application/json']?.schema);
        }
        const headers = headersOf(access, method, status, schemeNames.has('ApiKey'));
        response.headers = {
          ...(response.headers as Json | undefined),
          ...Object.fromEntries(headers.map((h) => [h, { $ref: `#/components/headers/${h}` }])),
        };
      }
      // A body `{}` satisfies may be left out (app.ts, validators): the document says it is optional.
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (op.requestBody && isObject(body) && satisfiedByEmpty(body)) op.requestBody.required = false;
    }
  }
  components.schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  components.headers = RESPONSE_HEADERS;
  document.components = components;
  return document;
}
