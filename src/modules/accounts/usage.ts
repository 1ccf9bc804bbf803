// API call usage: the month's count and daily counts for reports, as written plus what this process
// has counted and not yet written (kernel/access/usage-meter.ts counts each call as it is admitted).

import type { UsageMeter } from '../../kernel/access/usage-meter.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { invalid } from '../../kernel/http/errors.ts';

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
  meter: UsageMeter,
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
  const calls = await meter.read(async (unwritten) => {
    const { rows } = await sql.query<{ day: string; calls: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, calls FROM api_usage_daily
        WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date`,
      [accountId, from, to],
    );
    const byDay = new Map(rows.map((r) => [r.day, r.calls]));
    for (const [day, more] of unwritten(accountId)) {
      if (day >= from && day <= to) byDay.set(day, (byDay.get(day) ?? 0) + more);
    }
    return byDay;
  });
  const days = [...calls].sort(([a], [b]) => (a < b ? -1 : 1)).map(([date, n]) => ({ date, calls: n }));
  return { from, to, totalCalls: days.reduce((sum, d) => sum + d.calls, 0), days };
}
