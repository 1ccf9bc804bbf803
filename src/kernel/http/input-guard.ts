// Input no route can use, refused for every route before validation (400 INVALID_REQUEST):
//   - text PostgreSQL cannot store: NUL (refused by text and jsonb alike) and unpaired UTF-16
//     surrogates (no UTF-8 form: jsonb refuses their escapes, text would get U+FFFD in their
//     place). JSON and URLs can carry both; without this a request carrying either failed (500)
//     or was changed silently in the database.
//   - bodies nested deeper than MAX_DEPTH: the body limit allows half a million levels, which
//     overflow the stack of anything recursive that reads the body (validation, JSON.stringify,
//     the idempotency fingerprint), a 500. No request of this API nests more than a few levels.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalid } from './errors.ts';

export const MAX_DEPTH = 64;

const storable = (s: string) => !s.includes('\u0000') && s.isWellFormed();

function isEmptyObject(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

/** Where a value sits: its parent's place and its key (null at the root); named only if faulty. */
interface Place {
  parent: Place | null;
  key: string | number;
}

function fieldOf(place: Place | null, root: string): string {
  const keys: (string | number)[] = [];
  for (let at = place; at; at = at.parent) keys.push(at.key);
  let field = root;
  for (const key of keys.reverse()) {
    field = typeof key === 'number' ? `${field}[${key}]` : field ? `${field}.${key}` : key;
  }
  return field;
}

/**
 * The first problem of a value: the field (as validation errors name it) and what is wrong with it,
 * or null. Iterative, so that a value nested as deep as the body limit allows is read safely; a
 * field is named only for the value at fault (a body of half a million values made as many names,
 * most of the time a megabyte took to read).
 */
export function inputProblem(value: unknown, root: string): { field: string; issue: string } | null {
  // Most requests' path parameters, query or body are absent or empty: nothing to walk.
  if (value === undefined || value === null) return null;
  // Raw bodies (the WhatsApp callback keeps its bytes for the signature) are not JSON values; and
  // `for…in` over a megabyte of them would first list a million indices.
  if (ArrayBuffer.isView(value)) return null;
  if (typeof value === 'object' && !Array.isArray(value) && isEmptyObject(value)) return null;
  const at = (parent: Place | null, key: string | number | null) => (key === null ? parent : { parent, key });
  const textProblem = (place: Place | null) => ({
    field: fieldOf(place, root),
    issue: 'contains a NUL character or an unpaired surrogate',
  });
  if (typeof value === 'string') return storable(value) ? null : textProblem(null);
  // Containers still to read, in parallel arrays: the container, its parent's place and its key. A
  // scalar is checked where it is found, and a place is made only for a container.
  const containers: unknown[] = [value];
  const parents: (Place | null)[] = [null];
  const keys: (string | number | null)[] = [null];
  const depths: number[] = [0];
  const visit = (item: unknown, here: Place | null, key: string | number, depth: number) => {
    if (typeof item === 'string') return storable(item) ? null : textProblem({ parent: here, key });
    if (item !== null && typeof item === 'object' && !ArrayBuffer.isView(item)) {
      containers.push(item);
      parents.push(here);
      keys.push(key);
      depths.push(depth);
    }
    return null;
  };
  while (containers.length > 0) {
    const v = containers.pop() as object;
    const here = at(parents.pop()!, keys.pop()!);
    const depth = depths.pop()!;
    if (depth >= MAX_DEPTH)
      return { field: fieldOf(here, root), issue: `nests deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const problem = visit(v[i], here, i, depth + 1);
        if (problem) return problem;
      }
      continue;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if (!storable(k)) {
        return {
          field: fieldOf({ parent: here, key: k }, root),
          issue: 'has a name with a NUL character or an unpaired surrogate',
        };
      }
      const problem = visit((v as Record<string, unknown>)[k], here, k, depth + 1);
      if (problem) return problem;
    }
  }
  return null;
}

/**
 * Whether the route reads a body: a body schema, or bytes it reads itself (a provider's callback).
 * Others take none, and a body sent to them is refused rather than ignored (docs/history/issue-25.md,
 * the document): an empty body and `{}` (what many clients send with every POST) carry nothing and pass.
 */
export function takesBody(request: FastifyRequest): boolean {
  const options = request.routeOptions;
  // An unknown path (404) is not an operation: it says so, whatever it was sent.
  if (!options.url) return true;
  return Boolean((options.schema as { body?: unknown } | undefined)?.body || options.config?.rawBody);
}

/** The refusal of a body sent where none is taken. */
export const noBody = () => invalid('body', 'is not taken by this operation: send none (or `{}`)');

/** A body that carries nothing: absent, or the empty object. */
function empty(body: unknown): boolean {
  return (
    body === undefined ||
    (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0)
  );
}

// Both hooks are synchronous (done, not async): every request runs them, and an async hook costs a
// promise and a turn of the microtask queue each.
export function installInputGuard(app: FastifyInstance): void {
  // GET and HEAD bodies are never read (Fastify skips them): one sent is refused from its headers.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return done();
    const length = Number(request.headers['content-length'] ?? 0);
    if ((length > 0 || request.headers['transfer-encoding']) && !takesBody(request)) return done(noBody());
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    // A JSON body other than {} to a route without a body schema (a POST action, a DELETE).
    if (!takesBody(request) && !empty(request.body)) return done(noBody());
    const problem =
      inputProblem(request.params, 'path') ??
      inputProblem(request.query, 'query') ??
      inputProblem(request.body, '');
    done(problem ? invalid(problem.field || 'body', problem.issue) : undefined);
  });
}
