// The call status machine (modules/calls/transition.ts): forward only, ends final, skipped times
// filled in, Twilio's statuses mapped, and billing by the started minute.
import { describe, expect, it } from 'vitest';
import {
  billableMinutes,
  type CallState,
  fromTwilio,
  nextCallState,
} from '../../src/modules/calls/transition.ts';

const queued: CallState = {
  status: 'queued',
  initiated_at: null,
  ringing_at: null,
  answered_at: null,
  ended_at: null,
  duration_seconds: null,
};
const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 9, 0, s));

describe('call status machine', () => {
  it('moves forward through the progress events, each time the first report of it', () => {
    let call = queued;
    for (const [status, s] of [
      ['initiated', 0],
      ['ringing', 2],
      ['in_progress', 7],
    ] as const) {
      const next = nextCallState(call, { status, at: at(s) });
      expect(next.moved).toBe(true);
      call = next.call;
    }
    const ended = nextCallState(call, { status: 'completed', at: at(70), durationSeconds: 63 });
    expect(ended).toEqual({
      moved: true,
      call: {
        status: 'completed',
        initiated_at: at(0),
        ringing_at: at(2),
        answered_at: at(7),
        ended_at: at(70),
        duration_seconds: 63,
      },
    });
  });

  it('ignores a report that would move a call back, and anything after its end', () => {
    const ringing = nextCallState(queued, { status: 'in_progress', at: at(5) }).call;
    expect(ringing).toMatchObject({ initiated_at: at(5), ringing_at: at(5), answered_at: at(5) });
    expect(nextCallState(ringing, { status: 'ringing', at: at(6) })).toEqual({ call: ringing, moved: false });
    const busy = nextCallState(queued, { status: 'busy', at: at(9) }).call;
    expect(busy).toMatchObject({ status: 'busy', answered_at: null, ended_at: at(9), duration_seconds: 0 });
    for (const status of ['completed', 'in_progress', 'canceled'] as const) {
      expect(nextCallState(busy, { status, at: at(20) })).toEqual({ call: busy, moved: false });
    }
  });

  it('reads Twilio’s statuses, and bills each started minute', () => {
    expect(
      ['queued', 'initiated', 'ringing', 'in-progress', 'no-answer', 'completed'].map((s) =>
        fromTwilio(s as never),
      ),
    ).toEqual(['initiated', 'initiated', 'ringing', 'in_progress', 'no_answer', 'completed']);
    expect([0, 1, 60, 61, 125].map(billableMinutes)).toEqual([0, 1, 1, 2, 3]);
  });
});
