// What an account's channel lets a campaign send (docs/messaging.md § Campaigns § Pacing): WhatsApp
// numbers have a throughput (Meta: 80 messages a second by default, up to 1,000 for a number
// upgraded to high throughput) and a messaging limit tier (how many unique customers a business may
// start conversations with in a rolling 24 hours), both read from Meta with the number when the
// channel is saved. The sandbox has neither.
import type { Provider } from '../../channels/types.ts';

/** Meta's default throughput of a number, messages per second. */
export const DEFAULT_THROUGHPUT = 80;

const TIERS: Record<string, number | null> = {
  TIER_50: 50,
  TIER_250: 250,
  TIER_1K: 1000,
  TIER_2K: 2000,
  TIER_10K: 10_000,
  TIER_100K: 100_000,
  TIER_UNLIMITED: null,
};

export interface ChannelLimits {
  /** Messages per second for the account, every campaign together; null: none. */
  perSecond: number | null;
  /** Unique recipients in a rolling 24 hours; null: none (or not known). */
  uniquePerDay: number | null;
}

export function channelLimits(
  provider: Provider,
  whatsapp: { throughputPerSecond?: number | null; messagingLimitTier?: string | null } | null,
): ChannelLimits {
  if (provider === 'sandbox') return { perSecond: null, uniquePerDay: null };
  return {
    perSecond: whatsapp?.throughputPerSecond ?? DEFAULT_THROUGHPUT,
    uniquePerDay: TIERS[whatsapp?.messagingLimitTier ?? ''] ?? null,
  };
}
