// SLA due times in business hours, pure (automation's addOpenMinutes, the sla module's judge): open
// time counted only inside the ranges, across a weekend, a holiday and a DST change; hours that never
// hold the time give no due time; a target met in time, missed, or closed without a reply.
import { describe, expect, it } from 'vitest';
import { addOpenMinutes } from '../../src/modules/automation/index.ts';
import { judge, nextDueAt } from '../../src/modules/sla/due.ts';

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;
const HOURS = {
  timezone: 'Europe/Berlin',
  weekly: WEEKDAYS.map((day) => ({ day, from: '09:00', until: '17:00' })),
  holidays: ['2026-12-25'],
};
const at = (iso: string) => new Date(iso);

describe('addOpenMinutes', () => {
  it('counts inside the day, then on from the next opening', () => {
    // Monday 2 November 2026, 10:00 in Berlin (09:00 UTC).
    expect(addOpenMinutes(HOURS, at('2026-11-02T09:00:00Z'), 60)).toEqual(at('2026-11-02T10:00:00Z'));
    // Before opening: the clock starts at 9:00.
    expect(addOpenMinutes(HOURS, at('2026-11-02T05:00:00Z'), 30)).toEqual(at('2026-11-02T08:30:00Z'));
    // Friday 16:30: half an hour, the weekend, then Monday from 9:00.
    expect(addOpenMinutes(HOURS, at('2026-11-06T15:30:00Z'), 60)).toEqual(at('2026-11-09T08:30:00Z'));
    // A whole working day is 480 minutes: ending exactly at the close.
    expect(addOpenMinutes(HOURS, at('2026-11-02T08:00:00Z'), 480)).toEqual(at('2026-11-02T16:00:00Z'));
  });

  it('skips holidays and keeps the wall clock across a DST change', () => {
    // Thursday 24 December, 16:00 in Berlin: an hour left, Christmas closed, Saturday and Sunday too.
    expect(addOpenMinutes(HOURS, at('2026-12-24T15:00:00Z'), 90)).toEqual(at('2026-12-28T08:30:00Z'));
    // Friday 23 October 2026, 16:00 CEST (14:00 UTC); Monday 26 October is CET: 9:30 is 08:30 UTC.
    expect(addOpenMinutes(HOURS, at('2026-10-23T14:00:00Z'), 90)).toEqual(at('2026-10-26T08:30:00Z'));
  });

  it('gives no time when the hours never hold it', () => {
    expect(addOpenMinutes({ ...HOURS, weekly: [] }, at('2026-11-02T09:00:00Z'), 1)).toBeNull();
  });
});

describe('judge', () => {
  const due = at('2026-11-02T10:00:00Z');
  const base = {
    labels: [],
    team_id: null,
    status: 'open' as const,
    closed_at: null,
    first_response_at: null,
    sla_first_response_due_at: due,
    sla_resolution_due_at: at('2026-11-02T12:00:00Z'),
    sla_first_response_breached_at: null,
    sla_resolution_breached_at: null,
  };

  it('finds a target missed once its time has passed, and looks next at the one after', () => {
    expect(judge(base, at('2026-11-02T09:59:00Z'))).toEqual({ missed: [], nextDueAt: due });
    expect(judge(base, at('2026-11-02T10:00:00Z'))).toEqual({
      missed: ['first_response'],
      nextDueAt: at('2026-11-02T12:00:00Z'),
    });
    // Told already: not again.
    const told = { ...base, sla_first_response_breached_at: due };
    expect(judge(told, at('2026-11-02T11:00:00Z')).missed).toEqual([]);
  });

  it('counts a reply or a close in time as met, a late one as missed', () => {
    const replied = { ...base, first_response_at: at('2026-11-02T09:30:00Z') };
    expect(nextDueAt(replied)).toEqual(at('2026-11-02T12:00:00Z'));
    expect(judge(replied, at('2026-11-02T10:30:00Z')).missed).toEqual([]);
    const late = { ...base, first_response_at: at('2026-11-02T10:05:00Z') };
    expect(judge(late, at('2026-11-02T10:06:00Z')).missed).toEqual(['first_response']);
    // Closed without a reply before the first due time: both met.
    const closed = { ...base, status: 'closed' as const, closed_at: at('2026-11-02T09:45:00Z') };
    expect(nextDueAt(closed)).toBeNull();
    const closedLate = { ...base, status: 'closed' as const, closed_at: at('2026-11-02T12:30:00Z') };
    expect(judge(closedLate, at('2026-11-02T13:00:00Z')).missed).toEqual(['first_response', 'resolution']);
  });
});
