// Per-second rate limits (a sliding log, exact over any one-second span: in this process, or in
// Redis when several processes share one budget; sliding-log.ts), the console's sign-in failure
// attempt windows (rate-limiter-flexible). The monthly call quota is counted by usage-meter.ts.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Maybe } from '../async/maybe.ts';
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
  consume(key: string, perSecond: number): Maybe<RateDecision> {
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

  // Counters of attempts over a longer window (the console's sign-ins), by name.
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
   * Takes one attempt from `key`'s window of `points` (the window opens at its first attempt and
   * lasts `seconds`): 0 when it is admitted, else the milliseconds until the window ends. Taken
   * before the work it limits, in one step of the store, so attempts made at once each see the
   * others (a check before the work and a count after it let a burst through uncounted).
   */
  async take(name: string, key: string, points: number, seconds: number): Promise<number> {
    try {
      await this.#window(name, points, seconds).consume(key, 1);
      return 0;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return Math.max(1, err.msBeforeNext);
    }
  }

  /** Gives back one attempt `take` took (one that turned out not to count). */
  async giveBack(name: string, key: string, points: number, seconds: number): Promise<void> {
    const window = this.#window(name, points, seconds);
    const res = await window.reward(key, 1);
    // The window ended while the attempt was at work: the store opened a new one below zero, which
    // would be a spare attempt in it; back to zero.
    if (res.consumedPoints < 0) await window.penalty(key, -res.consumedPoints);
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

/** Whole seconds until the next calendar month (UTC) begins, when a used-up quota renews. */
export function secondsUntilNextPeriod(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
