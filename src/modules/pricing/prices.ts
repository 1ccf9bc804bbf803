// The prices a process quotes: the price book (book.ts) made of the shipped rows, the rows stored
// in price_book (the operator's, `tidings prices load`; read at start and every minute after, so a
// row loaded while servers run is in force everywhere within a minute) and TIDINGS_PRICES_FILE.
// That file keeps its older shape, a table without dates: its `default` row and each country it
// lists are the operator's rows from the start of time, so any later row the operator loads wins
// from its date. A bad file stops the start. Voice rates per minute are not in the book (yet): the
// shipped ones, with the file's laid over them.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config.ts';
import {
  ANY_MARKET,
  type BookRow,
  CATEGORIES,
  PriceBook,
  type PriceCategory,
  type PriceRule,
} from './book.ts';
import { DEFAULT_PRICES } from './default-prices.ts';
import { AMOUNT, micros } from './money-text.ts';
import { SHIPPED_BOOK } from './shipped-book.ts';

export type { PriceCategory };

type Row = Partial<Record<PriceCategory, string>>;

export interface PriceFile {
  currency: string;
  default: Row;
  countries: Record<string, Row>;
  /** Voice calls' price per started minute, by the called number's country (docs/voice.md § Billing). */
  voice?: { default?: string; countries?: Record<string, string> };
}

const COUNTRY = /^[A-Z]{2}$/;

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

/** The file's rows: in force from the start of time, the operator's. */
function fileRows(file: Partial<PriceFile>): BookRow[] {
  const rows: BookRow[] = [];
  const add = (market: string, row: Row | undefined) => {
    for (const [category, amount] of Object.entries(row ?? {})) {
      rows.push({
        market,
        category: category as PriceCategory,
        rule: 'list',
        priceMicros: micros(amount),
        effectiveFrom: new Date(0),
        source: 'file',
        note: 'TIDINGS_PRICES_FILE',
      });
    }
  };
  add(ANY_MARKET, file.default);
  for (const [country, row] of Object.entries(file.countries ?? {})) add(country, row);
  return rows;
}

export class PriceTable {
  readonly currency = 'USD';
  readonly #fixed: readonly BookRow[];
  #book: PriceBook;
  readonly #voiceFallback: number;
  readonly #voice = new Map<string, number>();

  constructor(override?: Partial<PriceFile>) {
    this.#fixed = [...SHIPPED_BOOK, ...fileRows(override ?? {})];
    this.#book = new PriceBook(this.#fixed);
    const file = DEFAULT_PRICES;
    this.#voiceFallback = micros(override?.voice?.default ?? file.voice?.default ?? '0');
    const voiceRates = { ...(file.voice?.countries ?? {}), ...(override?.voice?.countries ?? {}) };
    for (const [country, rate] of Object.entries(voiceRates)) this.#voice.set(country, micros(rate));
  }

  /** The rows read from price_book become part of the book (the shipped ones are there already). */
  useStoredRows(stored: readonly BookRow[]): void {
    this.#book = new PriceBook([...this.#fixed, ...stored.filter((r) => r.source !== 'shipped')]);
  }

  /** A voice call's price per started minute, in micro-units, by the called number's country. */
  voicePerMinute(country: string | null): number {
    return (country ? this.#voice.get(country) : undefined) ?? this.#voiceFallback;
  }

  /** The row in force (book.ts), or null when none is. */
  entry(country: string | null, category: PriceCategory, rule: PriceRule, at: Date) {
    return this.#book.entry(country, category, rule, at);
  }

  /** The list price of one message at `at`, in micro-units (0 where no row is in force). */
  listPrice(country: string | null, category: PriceCategory, at: Date = new Date()): number {
    return this.entry(country, category, 'list', at)?.priceMicros ?? 0;
  }
}

/** The shipped book, with the file at `path` (if any) laid over it. */
export function loadPrices(path: string | null): PriceTable {
  if (!path) return new PriceTable();
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
  return new PriceTable(parsed as Partial<PriceFile>);
}
