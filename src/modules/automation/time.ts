// Time for automation: ISO-8601 durations, a contact's time zone, and send windows.
//   - A contact's zone: `attributes.timezone` when it names a zone, else the zone of its number's
//     country (the most populous one where a country has several: PRIMARY_ZONES), else the
//     window's `fallbackTimezone`. A number says its country, not where its owner is: a user who
//     knows better sets `attributes.timezone`.
//   - A send window `{timezone: "contact" | <IANA zone>, fallbackTimezone, days, from, until}`: the
//     days of the week (mon … sun) and the local hours (from inclusive, until exclusive, within one
//     day) when automation may send. nextOpening answers the send time itself when it is inside,
//     else the window's next opening. A send outside waits; it is never dropped.
import ct from 'countries-and-timezones';
import { DateTime, Duration, IANAZone } from 'luxon';
import type { Problem } from './conditions.ts';

/** Countries with several zones of their own: the one most of their people live in. */
const PRIMARY_ZONES: Record<string, string> = {
  AR: 'America/Argentina/Buenos_Aires',
  AU: 'Australia/Sydney',
  BR: 'America/Sao_Paulo',
  CA: 'America/Toronto',
  CL: 'America/Santiago',
  CN: 'Asia/Shanghai',
  CY: 'Asia/Nicosia',
  EC: 'America/Guayaquil',
  ES: 'Europe/Madrid',
  GL: 'America/Nuuk',
  ID: 'Asia/Jakarta',
  KI: 'Pacific/Tarawa',
  KZ: 'Asia/Almaty',
  MN: 'Asia/Ulaanbaatar',
  MX: 'America/Mexico_City',
  NZ: 'Pacific/Auckland',
  PF: 'Pacific/Tahiti',
  PG: 'Pacific/Port_Moresby',
  PS: 'Asia/Gaza',
  PT: 'Europe/Lisbon',
  RU: 'Europe/Moscow',
  US: 'America/New_York',
  UZ: 'Asia/Tashkent',
};

/** The zone of a country (ISO 3166 alpha-2), or null for an unknown one. */
export function countryZone(country: string): string | null {
  if (PRIMARY_ZONES[country]) return PRIMARY_ZONES[country]!;
  const zones = ct.getCountry(country)?.timezones ?? [];
  // A zone listed for several countries belongs first to its own (Europe/Zurich is Swiss, also
  // listed for Germany): prefer one whose home is this country.
  return zones.find((z) => ct.getTimezone(z)?.countries[0] === country) ?? zones[0] ?? null;
}

export function isZone(zone: unknown): zone is string {
  return typeof zone === 'string' && zone.length <= 64 && IANAZone.isValidZone(zone);
}

/** A contact's zone: its `timezone` attribute, its number's country, else the fallback. */
export function contactZone(
  contact: { attributes: Record<string, unknown>; country: string | null } | null,
  fallback: string,
): string {
  const own = contact?.attributes.timezone;
  if (isZone(own)) return own;
  const byCountry = contact?.country ? countryZone(contact.country) : null;
  return byCountry ?? fallback;
}

/** The local hour (0–23) and ISO weekday (1 = Monday … 7 = Sunday) of an instant in a zone. */
export function localTime(at: Date, zone: string): { localHour: number; weekday: number } {
  const local = DateTime.fromJSDate(at, { zone });
  return { localHour: local.hour, weekday: local.weekday };
}

export const MAX_DELAY = Duration.fromObject({ days: 365 });

/**
 * An ISO-8601 duration (P3D, PT2H30M, P1W) of at most `max`, or the issue with it. Months and years
 * are refused: their length depends on when they start. Longer than zero, unless `min` is `zero`:
 * a sequence step's delay, where PT0S means at once (a journey's wait or a timed trigger of zero
 * would wait for nothing, and a wait is what breaks a journey's cycles).
 */
export function durationProblem(
  value: unknown,
  max: Duration = MAX_DELAY,
  { min }: { min: 'positive' | 'zero' } = { min: 'positive' },
): string | null {
  if (typeof value !== 'string') return 'must be an ISO-8601 duration such as PT2H or P3D';
  const d = Duration.fromISO(value);
  if (!d.isValid) return `${JSON.stringify(value)} is not an ISO-8601 duration (such as PT30M, PT2H, P3D)`;
  if (d.months !== 0 || d.years !== 0 || d.quarters !== 0) {
    return 'must be in weeks, days, hours, minutes or seconds (months and years have no fixed length)';
  }
  const ms = d.toMillis();
  if (min === 'zero' && ms < 0) return 'must not be negative';
  if (min === 'positive' && !(ms > 0)) return 'must be longer than zero';
  if (ms > max.toMillis()) return `must be at most ${max.toISO()}`;
  return null;
}

export function durationMs(value: string): number {
  return Duration.fromISO(value).toMillis();
}

/** An offset that may be negative ("-P1D": a day before): milliseconds, or null if invalid. */
export function signedDurationMs(value: string): number | null {
  const negative = value.startsWith('-');
  const d = Duration.fromISO(negative ? value.slice(1) : value);
  if (!d.isValid || d.months !== 0 || d.years !== 0 || d.quarters !== 0) return null;
  return (negative ? -1 : 1) * d.toMillis();
}

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface SendWindow {
  timezone: 'contact' | string;
  fallbackTimezone?: string;
  days: Weekday[];
  /** Local "HH:MM", inclusive. */
  from: string;
  /** Local "HH:MM", exclusive, after `from`. */
  until: string;
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;
const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

export function sendWindowProblems(value: unknown, path: string): Problem[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field: path, issue: 'must be an object {timezone, fallbackTimezone?, days, from, until}' }];
  }
  const w = value as Record<string, unknown>;
  const problems: Problem[] = [];
  for (const key of Object.keys(w)) {
    if (!['timezone', 'fallbackTimezone', 'days', 'from', 'until'].includes(key)) {
      problems.push({ field: `${path}.${key}`, issue: 'is not allowed' });
    }
  }
  if (w.timezone !== 'contact' && !isZone(w.timezone)) {
    problems.push({
      field: `${path}.timezone`,
      issue: 'must be "contact" or an IANA time zone such as Europe/Berlin',
    });
  }
  if (w.fallbackTimezone !== undefined && !isZone(w.fallbackTimezone)) {
    problems.push({
      field: `${path}.fallbackTimezone`,
      issue: 'must be an IANA time zone such as America/New_York',
    });
  }
  if (
    !Array.isArray(w.days) ||
    w.days.length === 0 ||
    new Set(w.days).size !== w.days.length ||
    !w.days.every((d) => (WEEKDAYS as readonly unknown[]).includes(d))
  ) {
    problems.push({
      field: `${path}.days`,
      issue: `must be a list of distinct days among ${WEEKDAYS.join(', ')}`,
    });
  }
  for (const key of ['from', 'until'] as const) {
    if (typeof w[key] !== 'string' || !HHMM.test(w[key] as string)) {
      problems.push({ field: `${path}.${key}`, issue: 'must be a local time "HH:MM" (24-hour)' });
    }
  }
  if (
    typeof w.from === 'string' &&
    typeof w.until === 'string' &&
    HHMM.test(w.from) &&
    HHMM.test(w.until) &&
    minutesOf(w.until) <= minutesOf(w.from)
  ) {
    problems.push({ field: `${path}.until`, issue: 'must be later in the day than from' });
  }
  return problems;
}

/** The zone a window is read in for a contact. */
export function windowZone(
  window: SendWindow,
  contact: { attributes: Record<string, unknown>; country: string | null } | null,
): string {
  if (window.timezone !== 'contact') return window.timezone;
  return contactZone(contact, window.fallbackTimezone ?? 'UTC');
}

/** `at` if it falls inside the window (read in `zone`), else the window's next opening after it. */
export function nextOpening(at: Date, window: SendWindow, zone: string): Date {
  const local = DateTime.fromJSDate(at, { zone });
  const from = minutesOf(window.from);
  const until = minutesOf(window.until);
  for (let k = 0; k <= 7; k++) {
    const day = local.startOf('day').plus({ days: k });
    if (!window.days.includes(WEEKDAYS[day.weekday - 1]!)) continue;
    const opens = day.set({ hour: Math.floor(from / 60), minute: from % 60 });
    const closes = day.set({ hour: Math.floor(until / 60), minute: until % 60 });
    if (local < opens) return opens.toJSDate();
    if (local < closes) return at;
  }
  // Unreachable for a valid window (some day of the next seven is open).
  throw new Error('send window without an open day');
}
