// Property: on a controlled clock, for any arrival schedule spread over many windows, the
// in-process per-second limiter (RateLimits in src/kernel/limits.ts, the one a single process and
// PGlite use) admits at most its limit in every window, refuses only when its window is full, and
// reports each window truthfully (resetInMs: when the window ends). Windows are one second each,
// never overlap, and a window opens with the first request after the last one ended. Real time
// cannot place requests in windows exactly (properties-rate-limit.test.ts checks one window at a
// time through HTTP); a fake clock can, boundaries included, so the schedules here cross them.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RateDecision, RateLimits } from '../src/kernel/limits.ts';

// Each request comes some milliseconds after the previous one (0: at the same instant). Gaps that land on a window's last millisecond, its end and just after it, as well as anywhere.
const gapArb = fc.oneof(
  fc.constantFrom(0, 1, 999, 1000, 1001),
  fc.integer({ min: 0, max: 400 }),
  fc.integer({ min: 0, max: 2500 }),
);
const scheduleArb = fc.record({
  perSecond: fc.constantFrom(1, 2, 3, 5, 10),
  arrivals: fc.array(fc.record({ gapMs: gapArb, key: fc.constantFrom('account:a', 'account:b') }), {
    minLength: 1,
    maxLength: 60,
  }),
});

interface Seen {
  at: number;
  decision: RateDecision;
}

/** Checks one key's decisions, in the order they were made. */
function expectWindowsHold(seen: Seen[], perSecond: number): void {
  let windowEnd: number | null = null;
  let admitted = 0;
  let requests = 0;
  for (const { at, decision } of seen) {
    expect(decision.limit).toBe(perSecond);
    expect(decision.resetInMs).toBeGreaterThan(0);
    expect(decision.resetInMs).toBeLessThanOrEqual(1000);
    const end = at + decision.resetInMs;
    if (end !== windowEnd) {
      // A new window: only once the last one ended, and it opens with this request.
      if (windowEnd !== null) expect(at).toBeGreaterThanOrEqual(windowEnd);
      expect(decision.resetInMs).toBe(1000);
      windowEnd = end;
      admitted = 0;
      requests = 0;
    } else {
      // The same window is still open: the request came before its end.
      expect(at).toBeLessThan(end);
    }
    requests++;
    // Admitted while the window has budget left, refused once it has none.
    expect(decision.allowed).toBe(requests <= perSecond);
    if (decision.allowed) admitted++;
    expect(admitted).toBeLessThanOrEqual(perSecond);
    expect(decision.remaining).toBe(perSecond - admitted);
  }
}

describe('the in-process per-second limiter on a controlled clock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: Date.UTC(2026, 0, 1) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('admits at most the limit in every window, and refuses only a full window', async () => {
    await fc.assert(
      fc.asyncProperty(scheduleArb, async ({ perSecond, arrivals }) => {
        const limits = new RateLimits(null);
        const byKey = new Map<string, Seen[]>();
        for (const { gapMs, key } of arrivals) {
          // Moving the clock also runs the limiter's own timers (it forgets a window when it ends).
          vi.advanceTimersByTime(gapMs);
          const decision = await limits.consume(key, perSecond);
          byKey.set(key, [...(byKey.get(key) ?? []), { at: Date.now(), decision }]);
        }
        for (const seen of byKey.values()) expectWindowsHold(seen, perSecond);
      }),
      { numRuns: 1000 },
    );
  });
});
