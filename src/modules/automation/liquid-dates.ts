// Liquid's date filters for automation, in the contact's zone and language. liquidjs' own `date`
// shows a time in the server's zone and language (the process's TZ and locale), and reads a date
// alone ("2026-12-04") as midnight UTC, which is the day before west of Greenwich; a customer would
// see a raw ISO time, or the wrong hour. These replace `date` (and the Jekyll filters built on it):
//   {{ value | date }}                      the locale's long date and short time
//   {{ value | date: "full" }}              a named style: short, medium, long, full (date and
//                                           time); short_date … full_date (the date); time
//   {{ value | date: "%a %-d %b, %H:%M" }}  liquidjs' strftime (the same flags), names in the locale
//   {{ value | date: "long", "Asia/Tokyo" }} or `zone: "…"`, `locale: "…"`: given in place (a zone
//                                           may be liquidjs' minutes too: -330 is UTC+5:30)
// The zone is the contact's (time.ts contactZone: attributes.timezone, else its number's country,
// else UTC); the locale its `attributes.locale` (a BCP 47 tag: "de-DE", "pt_BR"), else its number's
// country's most spoken language (CLDR's likely subtags: +49 → de-DE), else en-US. A value is an
// ISO-8601 date or date-time (a date alone is that day, and a date-time without an offset that
// local time, in the zone: as sequences read attribute dates), an RFC 2822 date, Unix seconds, or
// "now"; anything else fails the render, naming it, as an unknown variable does.
import type { Liquid } from 'liquidjs';
import { DateTime } from 'luxon';
import { countryOf } from '../../kernel/values/phones.ts';
import { contactZone, isZone } from './time.ts';

type Styles = { dateStyle?: 'short' | 'medium' | 'long' | 'full'; timeStyle?: 'short' };

const STYLES: Record<string, Styles> = {
  short: { dateStyle: 'short', timeStyle: 'short' },
  medium: { dateStyle: 'medium', timeStyle: 'short' },
  long: { dateStyle: 'long', timeStyle: 'short' },
  full: { dateStyle: 'full', timeStyle: 'short' },
  short_date: { dateStyle: 'short' },
  medium_date: { dateStyle: 'medium' },
  long_date: { dateStyle: 'long' },
  full_date: { dateStyle: 'full' },
  time: { timeStyle: 'short' },
};
const DEFAULT_STYLE = 'long';
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** The widest a strftime field may be padded (liquidjs lets `%1000d` allocate a kilobyte). */
const MAX_WIDTH = 32;
const FALLBACK_LOCALE = 'en-US';

interface Contactish {
  phone?: unknown;
  country?: unknown;
  attributes?: Record<string, unknown>;
}

/** The contact of the scope (automation's, a campaign's or a call's), if it has one. */
function contactIn(scope: unknown): Contactish | null {
  const contact = (scope as { contact?: unknown } | null)?.contact;
  return contact && typeof contact === 'object' ? (contact as Contactish) : null;
}

function countryIn(contact: Contactish | null): string | null {
  if (!contact) return null;
  if (typeof contact.country === 'string') return contact.country;
  return typeof contact.phone === 'string' ? countryOf(contact.phone) : null;
}

function zoneIn(scope: unknown): string {
  const zone = (scope as { time?: { zone?: unknown } } | null)?.time?.zone;
  if (isZone(zone)) return zone;
  const contact = contactIn(scope);
  return contactZone(
    contact ? { attributes: contact.attributes ?? {}, country: countryIn(contact) } : null,
    'UTC',
  );
}

/** A BCP 47 tag as Intl takes it ("pt_BR" → "pt-BR"), or null when it is none. */
function canonicalLocale(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 35) return null;
  try {
    return Intl.getCanonicalLocales(value.replaceAll('_', '-'))[0] ?? null;
  } catch {
    return null;
  }
}

const countryLocales = new Map<string, string>();

/** The most spoken language of a country, with it (CLDR likely subtags: "BR" → "pt-BR"). */
function countryLocale(country: string): string {
  let locale = countryLocales.get(country);
  if (!locale) {
    try {
      const likely = new Intl.Locale(`und-${country}`).maximize();
      locale = likely.language !== 'und' ? `${likely.language}-${country}` : FALLBACK_LOCALE;
    } catch {
      locale = FALLBACK_LOCALE;
    }
    countryLocales.set(country, locale);
  }
  return locale;
}

function localeIn(scope: unknown): string {
  const contact = contactIn(scope);
  const own = canonicalLocale(contact?.attributes?.locale);
  if (own) return own;
  const country = countryIn(contact);
  return country ? countryLocale(country) : FALLBACK_LOCALE;
}

class DateFilterError extends Error {}

interface Parsed {
  at: DateTime;
  dateOnly: boolean;
}

/** The instant a value names, in `zone`; null for nil (which shows as nothing, as in liquidjs). */
function parse(value: unknown, zone: string): Parsed | null {
  if (value === null || value === undefined) return null;
  let at: DateTime | null = null;
  let dateOnly = false;
  if (value instanceof Date) at = DateTime.fromJSDate(value, { zone });
  else if (typeof value === 'number') at = DateTime.fromSeconds(value, { zone });
  else if (typeof value === 'string') {
    const text = value.trim();
    if (text === 'now' || text === 'today') at = DateTime.now().setZone(zone);
    else if (/^-?\d+$/.test(text)) at = DateTime.fromSeconds(Number(text), { zone });
    else {
      dateOnly = DATE_ONLY.test(text);
      at = DateTime.fromISO(text, { zone });
      if (!at.isValid) at = DateTime.fromRFC2822(text, { zone });
    }
  }
  if (!at?.isValid) {
    const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
    throw new DateFilterError(`date: ${shown} is not a date (an ISO-8601 date or date-time)`);
  }
  return { at, dateOnly };
}

// strftime as liquidjs has it (its flags, widths and codes), over a luxon DateTime.
const FORMAT = /%([-_0^#:]+)?(\d+)?([EO])?(.)/g;
const PAD_WIDTHS: Record<string, number> = {
  C: 2,
  d: 2,
  e: 2,
  H: 2,
  I: 2,
  j: 3,
  k: 2,
  l: 2,
  L: 3,
  m: 2,
  M: 2,
  S: 2,
  U: 2,
  W: 2,
  y: 2,
  Y: 4,
};
const PAD_SPACES = new Set('aAbBceklpP');

function offset(d: DateTime, colon: boolean): string {
  const minutes = Math.abs(d.offset);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${d.offset < 0 ? '-' : '+'}${hh}${colon ? ':' : ''}${mm}`;
}

/** The week of the year, weeks starting on `startDay` (0 Sunday, 1 Monday); days before the first: 0. */
function weekOfYear(d: DateTime, startDay: number): number {
  const sinceStart = ((d.weekday % 7) - startDay + 7) % 7;
  return Math.floor((d.ordinal - 1 - sinceStart + 7) / 7);
}

function ordinalSuffix(day: number): string {
  if (day >= 11 && day <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][day % 10] ?? 'th';
}

const CODES: Record<string, (d: DateTime, flags: string, width: number) => string | number> = {
  a: (d) => d.toFormat('EEE'),
  A: (d) => d.toFormat('EEEE'),
  b: (d) => d.toFormat('MMM'),
  h: (d) => d.toFormat('MMM'),
  B: (d) => d.toFormat('MMMM'),
  c: (d) => d.toLocaleString({ dateStyle: 'short', timeStyle: 'medium' }),
  C: (d) => Math.floor(d.year / 100),
  d: (d) => d.day,
  e: (d) => d.day,
  H: (d) => d.hour,
  I: (d) => d.hour % 12 || 12,
  j: (d) => d.ordinal,
  k: (d) => d.hour,
  l: (d) => d.hour % 12 || 12,
  L: (d) => d.millisecond,
  m: (d) => d.month,
  M: (d) => d.minute,
  N: (d, _flags, width) =>
    String(d.millisecond)
      .padStart(3, '0')
      .slice(0, width || 9)
      .padEnd(width || 9, '0'),
  p: (d) => (d.hour < 12 ? 'AM' : 'PM'),
  P: (d) => (d.hour < 12 ? 'am' : 'pm'),
  q: (d) => ordinalSuffix(d.day),
  s: (d) => Math.floor(d.toSeconds()),
  S: (d) => d.second,
  u: (d) => d.weekday,
  U: (d) => weekOfYear(d, 0),
  w: (d) => d.weekday % 7,
  W: (d) => weekOfYear(d, 1),
  x: (d) => d.toLocaleString({ dateStyle: 'short' }),
  X: (d) => d.toLocaleString({ timeStyle: 'medium' }),
  y: (d) => d.year % 100,
  Y: (d) => d.year,
  z: (d, flags) => offset(d, flags.includes(':')),
  Z: (d) => d.zoneName ?? offset(d, false),
  t: () => '\t',
  n: () => '\n',
  '%': () => '%',
};

function swapCase(text: string): string {
  return [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

function strftime(d: DateTime, format: string): string {
  return format.replace(FORMAT, (whole, flags = '', widthText, _modifier, code: string) => {
    const convert = CODES[code];
    if (!convert) return whole;
    const width = Math.min(Number(widthText) || 0, MAX_WIDTH);
    let out = String(convert(d, flags, width));
    if (flags.includes('^')) out = out.toUpperCase();
    else if (flags.includes('#')) out = swapCase(out);
    let pad = PAD_SPACES.has(code) ? ' ' : '0';
    if (flags.includes('_')) pad = ' ';
    else if (flags.includes('0')) pad = '0';
    const padWidth = flags.includes('-') ? 0 : width || PAD_WIDTHS[code] || 0;
    if (pad === '0' && out.startsWith('-')) return `-${out.slice(1).padStart(padWidth - 1, pad)}`;
    return out.padStart(padWidth, pad);
  });
}

/** A named style of the locale (a date alone shows its date only). */
function styled(p: Parsed, name: string): string {
  const style = STYLES[name]!;
  const options = p.dateOnly && style.dateStyle ? { dateStyle: style.dateStyle } : style;
  // ICU puts a narrow no-break space before AM/PM: a message is plain text, as a person types it.
  return p.at.toLocaleString(options).replaceAll('\u202f', ' ');
}

/**
 * liquidjs' numeric zone, minutes as JavaScript's getTimezoneOffset counts them (-330 is UTC+5:30),
 * as the fixed zone luxon names "UTC+5:30"; null when it is no such number.
 */
function offsetZone(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 14 * 60) return null;
  const east = -value;
  const minutes = Math.abs(east);
  return `UTC${east < 0 ? '-' : '+'}${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}`;
}

interface Where {
  zone?: unknown;
  locale?: unknown;
}

/** The zone and locale given in place (`"Asia/Tokyo"`, `zone: "…"`, `locale: "…"`), else the scope's. */
function where(scope: unknown, args: unknown[]): { zone: string; locale: string } {
  const given: Where = {};
  for (const arg of args) {
    if (Array.isArray(arg) && arg.length === 2 && (arg[0] === 'zone' || arg[0] === 'locale')) {
      given[arg[0] as keyof Where] = arg[1];
    } else if (given.zone === undefined && arg !== null && arg !== undefined) given.zone = arg;
  }
  let zone = zoneIn(scope);
  if (given.zone !== undefined && given.zone !== null) {
    const named = isZone(given.zone) ? given.zone : offsetZone(given.zone);
    if (!named) throw new DateFilterError(`date: ${JSON.stringify(given.zone)} is not a time zone`);
    zone = named;
  }
  let locale = localeIn(scope);
  if (given.locale !== undefined && given.locale !== null) {
    const canonical = canonicalLocale(given.locale);
    if (!canonical) throw new DateFilterError(`date: ${JSON.stringify(given.locale)} is not a locale`);
    locale = canonical;
  }
  return { zone, locale };
}

/** Formats `value` with `format` (a style name or strftime), in the zone and locale. */
function format(value: unknown, fmt: unknown, place: { zone: string; locale: string }): string {
  const parsed = parse(value, place.zone);
  if (!parsed) return '';
  const p = { ...parsed, at: parsed.at.setLocale(place.locale) };
  const name = fmt === undefined || fmt === null ? DEFAULT_STYLE : String(fmt);
  return name in STYLES ? styled(p, name) : strftime(p.at, name);
}

type FilterThis = { context: { environments: unknown } };

/** Registers `date` and the Jekyll date filters on the engine, replacing liquidjs' own. */
export function registerDateFilters(engine: Liquid): void {
  engine.registerFilter(
    'date',
    function (this: FilterThis, value: unknown, fmt?: unknown, ...rest: unknown[]) {
      const scope = this.context.environments;
      // The format may be left out before keyword arguments (`date: locale: "fr"`).
      const keyword = Array.isArray(fmt) && (fmt[0] === 'zone' || fmt[0] === 'locale');
      return format(value, keyword ? undefined : fmt, where(scope, keyword ? [fmt, ...rest] : rest));
    },
  );
  const fixed = (fmt: string, locale?: string) =>
    function (this: FilterThis, value: unknown) {
      const place = where(this.context.environments, []);
      return format(value, fmt, locale ? { ...place, locale } : place);
    };
  engine.registerFilter('date_to_xmlschema', fixed('%Y-%m-%dT%H:%M:%S%:z'));
  engine.registerFilter('date_to_rfc822', fixed('%a, %d %b %Y %H:%M:%S %z', 'en-US'));
  const named = (month: '%b' | '%B') =>
    function (this: FilterThis, value: unknown, type?: unknown, style?: unknown) {
      const place = where(this.context.environments, []);
      const parsed = parse(value, place.zone);
      if (!parsed) return '';
      const at = parsed.at.setLocale(place.locale);
      if (type !== 'ordinal') return strftime(at, `%d ${month} %Y`);
      return strftime(at, style === 'US' ? `${month} ${at.day}%q, %Y` : `${at.day}%q ${month} %Y`);
    };
  engine.registerFilter('date_to_string', named('%b'));
  engine.registerFilter('date_to_long_string', named('%B'));
}
