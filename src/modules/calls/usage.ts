// GET /voice/usage: what an account's calls came to over a period (by when they were made), in
// total, by status and by country, counted from the calls themselves, so it always agrees with them.
import type { Sql } from '../../kernel/database/db.ts';
import { money } from '../billing/index.ts';

interface Row {
  status: string;
  country: string | null;
  calls: number;
  answered: number;
  minutes: number;
  cost: string;
}

export async function voiceUsage(sql: Sql, accountId: string, from: Date, to: Date, currency: string) {
  const { rows } = await sql.query<Row>(
    `SELECT status, country, count(*)::int AS calls, count(answered_at)::int AS answered,
            coalesce(sum(billable_minutes), 0)::int AS minutes, coalesce(sum(charged_micros), 0)::text AS cost
       FROM calls WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
      GROUP BY status, country ORDER BY country NULLS LAST, status`,
    [accountId, from, to],
  );
  const sum = (list: Row[]) => ({
    calls: list.reduce((n, r) => n + r.calls, 0),
    answered: list.reduce((n, r) => n + r.answered, 0),
    minutes: list.reduce((n, r) => n + r.minutes, 0),
    cost: money(
      list.reduce((n, r) => n + Number(r.cost), 0),
      currency,
    ),
  });
  const byStatus: Record<string, number> = {};
  for (const r of rows) byStatus[r.status] = (byStatus[r.status] ?? 0) + r.calls;
  const countries = [...new Set(rows.map((r) => r.country))];
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    ...sum(rows),
    byStatus,
    byCountry: countries.map((country) => ({ country, ...sum(rows.filter((r) => r.country === country)) })),
  };
}
