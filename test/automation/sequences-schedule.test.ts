// When a sequence's steps are due (sequences/schedule.ts, pure): a delay of PT0S is at once (from
// the enrollment for the first step, from the step before for the others), as is an omitted one,
// which is stored as PT0S; a zero delay still waits for the send window.
import { describe, expect, it } from 'vitest';
import { durationProblem, type SendWindow } from '../../src/modules/automation/time.ts';
import type { Definition, Step } from '../../src/modules/sequences/repo.ts';
import { dueAt, nextRunAt, verdict } from '../../src/modules/sequences/schedule.ts';

const contact = { attributes: {}, country: 'US' };
const definition = (sendWindow: Definition['sendWindow'] = null): Definition => ({
  steps: [],
  enrollment: { reenroll: 'never' },
  exit: { onReply: true },
  sendWindow,
});
const step = (after: string): Step => ({
  id: 's',
  delay: { after },
  message: { type: 'text', text: 'x' },
});

describe('a zero delay', () => {
  const enrolledAt = new Date('2026-11-25T15:00:00Z'); // a Wednesday, 10:00 in New York

  it('is due at once: at the enrollment, or right after the step before', () => {
    expect(dueAt(step('PT0S'), enrolledAt, contact, definition())).toEqual(enrolledAt);
    expect(dueAt(step('P0D'), enrolledAt, contact, definition())).toEqual(enrolledAt);
    expect(nextRunAt(step('PT0S'), enrolledAt, contact, definition())).toEqual(enrolledAt);
    expect(verdict(step('PT0S'), enrolledAt, enrolledAt, contact, definition())).toEqual({ kind: 'send' });
  });

  it('still waits for the send window', () => {
    const window: SendWindow = {
      timezone: 'contact',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      from: '12:00',
      until: '18:00',
    };
    expect(nextRunAt(step('PT0S'), enrolledAt, contact, definition(window)).toISOString()).toBe(
      '2026-11-25T17:00:00.000Z',
    );
  });

  it('is a delay a step may have; negative and malformed ones are still refused', () => {
    const asStep = { min: 'zero' } as const;
    expect(durationProblem('PT0S', undefined, asStep)).toBeNull();
    expect(durationProblem('P0D', undefined, asStep)).toBeNull();
    expect(durationProblem('-PT1H', undefined, asStep)).toBe('must not be negative');
    expect(durationProblem('PT-1H', undefined, asStep)).toBe('must not be negative');
    expect(durationProblem('soon', undefined, asStep)).toContain('not an ISO-8601 duration');
    expect(durationProblem('P1M', undefined, asStep)).toContain('no fixed length');
    expect(durationProblem('P400D', undefined, asStep)).toContain('at most');
    // Elsewhere (a journey's wait, a timed trigger) a duration is still longer than zero.
    expect(durationProblem('PT0S')).toBe('must be longer than zero');
  });
});
