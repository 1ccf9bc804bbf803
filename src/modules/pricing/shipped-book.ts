// The book Tidings ships (book.ts says how rows are read): the rates of default-prices.ts from the
// start of Meta's per-message pricing, and Meta's dated rules as rows. Sources, with what each
// settles, in docs/history/issue-45-meta-pricing.md:
//
// - 2025-07-01: per-message pricing; "utility templates delivered within an open customer service
//   window are free"; non-template (service) messages free (since 2024-11-01).
// - 2026-10-01: "Meta will charge for service messages" and "for utility messages sent in response
//   to users within an open 24-hour customer service window" (Meta's "Upcoming pricing updates"
//   page). The service rate is the market's utility rate, as BSPs report Meta's rate card; an
//   operator who knows better loads their own rows (`tidings prices load`).
//
// The rows are written into the price_book table at start (store.ts), where `tidings prices list`
// shows them beside the operator's.
import { ANY_MARKET, type BookRow, type PriceCategory } from './book.ts';
import { DEFAULT_PRICES } from './default-prices.ts';
import { micros } from './money-text.ts';

const PER_MESSAGE = new Date('2025-07-01T00:00:00Z');
const SERVICE_CHARGED = new Date('2026-10-01T00:00:00Z');
const TEMPLATE_CATEGORIES = ['marketing', 'utility', 'authentication'] as const;

function shippedRows(): BookRow[] {
  const rows: BookRow[] = [];
  const row = (
    market: string,
    category: PriceCategory,
    rule: BookRow['rule'],
    priceMicros: number | null,
    effectiveFrom: Date,
    note: string,
  ) => rows.push({ market, category, rule, priceMicros, effectiveFrom, source: 'shipped', note });
  const markets: [string, Record<string, string | undefined>][] = [
    [ANY_MARKET, DEFAULT_PRICES.default],
    ...Object.entries(DEFAULT_PRICES.countries),
  ];
  for (const [market, prices] of markets) {
    for (const category of TEMPLATE_CATEGORIES) {
      const price = prices[category] ?? DEFAULT_PRICES.default[category];
      if (price === undefined) continue;
      row(market, category, 'list', micros(price), PER_MESSAGE, "Meta's per-message rates (2025), rounded");
    }
    const utility = prices.utility ?? DEFAULT_PRICES.default.utility!;
    row(
      market,
      'service',
      'list',
      micros(utility),
      SERVICE_CHARGED,
      "Meta charges service messages from 2026-10-01; at the market's utility rate, as BSPs report it",
    );
  }
  row(ANY_MARKET, 'service', 'list', 0, PER_MESSAGE, 'Service messages free since 2024-11-01');
  row(ANY_MARKET, 'utility', 'in_window', 0, PER_MESSAGE, 'Utility templates free inside the window');
  row(
    ANY_MARKET,
    'utility',
    'in_window',
    null,
    SERVICE_CHARGED,
    'Meta charges utility templates inside the window from 2026-10-01',
  );
  return rows;
}

export const SHIPPED_BOOK: readonly BookRow[] = shippedRows();
