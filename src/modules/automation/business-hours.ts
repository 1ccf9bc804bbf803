// An account's business hours, pure: when it is open (read in its zone), and what is wrong with a
// definition. `weekly` holds ranges `{day: mon … sun, from, until}` (local "HH:MM", from inclusive,
// until exclusive, "24:00" for midnight at the end of the day; several a day, an overnight shift as
// two); a date of `holidays` ("YYYY-MM-DD", in the zone) is closed all day. Read by the rule
// condition `time.businessHours` (context.ts), by the away message (modules/business-hours) and by
// SLA due times counted in business hours (modules/sla: addOpenMinutes).
import { DateTime } from 'luxon';
import type { Problem } from './conditions.ts';
import { isZone, WEEKDAYS, type Weekday } from './time.ts';

export interface OpeningRange {
  day: Weekday;
  from: string;
  until: string;
}

export interface BusinessHours {
  timezone: string;
  weekly: OpeningRange[];
  holidays: string[];
}

export const MAX_RANGES = 50;
export const MAX_HOLIDAYS = 400;

const FROM = /^([01]\d|2[0-3]):[0-5]\d$/;
const UNTIL = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** Whether the business is open at `at`. */
export function isOpenAt(hours: BusinessHours, at: Date): boolean {
  const local = DateTime.fromJSDate(at, { zone: hours.timezone });
  if (hours.holidays.includes(local.toISODate()!)) return false;
  const day = WEEKDAYS[local.weekday - 1]!;
  const minute = local.hour * 60 + local.minute;
  return hours.weekly.some(
    (r) => r.day === day && minutesOf(r.from) <= minute && minute < minutesOf(r.until),
  );
}

/** A local "HH:MM" of a day as a wall clock reads it (not minutes after midnight: DST moves those). */
function localMoment(day: DateTime, hhmm: string): number {
  if (hhmm === '24:00') return day.plus({ days: 1 }).toMillis();
  return day.set({ hour: Number(hhmm.slice(0, 2)), minute: Number(hhmm.slice(3)) }).toMillis();
}

/** How far ahead addOpenMinutes looks for the open time it needs (then: never). */
export const OPEN_SEARCH_DAYS = 3 * 366;

/**
 * The moment `minutes` of open time after `from` (open time is counted only inside the ranges, in
 * the zone's local time, across DST changes); null when the hours do not hold that much within
 * OPEN_SEARCH_DAYS (no ranges at all, or a year of holidays). Work: at most a range per day looked
 * at, whatever `minutes`.
 */
export function addOpenMinutes(hours: BusinessHours, from: Date, minutes: number): Date | null {
  let left = minutes * 60_000;
  const start = from.getTime();
  let day = DateTime.fromJSDate(from, { zone: hours.timezone }).startOf('day');
  const byDay = new Map<Weekday, OpeningRange[]>();
  for (const r of hours.weekly) byDay.set(r.day, [...(byDay.get(r.day) ?? []), r]);
  for (const list of byDay.values()) list.sort((a, b) => minutesOf(a.from) - minutesOf(b.from));
  const holidays = new Set(hours.holidays);
  for (let i = 0; i < OPEN_SEARCH_DAYS; i++, day = day.plus({ days: 1 })) {
    if (holidays.has(day.toISODate()!)) continue;
    for (const r of byDay.get(WEEKDAYS[day.weekday - 1]!) ?? []) {
      const opens = Math.max(start, localMoment(day, r.from));
      const closes = localMoment(day, r.until);
      if (closes <= opens) continue;
      if (closes - opens >= left) return new Date(opens + left);
      left -= closes - opens;
    }
  }
  return null;
}

/** Every fault of a definition, by field (the shapes are the schema's). */
export function businessHoursProblems(hours: BusinessHours): Problem[] {
  const problems: Problem[] = [];
  if (!isZone(hours.timezone))
    problems.push({ field: 'timezone', issue: 'must be an IANA time zone such as Europe/Berlin' });
  hours.weekly.forEach((r, i) => {
    if (!FROM.test(r.from))
      problems.push({ field: `weekly[${i}].from`, issue: 'must be a local time "HH:MM"' });
    if (!UNTIL.test(r.until))
      problems.push({ field: `weekly[${i}].until`, issue: 'must be a local time "HH:MM" (or "24:00")' });
    else if (FROM.test(r.from) && minutesOf(r.until) <= minutesOf(r.from))
      problems.push({ field: `weekly[${i}].until`, issue: 'must be later in the day than from' });
  });
  hours.holidays.forEach((d, i) => {
    if (!DATE.test(d) || !DateTime.fromISO(d).isValid)
      problems.push({ field: `holidays[${i}]`, issue: 'must be a date "YYYY-MM-DD"' });
  });
  return problems;
}
