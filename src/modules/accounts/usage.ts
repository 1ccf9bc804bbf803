// API call usage: the month's count (what the quota is checked against) and daily counts for
// reports. Counting itself happens in kernel/limits.ts as each call is admitted.
import type { Sql } from '../../kernel/db.ts';
import { invalid } from '../../kernel/errors.ts';

export { monthCalls } from '../../kernel/limits.ts';

export interface UsageReport {
  from: string;
  to: string;
  totalCalls: number;
  days: { date: string; calls: number }[];
}

const DAY_MS = 86_400_000;

/** Daily calls between two dates (inclusive, UTC); defaults to the current month up to today. */
export async function usageBetween(
  sql: Sql,
  accountId: string,
  range: { from?: string; to?: string },
  now: Date,
): Promise<UsageReport> {
  const today = now.toISOString().slice(0, 10);
  const from = range.from ?? `${today.slice(0, 7)}-01`;
  const to = range.to ?? today;
  if (from > to) throw invalid('from', 'must not be after to');
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS > 366)
    throw invalid('to', 'must be at most 366 days after from');
  const { rows } = await sql.query<{ day: string; calls: number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, calls FROM api_usage_daily
      WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day`,
    [accountId, from, to],
  );
  const days = rows.map((r) => ({ date: r.day, calls: r.calls }));
  return { from, to, totalCalls: days.reduce((sum, d) => sum + d.calls, 0), days };
}
