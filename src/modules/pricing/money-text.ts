// Prices as the book's files write them: decimal strings of up to 6 decimals ("0.0250").
import { MICROS_PER_UNIT } from '../billing/index.ts';

export const AMOUNT = /^\d{1,6}(\.\d{1,6})?$/;

export function micros(text: string): number {
  const [whole, fraction = ''] = text.split('.');
  return Number(whole) * MICROS_PER_UNIT + Number(fraction.padEnd(6, '0'));
}
