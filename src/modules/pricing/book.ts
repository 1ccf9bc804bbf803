// The price book: rows, not code. Each row is one price of Meta's per-message model for a market
// and a category from a date on: a `list` row is what a message of that category to that market
// costs; an `in_window` row is what one costs when delivered inside an open customer service window
// (0: free; a null price withdraws the rule from that date: the list price applies again). A change
// of Meta's rules is new rows with a later `effectiveFrom`, never an edit of older ones, so a
// message priced last month is explained by the rows that were in force then.
//
// Where a price comes from, for a message to market M at instant t: among the rows for M, then the
// rows for `*` (every market without its own row), the operator's rows first (`tidings prices load`,
// TIDINGS_PRICES_FILE), then the shipped ones (shipped-book.ts); within each, the row with the latest
// `effectiveFrom` not after t. The first found is the price, and its key names the rule in
// estimates and on the message (`pricing.rule`), and in the adjustments report.
//
// Volume tiers (Meta's lower utility and authentication rates past a monthly volume) and a monthly
// free allowance are not rows of the book: docs/decisions.md § Pricing says why.
export const CATEGORIES = ['marketing', 'utility', 'authentication', 'service'] as const;
export type PriceCategory = (typeof CATEGORIES)[number];
export const RULES = ['list', 'in_window'] as const;
export type PriceRule = (typeof RULES)[number];
/** `shipped`: Tidings' own book; `operator`: loaded by `tidings prices load`; `file`: TIDINGS_PRICES_FILE. */
export type RowSource = 'shipped' | 'operator' | 'file';

/** Every market of Meta's rate card this book does not list on its own. */
export const ANY_MARKET = '*';

export interface BookRow {
  /** ISO 3166-1 alpha-2 of the recipient's country, or `*`. */
  market: string;
  category: PriceCategory;
  rule: PriceRule;
  /** Micro-units of the wallet's currency; null only on an `in_window` row that withdraws the rule. */
  priceMicros: number | null;
  effectiveFrom: Date;
  source: RowSource;
  /** Where the row comes from (Meta's page, the operator's file), for `tidings prices list`. */
  note: string | null;
}

export interface BookEntry {
  priceMicros: number | null;
  /** `<rule>:<market>:<category>:<effective date>:<source>`, stored on the message (`pricing.rule`). */
  key: string;
}

export function ruleKey(row: BookRow): string {
  return `${row.rule}:${row.market}:${row.category}:${row.effectiveFrom.toISOString().slice(0, 10)}:${row.source}`;
}

/** A stored rule key as the API shows it (pricing.rule): `sandbox` and `none` are rules of no row. */
export function ruleView(key: string | null) {
  if (!key) return null;
  const [kind, market, , effectiveFrom, source] = key.split(':');
  if (!source) return { key, kind: key, market: null, effectiveFrom: null, source: null };
  return { key, kind: kind!, market: market!, effectiveFrom: effectiveFrom!, source: source! };
}

type Layer = 'operator' | 'shipped';
const layerOf = (source: RowSource): Layer => (source === 'shipped' ? 'shipped' : 'operator');
const groupKey = (layer: Layer, market: string, category: string, rule: string) =>
  `${layer}|${market}|${category}|${rule}`;

export class PriceBook {
  /** Each group's rows, latest `effectiveFrom` first. */
  readonly #groups = new Map<string, { row: BookRow; key: string }[]>();

  constructor(rows: readonly BookRow[]) {
    // A row of TIDINGS_PRICES_FILE and one loaded by the operator for the same group and date: the
    // loaded one, the file being the older way.
    const order = (s: RowSource) => (s === 'operator' ? 0 : 1);
    for (const row of rows) {
      const g = groupKey(layerOf(row.source), row.market, row.category, row.rule);
      const list = this.#groups.get(g) ?? [];
      list.push({ row, key: ruleKey(row) });
      this.#groups.set(g, list);
    }
    for (const list of this.#groups.values()) {
      list.sort(
        (a, b) =>
          b.row.effectiveFrom.getTime() - a.row.effectiveFrom.getTime() ||
          order(a.row.source) - order(b.row.source),
      );
    }
  }

  /** The row in force for a message to `country` of `category` at `at`, or null if none is. */
  entry(country: string | null, category: PriceCategory, rule: PriceRule, at: Date): BookEntry | null {
    const markets = country ? [country, ANY_MARKET] : [ANY_MARKET];
    for (const market of markets) {
      for (const layer of ['operator', 'shipped'] as const) {
        const list = this.#groups.get(groupKey(layer, market, category, rule));
        const found = list?.find((r) => r.row.effectiveFrom.getTime() <= at.getTime());
        if (found) return { priceMicros: found.row.priceMicros, key: found.key };
      }
    }
    return null;
  }
}
