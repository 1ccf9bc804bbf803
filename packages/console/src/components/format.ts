// How the console writes dates, money and counts: the reader's locale, never a made-up time zone;
// money exactly as the API gave it, trailing zeros trimmed to cents.
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });

export function dateTime(iso: string | null | undefined): string {
  return iso ? dateTimeFormat.format(new Date(iso)) : '—';
}

/** Today's times as a time, other days with their date. */
export function shortWhen(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString() ? timeFormat.format(d) : dateTimeFormat.format(d);
}

export function day(isoDate: string): string {
  // A calendar day (YYYY-MM-DD, UTC) stays that day whatever the reader's time zone.
  return new Date(`${isoDate}T00:00:00Z`).toLocaleDateString(undefined, {
    dateStyle: 'medium',
    timeZone: 'UTC',
  });
}

export interface Money {
  amount: string;
  currency: string;
}

/** "25.000000" → "25.00", "0.025000" → "0.025": exact, never rounded. */
export function money(m: Money | null | undefined): string {
  if (!m) return '—';
  const [whole, fraction = ''] = m.amount.split('.');
  let f = fraction.replace(/0+$/, '');
  if (f.length < 2) f = f.padEnd(2, '0');
  return `${whole}.${f} ${m.currency}`;
}

export function count(n: number): string {
  return n.toLocaleString();
}

/** How the console names a customer: their name, else their number, else the WhatsApp username
 *  (a customer who adopted one may share no number), else Meta's user id. */
export function customerLabel(c: {
  name?: string | null;
  phone?: string | null;
  whatsappUsername?: string | null;
  whatsappUserId?: string | null;
}): string {
  return c.name || c.phone || (c.whatsappUsername ? `@${c.whatsappUsername}` : '') || c.whatsappUserId || '—';
}
