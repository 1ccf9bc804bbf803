// Exact money in tests: the API's decimal strings as integer micro-units, never through floats.

/** Exact micro-units of a decimal string ("-0.0250" → -25000n). */
export function micros(amount: string): bigint {
  const [whole, fraction = ''] = amount.replace('-', '').split('.');
  const value = BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  return amount.startsWith('-') ? -value : value;
}

/** A positive micro-unit count as the decimal string a client would send ("0.000001"). */
export function decimal(value: number): string {
  const whole = Math.floor(value / 1_000_000);
  const fraction = String(value % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}
