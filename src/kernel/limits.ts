// Per-second rate limits (rate-limiter-flexible: in-process counters, or Redis when several processes
// share one budget). The monthly call quota is counted by usage-meter.ts.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

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

/** Whole seconds until the next calendar month (UTC) begins, when a used-up quota renews. */
export function secondsUntilNextPeriod(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}
