// The pure rules of campaigns: the status machine both kinds share (campaign-shared/states.ts) and
// the pace's throttling hold (campaigns/pace.ts): halved once a second at most, within the
// channel's throughput, doubled back each 10 s without another, lifted at the set rate.
import { describe, expect, it } from 'vitest';
import { allows, assertAllowed, goingStatus } from '../../src/modules/campaign-shared/states.ts';
import {
  BACKOFF_RECOVERY_MS,
  recoveredBackoff,
  setRate,
  throttledBackoff,
} from '../../src/modules/campaigns/pace.ts';

const at = (ms: number) => new Date(1_800_000_000_000 + ms);

describe('the campaign status machine', () => {
  it('takes each action from its states only, with a 409 naming them', () => {
    expect(allows('draft', 'start')).toBe(true);
    expect(allows('running', 'start')).toBe(false);
    expect(allows('scheduled', 'pause')).toBe(true);
    expect(allows('completed', 'cancel')).toBe(false);
    expect(allows('completed', 'delete')).toBe(true);
    expect(allows('running', 'delete')).toBe(false);
    expect(allows('running', 'estimate')).toBe(false);
    expect(() => assertAllowed('paused', 'pause')).toThrow(/cannot be paused/);
    expect(() => assertAllowed('canceled', 'cancel')).toThrow(/canceled already/);
  });

  it('starts later only while startAt is ahead', () => {
    expect(goingStatus(null, at(0))).toBe('running');
    expect(goingStatus(at(1), at(0))).toBe('scheduled');
    expect(goingStatus(at(0), at(1))).toBe('running');
  });
});

describe('the throttling hold', () => {
  const free = { messages_per_second: null, backoff_rate: null, backoff_at: null };
  const paced = { ...free, messages_per_second: 40 };

  it('halves what the campaign may do, within the channel’s throughput, once a second', () => {
    expect(setRate(free)).toBe(Number.POSITIVE_INFINITY);
    expect(throttledBackoff(paced, null, at(0))).toBe(20);
    expect(throttledBackoff(free, 80, at(0))).toBe(40);
    expect(throttledBackoff(free, null, at(0))).toBe(500);
    expect(throttledBackoff({ ...paced, backoff_rate: 3, backoff_at: at(0) }, 80, at(999))).toBeNull();
    expect(throttledBackoff({ ...paced, backoff_rate: 3, backoff_at: at(0) }, 80, at(1000))).toBe(1);
  });

  it('doubles back every 10 s without another, and is lifted at the set rate', () => {
    const held = { ...paced, backoff_rate: 10, backoff_at: at(0) };
    expect(recoveredBackoff(held, at(BACKOFF_RECOVERY_MS - 1))).toEqual({ rate: 10, at: at(0) });
    expect(recoveredBackoff(held, at(BACKOFF_RECOVERY_MS))).toEqual({
      rate: 20,
      at: at(BACKOFF_RECOVERY_MS),
    });
    expect(recoveredBackoff({ ...held, backoff_rate: 20 }, at(BACKOFF_RECOVERY_MS))).toEqual({
      rate: null,
      at: null,
    });
    expect(recoveredBackoff(free, at(0))).toEqual({ rate: null, at: null });
  });
});
