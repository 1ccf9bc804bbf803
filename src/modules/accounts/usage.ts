// API call usage: the month's count and daily counts for reports, as written plus what this process
// has counted and not yet written (kernel/usage-meter.ts counts each call as it is admitted).
import type { Sql } from '../../kernel/db.ts';
import { invalid } from '../../kernel/errors.ts';
import { type UsageMeter, usagePeriod } from '../../kernel/usage-meter.ts';
import type { AccountRow } from './repo.ts';

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

/**
 * The account's row and the month's calls written, in one read (GET /account of a plan without a
 * quota, whose count no lease carries), plus what this process has not yet written.
 */
export async function accountWithMonthCalls(
  sql: Sql,
  meter: UsageMeter,
  accountId: string,
  now: Date,
): Promise<{ row: AccountRow; monthCalls: number } | null> {
  const period = usagePeriod(now);
  return meter.read(async (unwritten) => {
    const { rows } = await sql.query<AccountRow & { month_calls: number | null }>(
      `SELECT a.*, (SELECT calls FROM api_usage_monthly WHERE account_id = a.id AND period = $2) AS month_calls
         FROM accounts a WHERE a.id = $1`,
      [accountId, period],
      { prepared: 'account_with_month_calls' },
    );
    const found = rows[0];
    if (!found) return null;
    const { month_calls, ...row } = found;
    let monthCalls = month_calls ?? 0;
    for (const [day, more] of unwritten(accountId)) if (day.startsWith(period)) monthCalls += more;
    return { row, monthCalls };
  });
}
