// When a failed delivery is tried again (docs/decisions.md § Events and webhooks): after 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h and 10 h, each with up to ±10 % jitter so that a receiver coming back is not hit
// by every queued delivery in the same second; a longer Retry-After from the receiver wins.

export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];

/** Attempts an automatic delivery gets: the first and one per retry of the schedule. */
export const AUTOMATIC_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

export const JITTER = 0.1;

/** Retry-After beyond this is treated as this: a receiver cannot park a delivery for months. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 3600;

/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600 * 1000;

/**
 * The wait before the next attempt after `attemptsMade` attempts (1 = the first failed), or null
 * when the schedule is used up.
 */
export function retryDelayMs(
  attemptsMade: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number | null {
  const base = RETRY_DELAYS_SECONDS[attemptsMade - 1];
  if (base === undefined) return null;
  const jittered = base * 1000 * (1 + JITTER * (2 * random() - 1));
  const asked = Math.min(retryAfterSeconds ?? 0, MAX_RETRY_AFTER_SECONDS) * 1000;
  return Math.round(Math.max(jittered, asked));
}
