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

/**
 * The first problem of a value: the field (as validation errors name it) and what is wrong with it,
 * or null. Iterative, so that a value nested as deep as the body limit allows is read safely.
 */
export function inputProblem(value: unknown, root: string): { field: string; issue: string } | null {
  // Most requests' path parameters, query or body are absent or empty: nothing to walk.
  if (value === undefined || value === null) return null;
  if (typeof value === 'object' && !Array.isArray(value) && isEmptyObject(value)) return null;
  const stack: [unknown, string, number][] = [[value, root, 0]];
  while (stack.length > 0) {
    const [v, field, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (!storable(v)) return { field, issue: 'contains a NUL character or an unpaired surrogate' };
      continue;
    }
    // Raw bodies (the WhatsApp callback keeps its bytes for the signature) are not JSON values.
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    if (depth >= MAX_DEPTH) return { field, issue: `nests deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) stack.push([item, `${field}[${i}]`, depth + 1]);
      continue;
    }
    for (const [k, item] of Object.entries(v)) {
      const name = field ? `${field}.${k}` : k;
      if (!storable(k))
        return { field: name, issue: 'has a name with a NUL character or an unpaired surrogate' };
      stack.push([item, name, depth + 1]);
    }
  }
  return null;
}

/**
 * Whether the route reads a body: a body schema, or bytes it reads itself (a provider's callback).
 * Others take none, and a body sent to them is refused rather than ignored (docs/decisions.md,
 * issue 25): an empty body and `{}` (what many clients send with every POST) carry nothing and pass.
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
