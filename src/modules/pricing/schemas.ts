import { Type } from 'typebox';

/** A rule as the API shows it: the example a document's deeply nested answers take whole. */
export const PRICING_RULE_EXAMPLE = {
  key: 'list:US:marketing:2025-07-01:shipped',
  kind: 'list',
  market: 'US',
  effectiveFrom: '2025-07-01',
  source: 'shipped',
};

export const PricingRuleSchema = Type.Object(
  {
    key: Type.String({
      description:
        'The rule, whole: `<kind>:<market>:<category>:<effectiveFrom>:<source>`, or `sandbox`, or `none` (no row in force). What GET /account/pricing/adjustments groups by.',
      examples: ['list:US:marketing:2025-07-01:shipped'],
    }),
    kind: Type.String({
      description:
        "`list` (the market's list price), `in_window` (the price inside an open customer service window), `sandbox` (the sandbox charges nothing), `none`.",
    }),
    market: Type.Union([Type.String(), Type.Null()], {
      description: "The row's market: an ISO 3166-1 alpha-2 code, or `*` (every market without its own row).",
    }),
    effectiveFrom: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
      description: 'The day (UTC) from which the row is in force.',
    }),
    source: Type.Union([Type.String(), Type.Null()], {
      description:
        "`shipped` (Tidings' book), `operator` (loaded by `tidings prices load`), `file` (TIDINGS_PRICES_FILE).",
    }),
  },
  {
    title: 'PricingRule',
    examples: [PRICING_RULE_EXAMPLE],
    description: "The price book's row that set the charge (docs/messaging.md § Prices and the wallet).",
  },
);
