// How fast a campaign may send this second (docs/messaging.md § Campaigns § Pacing): pure, so the
// rules are stated and tested apart from the sender's SQL.
//   - At most `messagesPerSecond` (unset: no limit of its own), taken as per-second slots
//     (rate_slots), so no number of lanes and processes can exceed it.
//   - After a throttling answer (WhatsApp's 130429 and its kin) the campaign is held to half what it
//     was doing (`backoff_rate`); each BACKOFF_RECOVERY_MS without another, the hold doubles, and it
//     is lifted once it reaches the set rate. Many throttled messages of one second halve it once.
//   - The channel's throughput (per account, every campaign together) and the messaging limit tier
//     (unique recipients a day) are the sender's, taken from rate_slots and the recipients.
import { MAX_MESSAGES_PER_SECOND } from './schemas.ts';

export const BACKOFF_RECOVERY_MS = 10_000;

export interface PaceState {
  messages_per_second: number | null;
  backoff_rate: number | null;
  backoff_at: Date | null;
}

/** The set rate: what the campaign may reach with no throttling (unset: no limit of its own). */
export const setRate = (c: PaceState) => c.messages_per_second ?? Number.POSITIVE_INFINITY;

/** The rate a hold is lifted at, and halved from when nothing lower is known. */
const ceiling = (c: PaceState) => c.messages_per_second ?? MAX_MESSAGES_PER_SECOND;

/** The hold after recovery by `now`: unchanged, doubled, or lifted (null). */
export function recoveredBackoff(c: PaceState, now: Date): { rate: number | null; at: Date | null } {
  if (c.backoff_rate === null || c.backoff_at === null) return { rate: null, at: null };
  if (now.getTime() - c.backoff_at.getTime() < BACKOFF_RECOVERY_MS) {
    return { rate: c.backoff_rate, at: c.backoff_at };
  }
  const doubled = c.backoff_rate * 2;
  return doubled >= ceiling(c) ? { rate: null, at: null } : { rate: doubled, at: now };
}

/**
 * The hold after a throttling answer at `now`: half of what the campaign was allowed (its hold, or
 * its set rate, within the channel's throughput), at least 1; null when it was throttled less than
 * a second ago (already halved for that second).
 */
export function throttledBackoff(c: PaceState, channelRate: number | null, now: Date): number | null {
  if (c.backoff_at !== null && now.getTime() - c.backoff_at.getTime() < 1000) return null;
  const allowed = Math.min(c.backoff_rate ?? ceiling(c), channelRate ?? Number.POSITIVE_INFINITY);
  return Math.max(1, Math.floor(allowed / 2));
}
