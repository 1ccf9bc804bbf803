// What every answer to a fuzzed request must be: never a 5xx; a status the operation documents;
// for a 4xx, the error body of the document's own ErrorBody schema, with a code the document lists
// for that status; and, for a request built to be invalid, a refusal.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import type { FuzzRequest } from './fuzz-requests.ts';
import type { JsonSchema, Operation } from './openapi-operations.ts';

export type ErrorBodyCheck = (body: unknown) => string | null;

/** Validates error bodies against the document's ErrorBody component. */
export function errorBodyCheck(errorBody: JsonSchema): ErrorBodyCheck {
  const ajv = addFormats.default(new Ajv({ allErrors: true, strict: false }));
  const validate = ajv.compile({ ...errorBody, $id: undefined });
  return (body) => (validate(body) ? null : ajv.errorsText(validate.errors));
}

function jsonOf(res: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(res.body);
  } catch {
    return undefined;
  }
}

export function problemsOf(
  op: Operation,
  req: FuzzRequest,
  res: LightMyRequestResponse,
  checkErrorBody: ErrorBodyCheck,
): string[] {
  const status = res.statusCode;
  const problems: string[] = [];
  if (status >= 500) problems.push(`answered ${status}: ${res.body.slice(0, 300)}`);
  if (!(String(status) in op.responses))
    problems.push(`answered ${status}, which the document does not list`);
  if (req.mustRefuse && status < 400) problems.push(`accepted an invalid request with ${status}`);
  if (status >= 400) {
    const body = jsonOf(res) as { error?: { code?: string; requestId?: string; docs?: string } } | undefined;
    const shape = checkErrorBody(body);
    if (shape) problems.push(`error body is not an ErrorBody (${shape}): ${res.body.slice(0, 300)}`);
    const code = body?.error?.code ?? '';
    const listed = op.responses[String(status)] ?? [];
    if (status < 500 && !listed.includes(code)) {
      problems.push(
        `code ${code} is not documented for ${status} (documented: ${listed.join(', ') || 'none'})`,
      );
    }
    if (body?.error?.requestId !== res.headers['x-request-id'])
      problems.push('requestId is not the X-Request-Id');
  }
  return problems;
}
