// Per-second rate limits (rate-limiter-flexible: in-process counters, or Redis when several processes
// share one budget) and the monthly call quota (counted exactly in the database).
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sql } from './db.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the current one-second window ends. */
  resetInMs: number;
}

type Limiter = RateLimiterMemory | RateLimiterRedis;

export class RateLimits {
  readonly #redis: Redis | null;
  readonly #limiters = new Map<number, Limiter>();

  constructor(redis: Redis | null) {
    this.#redis = redis;
  }

  // One limiter per budget size: a limiter's size is fixed, and plans have a handful of sizes.
  #limiter(perSecond: number): Limiter {
    let limiter = this.#limiters.get(perSecond);
    if (!limiter) {
      const options = { points: perSecond, duration: 1, keyPrefix: `tidings:rl:${perSecond}` };
      limiter = this.#redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.#redis,
            // If Redis is unreachable each process falls back to its own counters rather than
            // refusing every request.
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.#limiters.set(perSecond, limiter);
    }
    return limiter;
  }

  // Counters of failures over a longer window (the console's sign-in attempts), by name.
  readonly #windows = new Map<string, Limiter>();

  #window(name: string, points: number, seconds: number): Limiter {
    const id = `${name}:${points}:${seconds}`;
    let limiter = this.#windows.get(id);
    if (!limiter) {
      const options = { points, duration: seconds, keyPrefix: `tidings:rlw:${id}` };
      limiter = this.#redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: this.#redis,
            insuranceLimiter: new RateLimiterMemory(options),
          })
        : new RateLimiterMemory(options);
      this.#windows.set(id, limiter);
    }
    return limiter;
  }

  /**
   * Milliseconds until `key` may try again when its window already holds `points` failures, or 0.
   * The window opens at the first failure and lasts `seconds`.
   */
  async blockedFor(name: string, key: string, points: number, seconds: number): Promise<number> {
    const res = await this.#window(name, points, seconds).get(key);
    return res && res.consumedPoints >= points ? Math.max(1, res.msBeforeNext) : 0;
  }

  /** Counts one failure of `key` in its window. */
  async fail(name: string, key: string, points: number, seconds: number): Promise<void> {
    await this.#window(name, points, seconds)
      .consume(key, 1)
      .catch((err) => {
        if (!(err instanceof RateLimiterRes)) throw err;
      });
  }

  /** Forgets `key`'s failures. */
  async clear(name: string, key: string, points: number, seconds: number): Promise<void> {
    await this.#window(name, points, seconds).delete(key);
  }

  /** Takes one request from `key`'s budget of `perSecond`; never admits more than the budget. */
  async consume(key: string, perSecond: number): Promise<RateDecision> {
    try {
      const res = await this.#limiter(perSecond).consume(key, 1);
      return { allowed: true, limit: perSecond, remaining: res.remainingPoints, resetInMs: res.msBeforeNext };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        return { allowed: false, limit: perSecond, remaining: 0, resetInMs: err.msBeforeNext };
      }
      throw err;
    }
  }
}

export interface QuotaDecision {
  allowed: boolean;
  limit: number | null;
  used: number;
}

/** The calendar month (UTC) a call is counted in. */
export function usagePeriod(now: Date): string {
  return now.toISOString().slice(0, 7);
}

/** Whole seconds until the next calendar month (UTC) begins, when a used-up quota renews. */
export function secondsUntilNextPeriod(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** The calls counted in the account's current month. */
export async function monthCalls(sql: Sql, accountId: string, now: Date): Promise<number> {
  const { rows } = await sql.query<{ calls: number }>(
    'SELECT calls FROM api_usage_monthly WHERE account_id = $1 AND period = $2',
    [accountId, usagePeriod(now)],
  );
  return rows[0]?.calls ?? 0;
}

/**
 * The CTEs that count one call of `account` in `period` (YYYY-MM) and on `day` (YYYY-MM-DD), unless
 * that would pass `limit` (NULL: no limit): `month` answers the new count, or no row when the
 * limit refused it. Given as parameter placeholders, so that a statement of its own (countCall)
 * and a send's first statement (an unlimited plan's call counted in its transaction) share them.
 */
export function usageCtes(p: {
  account: string;
  period: string;
  limit: string;
  day: string;
  when?: string;
}): string {
  return `month AS (
       INSERT INTO api_usage_monthly AS m (account_id, period, calls)
       SELECT ${p.account}, ${p.period}, 1 ${p.when ? `WHERE ${p.when}` : ''}
       ON CONFLICT (account_id, period) DO UPDATE SET calls = m.calls + 1
         WHERE ${p.limit}::bigint IS NULL OR m.calls < ${p.limit}::bigint
       RETURNING calls
     ), day AS (
       INSERT INTO api_usage_daily AS d (account_id, day, calls)
       SELECT ${p.account}, ${p.day}::date, 1 FROM month
       ON CONFLICT (account_id, day) DO UPDATE SET calls = d.calls + 1
       RETURNING 1
     )`;
}

/** The period and day parameters of usageCtes for a call at `now`. */
export function usageKeys(now: Date): { period: string; day: string } {
  return { period: usagePeriod(now), day: now.toISOString().slice(0, 10) };
}

/**
 * Counts one call against the account's month, unless that would pass `limit`. The check and the
 * count are one statement, so concurrent calls can never take the count past the limit.
 */
export async function countCall(
  sql: Sql,
  accountId: string,
  limit: number | null,
  now: Date,
): Promise<QuotaDecision> {
  const { period, day } = usageKeys(now);
  const { rows } = await sql.query<{ calls: number }>(
    `WITH ${usageCtes({ account: '$1', period: '$2', limit: '$3', day: '$4' })}
     SELECT calls FROM month`,
    [accountId, period, limit, day],
  );
  if (rows[0]) return { allowed: true, limit, used: rows[0].calls };
  return { allowed: false, limit, used: limit ?? 0 };
}
