// The price table: a list price per message for each recipient country and category, in micro-units
// of the wallet's currency. The shipped table (default-prices.ts) can be replaced, in part or whole,
// by a JSON file of the same shape named by TIDINGS_PRICES_FILE: its `default` row and each country
// it lists replace the shipped ones, category by category. A bad file stops the start.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config.ts';
import { MICROS_PER_UNIT } from '../billing/index.ts';
import { DEFAULT_PRICES } from './default-prices.ts';

export const CATEGORIES = ['marketing', 'utility', 'authentication', 'service'] as const;
export type PriceCategory = (typeof CATEGORIES)[number];

type Row = Partial<Record<PriceCategory, string>>;

export interface PriceFile {
  currency: string;
  default: Row;
  countries: Record<string, Row>;
  /** Voice calls' price per started minute, by the called number's country (docs/voice.md § Billing). */
  voice?: { default?: string; countries?: Record<string, string> };
}

const AMOUNT = /^\d{1,6}(\.\d{1,6})?$/;
const COUNTRY = /^[A-Z]{2}$/;

function micros(text: string): number {
  const [whole, fraction = ''] = text.split('.');
  return Number(whole) * MICROS_PER_UNIT + Number(fraction.padEnd(6, '0'));
}

/** Every problem of a price file, as `path: issue` lines. */
function problemsOf(file: unknown): string[] {
  if (typeof file !== 'object' || file === null) return ['the file must hold a JSON object'];
  const f = file as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(f)) {
    if (!['currency', 'default', 'countries', 'voice'].includes(key))
      problems.push(`${key}: is not a known field`);
  }
  if (f.currency !== undefined && f.currency !== 'USD')
    problems.push('currency: must be USD (the wallets are in USD)');
  const checkRow = (path: string, row: unknown) => {
    if (typeof row !== 'object' || row === null) return problems.push(`${path}: must be an object`);
    for (const [category, amount] of Object.entries(row)) {
      if (!(CATEGORIES as readonly string[]).includes(category)) {
        problems.push(`${path}.${category}: must be one of ${CATEGORIES.join(', ')}`);
      } else if (typeof amount !== 'string' || !AMOUNT.test(amount)) {
        problems.push(`${path}.${category}: must be a decimal string like "0.0250"`);
      }
    }
  };
  if (f.default !== undefined) checkRow('default', f.default);
  if (f.countries !== undefined) {
    if (typeof f.countries !== 'object' || f.countries === null)
      problems.push('countries: must be an object');
    else
      for (const [country, row] of Object.entries(f.countries)) {
        if (!COUNTRY.test(country)) problems.push(`countries.${country}: must be an ISO 3166-1 alpha-2 code`);
        else checkRow(`countries.${country}`, row);
      }
  }
  if (f.voice !== undefined) problems.push(...voiceProblems(f.voice));
  return problems;
}

function voiceProblems(voice: unknown): string[] {
  if (typeof voice !== 'object' || voice === null) return ['voice: must be an object'];
  const v = voice as Record<string, unknown>;
  const problems: string[] = [];
  const amount = (path: string, value: unknown) => {
    if (typeof value !== 'string' || !AMOUNT.test(value))
      problems.push(`${path}: must be a decimal string like "0.0140"`);
  };
  for (const key of Object.keys(v)) {
    if (key === 'default') amount('voice.default', v.default);
    else if (key === 'countries') {
      if (typeof v.countries !== 'object' || v.countries === null)
        problems.push('voice.countries: must be an object');
      else
        for (const [country, value] of Object.entries(v.countries)) {
          if (!COUNTRY.test(country))
            problems.push(`voice.countries.${country}: must be an ISO 3166-1 alpha-2 code`);
          else amount(`voice.countries.${country}`, value);
        }
    } else problems.push(`voice.${key}: is not a known field`);
  }
  return problems;
}

export class PriceTable {
  readonly currency: string;
  readonly #fallback: Record<PriceCategory, number>;
  readonly #countries = new Map<string, Record<PriceCategory, number>>();
  readonly #voiceFallback: number;
  readonly #voice = new Map<string, number>();

  constructor(file: PriceFile, override?: Partial<PriceFile>) {
    this.currency = file.currency;
    const base = { ...file.default, ...(override?.default ?? {}) };
    const rowOf = (row: Row, under: Row) =>
      Object.fromEntries(CATEGORIES.map((c) => [c, micros(row[c] ?? under[c] ?? '0')])) as Record<
        PriceCategory,
        number
      >;
    this.#fallback = rowOf(base, {});
    const countries = new Set([...Object.keys(file.countries), ...Object.keys(override?.countries ?? {})]);
    for (const country of countries) {
      const row = { ...(file.countries[country] ?? {}), ...(override?.countries?.[country] ?? {}) };
      this.#countries.set(country, rowOf(row, base));
    }
    this.#voiceFallback = micros(override?.voice?.default ?? file.voice?.default ?? '0');
    const voiceRates = { ...(file.voice?.countries ?? {}), ...(override?.voice?.countries ?? {}) };
    for (const [country, rate] of Object.entries(voiceRates)) this.#voice.set(country, micros(rate));
  }

  /** A voice call's price per started minute, in micro-units, by the called number's country. */
  voicePerMinute(country: string | null): number {
    return (country ? this.#voice.get(country) : undefined) ?? this.#voiceFallback;
  }

  /** The list price of one message, in micro-units; a country not in the table pays the default row. */
  listPrice(country: string | null, category: PriceCategory): number {
    return (country ? this.#countries.get(country) : undefined)?.[category] ?? this.#fallback[category];
  }
}

/** The shipped table, with the file at `path` (if any) laid over it. */
export function loadPrices(path: string | null): PriceTable {
  if (!path) return new PriceTable(DEFAULT_PRICES);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration:\n  TIDINGS_PRICES_FILE: cannot read ${path}: ${(err as Error).message}`,
    );
  }
  const problems = problemsOf(parsed);
  if (problems.length > 0) {
    throw new ConfigError(
      `Invalid configuration:\n  TIDINGS_PRICES_FILE (${path}):\n    ${problems.join('\n    ')}`,
    );
  }
  return new PriceTable(DEFAULT_PRICES, parsed as Partial<PriceFile>);
}
