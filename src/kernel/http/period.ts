// A report's period from its query string (GET /voice/usage, GET /account/pricing/adjustments):
// `from` inclusive, the start of this month (UTC) by default; `to` exclusive, now by default; 400
// when `from` is not before `to`.
import { Type } from 'typebox';
import { invalid } from './errors.ts';

export const PeriodQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'From (inclusive); the start of this month (UTC) by default.',
      }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date-time', description: 'Until (exclusive); now by default.' }),
    ),
  },
  { additionalProperties: false },
);

export function periodOf(query: { from?: string; to?: string }, now: Date): { from: Date; to: Date } {
  const from = query.from
    ? new Date(query.from)
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = query.to ? new Date(query.to) : now;
  if (!(from < to)) throw invalid('from', 'must be before to');
  return { from, to };
}
