// Per-second rate limits (a sliding log, exact over any one-second span: in this process, or in
// Redis when several processes share one budget; sliding-log.ts), the console's sign-in failure
// windows (rate-limiter-flexible), and the monthly call quota (counted exactly in the database).
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sql } from './db.ts';
import { MemoryLog, REDIS_LOG, SPAN_MS } from './sliding-log.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** How many more requests would be admitted right now. */
  remaining: number;
  /**
   * Milliseconds until the oldest request counted in the last second stops counting, so that one
   * more place is free (after a refusal: when the next request will be admitted). 1 to 1000.
   */
  resetInMs: number;
}

type Limiter = RateLimiterMemory | RateLimiterRedis;

interface RateLogCommand {
  tidingsRateLog(key: string, limit: number, now: string): Promise<[number, number, number]>;
}

export interface RateLimitsOptions {
  /**
   * Milliseconds on a clock that never steps back, for tests. When given, Redis is told the time
   * too; otherwise Redis uses its own clock (one clock for every process).
   */
  clock?: () => number;
}

export class RateLimits {
  readonly #redis: (Redis & RateLogCommand) | null;
  readonly #clock: () => number;
  readonly #callerClock: boolean;
  // This process's logs: the only ones without Redis, and the fallback while Redis is unreachable
  // (each process then holds the limit on its own rather than refusing every request).
  readonly #memory = new MemoryLog();

  constructor(redis: Redis | null, options: RateLimitsOptions = {}) {
    this.#clock = options.clock ?? (() => performance.now());
    this.#callerClock = options.clock !== undefined;
    if (redis && !('tidingsRateLog' in redis)) {
      redis.defineCommand('tidingsRateLog', { numberOfKeys: 1, lua: REDIS_LOG });
    }
    this.#redis = redis as (Redis & RateLogCommand) | null;
  }

  /**
   * Takes one request from `key`'s budget of `perSecond`: admitted only when fewer than
   * `perSecond` were admitted in the last second. Answers at once (no promise) in this process.
   */
  consume(key: string, perSecond: number): RateDecision | Promise<RateDecision> {
    // Redis is always asked when there is one: the server's client has no offline queue, so while
    // Redis is unreachable the call fails at once and this process's own log answers instead.
    const redis = this.#redis;
    if (redis) return this.#consumeRedis(redis, key, perSecond);
    return this.#consumeMemory(key, perSecond);
  }

  /** Keys with a log in this process (idle ones are dropped). */
  get trackedKeys(): number {
    return this.#memory.keys;
  }

  #consumeMemory(key: string, perSecond: number): RateDecision {
    const d = this.#memory.take(key, perSecond, this.#clock());
    return decision(d.allowed, perSecond, d.count, d.freeInMs);
  }

  async #consumeRedis(redis: Redis & RateLogCommand, key: string, perSecond: number): Promise<RateDecision> {
    const now = this.#callerClock ? String(Math.floor(this.#clock())) : '';
    try {
      const [admitted, count, freeInMs] = await redis.tidingsRateLog(`tidings:rl:${key}`, perSecond, now);
      return decision(admitted === 1, perSecond, count, freeInMs);
    } catch {
      return this.#consumeMemory(key, perSecond);
    }
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
}

function decision(allowed: boolean, limit: number, count: number, freeInMs: number): RateDecision {
  const resetInMs = Math.min(SPAN_MS, Math.max(1, freeInMs));
  return { allowed, limit, remaining: Math.max(0, limit - count), resetInMs };
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
