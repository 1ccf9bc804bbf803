// The face of pricing: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { ruleKey, ruleView } from './book.ts';
export type { PriceCategory, PriceTable } from './prices.ts';
export { loadPrices } from './prices.ts';
export type { Quote } from './quote.ts';
export { categoryOf, quote, SERVICE_WINDOW_MS, windowOpen } from './quote.ts';
export { PRICING_RULE_EXAMPLE, PricingRuleSchema } from './schemas.ts';
export { attachBook, loadOperatorRows, operatorRowsOf, readBook, writeShippedBook } from './store.ts';
