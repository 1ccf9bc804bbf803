// Schemas shared by every module: the error body, money, timestamps, and the error responses each
// route documents. Every route gets the errors its access level and body can produce added by the
// onRoute hook in openapi.ts; a route lists only the errors of its own logic.
import { type TSchema, Type } from 'typebox';
import { ERROR_CATALOGUE, type ErrorCode, MAX_DETAILS } from './errors.ts';
import { FULLY_CHECKED_VALUES } from './validator.ts';

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({
        enum: Object.keys(ERROR_CATALOGUE),
        description: 'Stable, machine-readable code.',
      }),
      message: Type.String({ description: 'What went wrong, for humans.' }),
      docs: Type.String({ format: 'uri', description: 'The documentation of this code.' }),
      details: Type.Optional(
        Type.Array(
          Type.Object({ field: Type.String(), issue: Type.String() }, { additionalProperties: true }),
          {
            maxItems: MAX_DETAILS,
            description: `For validation failures: each failing field, at most ${MAX_DETAILS} (\`detailsOmitted\` counts the rest). A body of more than ${FULLY_CHECKED_VALUES.toLocaleString('en-US')} JSON values is checked up to its first fault, which is then the one listed.`,
          },
        ),
      ),
      detailsOmitted: Type.Optional(
        Type.Integer({
          minimum: 1,
          description: `How many more faults were found than \`details\` lists; absent when it lists them all.`,
        }),
      ),
      requestId: Type.String({ description: 'Quote it when asking for support.' }),
    }),
  },
  { $id: 'ErrorBody', title: 'ErrorBody' },
);

export const ErrorRef = Type.Unsafe<unknown>({ $ref: 'ErrorBody#' });

export const MoneySchema = Type.Object(
  {
    amount: Type.String({
      pattern: '^-?\\d+\\.\\d{4,6}$',
      description: 'Exact decimal, e.g. "0.0250".',
      examples: ['0.0250'],
    }),
    currency: Type.String({ minLength: 3, maxLength: 3, examples: ['USD'] }),
  },
  { description: 'An exact amount of money.' },
);

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601, UTC.' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export function nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/**
 * Response schemas for the given error codes, grouped by status, each described by its codes (the
 * first line, which tests read) and then any note on one of them.
 */
export function errorResponses(
  codes: ErrorCode[],
  notes: Partial<Record<ErrorCode, string>> = {},
): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) {
    const unique = [...new Set(list)];
    const said = unique.flatMap((code) => (notes[code] ? [notes[code]] : []));
    out[status] = { ...ErrorRef, description: [unique.join(', '), ...said].join('\n\n') };
  }
  return out;
}
