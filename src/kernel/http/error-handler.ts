// The one place that writes an error body: { error: { code, message, docs, details?, requestId } }.
// Fastify's own errors (bad JSON, wrong content type, body too large, schema validation, unknown
// route) are translated into the catalogue; anything unexpected becomes a 500 that shows nothing
// of its cause to the caller and is logged in full.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnreachable } from '../database/db.ts';
import { ApiError, type ErrorCode, type FieldIssue, invalidRequest } from './errors.ts';
import { noBody, takesBody } from './input-guard.ts';
import type { RouteHints } from './route-hints.ts';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  propertyName?: string;
}

const VALIDATION_PART: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** Field names by instance path: a body of many wrong values has several errors at each. */
type FieldNames = Map<string, string>;

function fieldOf(issue: AjvIssue, names: FieldNames): string {
  const base = pathOf(issue, names);
  // A oneOf told apart by a property (an action's or a node's `type`): the fault is that property.
  if (issue.keyword === 'discriminator')
    return base ? `${base}.${issue.params.tag}` : String(issue.params.tag);
  return base;
}

/** `/contacts/0/tags/2` as `contacts[0].tags[2]`. */
function fieldPath(instancePath: string): string {
  let out = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const p = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out = /^\d+$/.test(p) ? `${out}[${p}]` : out ? `${out}.${p}` : p;
  }
  return out;
}

function pathOf(issue: AjvIssue, names: FieldNames): string {
  let path = names.get(issue.instancePath);
  if (path === undefined) {
    path = fieldPath(issue.instancePath);
    names.set(issue.instancePath, path);
  }
  const leaf =
    (issue.params.missingProperty as string | undefined) ??
    (issue.params.additionalProperty as string | undefined) ??
    // A name refused by `propertyNames`: the fault is that name.
    issue.propertyName;
  if (leaf) return path ? `${path}.${leaf}` : leaf;
  return path;
}

function issueOf(issue: AjvIssue): string {
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'additionalProperties') return 'is not a known field';
  if (issue.keyword === 'enum')
    return `must be one of ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  if (issue.keyword === 'discriminator') {
    return issue.params.error === 'tag'
      ? 'is required, as a string naming the kind'
      : `${JSON.stringify(issue.params.tagValue)} is not a kind this takes`;
  }
  return issue.message ?? 'is invalid';
}

// A field is named by the body's own keys; one of a megabyte is named by its start.
const LONGEST_FIELD = 200;

/**
 * Ajv's errors as `details`, one per field and fault, in Ajv's order. In one pass over the errors
 * (a body of many wrong values has as many errors): work per error never depends on their number.
 */
export function validationIssues(issues: AjvIssue[], part: string | undefined): FieldIssue[] {
  const seen = new Set<string>();
  const out: FieldIssue[] = [];
  const perField = new Map<string, number>();
  const names: FieldNames = new Map();
  for (const issue of issues) {
    // A failed union also reports each failed branch; the union's own line says enough. A name
    // refused by `propertyNames` is reported by the keyword it failed, at the name.
    if (issue.keyword === 'anyOf' || issue.keyword === 'oneOf' || issue.keyword === 'propertyNames') continue;
    const named = fieldOf(issue, names) || VALIDATION_PART[part ?? 'body'] || 'body';
    const field = named.length > LONGEST_FIELD ? `${named.slice(0, LONGEST_FIELD)}…` : named;
    const entry = { field, issue: issueOf(issue) };
    const key = `${entry.field}|${entry.issue}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(entry);
      perField.set(field, (perField.get(field) ?? 0) + 1);
    }
  }
  // A nullable field that failed its real type also failed the `null` branch; that says nothing.
  return out.filter((d) => d.issue !== 'must be null' || perField.get(d.field) === 1);
}

export function toApiError(err: FastifyError | Error): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (e.validation) return invalidRequest(validationIssues(e.validation, e.validationContext));
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_BAD_URL':
      return new ApiError(
        'INVALID_REQUEST',
        'The URL is not valid: a part of it is not percent-encoded UTF-8.',
        {
          details: [{ field: 'path', issue: 'is not valid percent-encoded UTF-8' }],
        },
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('INVALID_REQUEST', 'A path parameter is too long.', {
        details: [{ field: 'path', issue: 'has a parameter longer than any id' }],
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('INVALID_REQUEST', 'The body is not valid JSON.', {
        details: [{ field: 'body', issue: 'is not valid JSON' }],
      });
  }
  if (databaseUnreachable(e)) {
    return new ApiError('SERVICE_UNAVAILABLE', undefined, { headers: { 'retry-after': '5' } });
  }
  const status = e.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code: ErrorCode =
      status === 404
        ? 'RESOURCE_NOT_FOUND'
        : status === 413
          ? 'PAYLOAD_TOO_LARGE'
          : status === 415
            ? 'UNSUPPORTED_MEDIA_TYPE'
            : 'INVALID_REQUEST';
    return new ApiError(code, code === 'INVALID_REQUEST' ? e.message : undefined);
  }
  return new ApiError('INTERNAL_ERROR');
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError, docsBase: string) {
  return reply
    .status(error.status)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send({
      error: {
        code: error.code,
        message: error.message,
        docs: `${docsBase}/docs/errors#${error.code}`,
        ...(error.details === undefined ? {} : { details: error.details }),
        ...(error.detailsOmitted === undefined ? {} : { detailsOmitted: error.detailsOmitted }),
        requestId: request.id,
      },
    });
}

/**
 * A body that could not be read (too large, of a type no parser takes) by a route that takes no body
 * is refused as a body at all (input-guard.ts): such a route documents neither 413 nor 415.
 */
function bodyNotTaken(request: FastifyRequest, err: FastifyError): ApiError | null {
  if (err.code !== 'FST_ERR_CTP_BODY_TOO_LARGE' && err.code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return null;
  return takesBody(request) ? null : noBody();
}

export function installErrorHandling(
  app: FastifyInstance,
  docsBase: string,
  hints: RouteHints | null = null,
): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiError = bodyNotTaken(request, err) ?? toApiError(err);
    if (apiError.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: apiError.code }, apiError.message);
    return sendError(request, reply, apiError, docsBase);
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, routeMiss(request, hints), docsBase));
}

// No route answered: a path that exists under other methods is a 405 listing them (OPTIONS too:
// nothing here answers it, and the Allow header is what it would have told); a path that exists
// under the API prefix says so.
function routeMiss(request: FastifyRequest, hints: RouteHints | null): ApiError {
  const path = request.url.split('?')[0];
  const allowed = hints?.allowed(path) ?? [];
  if (allowed.length > 0) {
    return new ApiError(
      'METHOD_NOT_ALLOWED',
      `${path} does not take ${request.method}; it takes ${allowed.join(', ')}.`,
      { headers: { allow: allowed.join(', ') } },
    );
  }
  const meant = hints?.suggestion(path);
  return new ApiError(
    'RESOURCE_NOT_FOUND',
    meant
      ? `No route ${request.method} ${path}: the API is under /api/v1/public, so it is ${request.method} ${meant}.`
      : `No route ${request.method} ${path}.`,
  );
}
