// How the console writes dates and money: the browser's locale, never a made-up time zone.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const time = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });

export function when(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

/** Today's times as a time, other days with their date. */
export function shortWhen(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString() ? time.format(d) : dateTime.format(d);
}

export function money(m: { amount: string; currency: string } | null | undefined): string {
  return m ? `${m.amount} ${m.currency}` : '—';
}
