// Liquid's `date` filter in automation (automation/liquid-dates.ts): a time shown in the contact's
// zone and language (its attributes.timezone and attributes.locale, else its number's country's),
// whatever the server's own zone; named styles of the locale, or liquidjs' strftime formats.
import { describe, expect, it } from 'vitest';
import { scopeOf } from '../../src/modules/automation/context.ts';
import { render, TemplateError, templateProblem } from '../../src/modules/automation/templating.ts';
import type { ContactRow } from '../../src/modules/contacts/repo.ts';

const at = new Date('2026-11-25T12:00:00Z');
const event = { id: 'evt_1', type: 'journey.triggered', data: {} };
const scope = (phone: string, attributes: Record<string, string> = {}) => {
  const row: ContactRow = {
    id: 'ctc_1',
    account_id: 'acc_1',
    phone,
    name: null,
    email: null,
    tags: [],
    attributes: { appointmentAt: '2026-12-04T15:00:00Z', ...attributes },
    opted_in: true,
    marketing_opt_out: false,
    created_at: at,
    updated_at: at,
    last_inbound_at: null,
    wa_id: null,
    whatsapp_user_id: null,
    whatsapp_parent_user_id: null,
    whatsapp_username: null,
  };
  return scopeOf(row, null, event, at);
};
const us = scope('+14155550100');
const when = '{{ contact.attributes.appointmentAt | date';

describe('the date filter', () => {
  it("shows a time in the contact's zone and language: its number's country by default", async () => {
    // Without a format: the locale's long date and short time.
    expect(await render(`${when} }}`, us)).toBe('December 4, 2026 at 10:00 AM');
    expect(await render(`${when}: "full" }}`, us)).toBe('Friday, December 4, 2026 at 10:00 AM');
    expect(await render(`${when}: "short" }}`, us)).toBe('12/4/26, 10:00 AM');
    expect(await render(`${when}: "long_date" }}`, us)).toBe('December 4, 2026');
    expect(await render(`${when}: "time" }}`, us)).toBe('10:00 AM');
    // A German number: Berlin's time, in German.
    expect(await render(`${when}: "full" }}`, scope('+4915112345678'))).toBe(
      'Freitag, 4. Dezember 2026 um 16:00',
    );
  });

  it("follows the contact's own attributes.timezone and attributes.locale", async () => {
    const own = scope('+14155550100', { timezone: 'Asia/Tokyo', locale: 'pt_BR' });
    expect(await render(`${when}: "long" }}`, own)).toBe('5 de dezembro de 2026 às 00:00');
  });

  it('takes liquidjs strftime formats, with names in the locale, and a zone and locale given in place', async () => {
    expect(await render(`${when}: "%a %-d %b %Y, %H:%M (%Z)" }}`, us)).toBe(
      'Fri 4 Dec 2026, 10:00 (America/New_York)',
    );
    expect(await render(`${when}: "%A %e %B, %-I:%M %p %z" }}`, scope('+33612345678'))).toBe(
      'vendredi  4 décembre, 4:00 PM +0100',
    );
    expect(await render(`${when}: "%H:%M", "Asia/Kolkata" }}`, us)).toBe('20:30');
    // liquidjs' minutes west of UTC.
    expect(await render(`${when}: "%H:%M %z", -330 }}`, us)).toBe('20:30 +0530');
    expect(await render(`${when}: "long", locale: "en-GB", zone: "Europe/London" }}`, us)).toBe(
      '4 December 2026 at 15:00',
    );
    expect(await render(`${when}: "%Y-%m-%dT%H:%M:%S%:z" }}`, us)).toBe('2026-12-04T10:00:00-05:00');
    expect(await render(`{{ contact.attributes.appointmentAt | date_to_xmlschema }}`, us)).toBe(
      '2026-12-04T10:00:00-05:00',
    );
  });

  it("reads a date alone as that day in the contact's zone, and a local date-time as the contact's", async () => {
    // 2026-12-04 in Tokyo is not December 3 in UTC.
    const tokyo = scope('+819012345678', { day: '2026-12-04', local: '2026-12-04T09:30' });
    expect(await render('{{ contact.attributes.day | date: "long" }}', tokyo)).toBe('2026年12月4日');
    expect(await render('{{ contact.attributes.day | date: "%Y-%m-%d %H:%M %z" }}', tokyo)).toBe(
      '2026-12-04 00:00 +0900',
    );
    expect(await render('{{ contact.attributes.local | date: "%H:%M %z" }}', tokyo)).toBe('09:30 +0900');
    // Unix seconds, as liquidjs reads numbers.
    expect(await render('{{ 0 | date: "%Y-%m-%d %H:%M", "UTC" }}', us)).toBe('1970-01-01 00:00');
  });

  it('fails, with the reason, on what is not a date, a zone or a locale', async () => {
    await expect(render('{{ "next tuesday" | date }}', us)).rejects.toThrow(TemplateError);
    await expect(render('{{ "next tuesday" | date }}', us)).rejects.toThrow('is not a date');
    await expect(render(`${when}: "long", "Mars/Olympus" }}`, us)).rejects.toThrow('not a time zone');
    await expect(render(`${when}: "long", locale: "xx-!!" }}`, us)).rejects.toThrow('not a locale');
    expect(templateProblem(`${when}: "long" }}`)).toBeNull();
  });
});
