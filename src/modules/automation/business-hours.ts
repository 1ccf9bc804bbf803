// An account's business hours, pure: when it is open (read in its zone), and what is wrong with a
// definition. `weekly` holds ranges `{day: mon … sun, from, until}` (local "HH:MM", from inclusive,
// until exclusive, "24:00" for midnight at the end of the day; several a day, an overnight shift as
// two); a date of `holidays` ("YYYY-MM-DD", in the zone) is closed all day. Read by the rule
// condition `time.businessHours` (context.ts) and by the away message (modules/business-hours).
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
