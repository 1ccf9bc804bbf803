// Money is integer micro-units (1 USD = 1,000,000) in storage and code, and an exact decimal
// string on the wire: { amount: "0.0250", currency: "USD" }. Floats never touch it.
import { invalid } from '../../kernel/http/errors.ts';

export const MICROS_PER_UNIT = 1_000_000;

export interface Money {
  amount: string;
  currency: string;
}

/** Formats micro-units with at least 4 decimals, more only when they carry digits. */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_UNIT);
  let fraction = String(abs % MICROS_PER_UNIT).padStart(6, '0');
  while (fraction.length > 4 && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return `${sign}${whole}.${fraction}`;
}

export function money(micros: number, currency: string): Money {
  return { amount: formatMicros(micros), currency };
}

/** Parses a positive decimal string with up to 6 decimals into micro-units. */
export function parseAmount(field: string, value: string, maxUnits = 1_000_000): number {
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(value);
  if (!m) throw invalid(field, 'must be a decimal string with up to 6 decimals, like "10.50"');
  const micros = Number(m[1]) * MICROS_PER_UNIT + Number((m[2] ?? '').padEnd(6, '0'));
  if (micros <= 0) throw invalid(field, 'must be greater than zero');
  if (micros > maxUnits * MICROS_PER_UNIT) throw invalid(field, `must be at most ${maxUnits}`);
  return micros;
}
