// When and how long to wait before another attempt. Retried: 429, 502, 503, 504 and requests that
// got no answer; never another 4xx (sending it again fails again). The wait is exponential backoff
// with full jitter (a random time between 0 and base·2^attempt, capped), unless the answer says how
// long with Retry-After (seconds or an HTTP date), which is honoured up to a cap.

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export interface BackoffPolicy {
  /** The first attempt's backoff ceiling, in ms. */
  baseDelayMs: number;
  /** No backoff ceiling beyond this, in ms. */
  maxDelayMs: number;
  /** A Retry-After longer than this is cut to it, in ms. */
  maxRetryAfterMs: number;
  random: () => number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
};

/** Retry-After as milliseconds from `now`, or null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/** How long to wait before retry number `attempt` (0 for the first retry). */
export function retryDelay(attempt: number, retryAfter: string | null, policy: BackoffPolicy): number {
  const told = parseRetryAfter(retryAfter);
  if (told !== null) return Math.min(told, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(policy.random() * ceiling);
}

/** A sleep that an AbortSignal cuts short. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
