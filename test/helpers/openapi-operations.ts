// The operations of the OpenAPI document the app serves, in the shape the fuzzer and the isolation
// matrix need: who may call each one (from its `security`), its path, query and header parameters,
// its JSON body schema and its documented responses. Read from the document, not from the routes,
// so that the tests hold the document to what the service does.

export type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
  $ref?: string;
};

export type Access = 'public' | 'bootstrap' | 'session' | 'partner' | 'account';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: JsonSchema;
}

export interface Operation {
  /** "POST /api/v1/public/contacts", for messages. */
  name: string;
  operationId: string;
  method: string;
  path: string;
  access: Access;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON body's schema, or null when the operation documents none. */
  body: JsonSchema | null;
  /** The operation documents a request body (and then lists 413 and 415); others refuse one. */
  takesBody: boolean;
  /** Status → the error codes its description lists (empty for a success status). */
  responses: Record<string, string[]>;
  /** A console agent's session may call it (its description says so). */
  agents: boolean;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, RawOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

interface RawOperation {
  operationId?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description?: string }>;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** The access level an operation's `security` names; throws for one the fuzzer cannot satisfy. */
function accessOf(name: string, security: Record<string, string[]>[] | undefined): Access {
  const schemes = new Set((security ?? []).flatMap((s) => Object.keys(s)));
  if (schemes.size === 0) return 'public';
  // A console session may stand for a key (docs/console.md); an operation that takes a session only
  // is the console's own.
  if (schemes.size === 1 && schemes.has('ConsoleSession')) return 'session';
  schemes.delete('ConsoleSession');
  if (schemes.has('ApiKey')) return 'account';
  if (schemes.has('PartnerKey') && schemes.size === 1) return 'partner';
  if (schemes.has('BootstrapToken') && schemes.size === 1) return 'bootstrap';
  throw new Error(`${name}: the fuzzer has no credentials for security ${JSON.stringify(security)}`);
}

/** Error codes listed on a response description's first line ("CONFLICT, ALREADY_BOOTSTRAPPED"). */
function codesOf(description: string | undefined): string[] {
  const first = (description ?? '').split('\n')[0] ?? '';
  return first.split(/,\s*/).filter((c) => /^[A-Z_]+$/.test(c));
}

export function operationsOf(doc: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const params = raw.parameters ?? [];
      const content = raw.requestBody?.content;
      const json = content?.['application/json'];
      // A multipart upload (POST /media) is written by its own tests; here it gets the requests an
      // operation without a body schema gets (JSON, no body, wrong types), all of which it refuses.
      // So does a provider's form-encoded callback (Twilio's), read as bytes by its route.
      const multipart = content?.['multipart/form-data'] ?? content?.['application/x-www-form-urlencoded'];
      if (content && !json && !multipart)
        throw new Error(`${name}: a request body the fuzzer cannot write (not JSON or multipart)`);
      out.push({
        name,
        operationId: raw.operationId ?? name,
        method: method.toUpperCase(),
        path,
        access: accessOf(name, raw.security),
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        body: json?.schema ?? null,
        takesBody: Boolean(raw.requestBody),
        responses: Object.fromEntries(
          Object.entries(raw.responses).map(([status, r]) => [status, codesOf(r.description)]),
        ),
        agents: (raw.description ?? '').includes('A console agent’s session may call this operation.'),
      });
    }
  }
  return out;
}
