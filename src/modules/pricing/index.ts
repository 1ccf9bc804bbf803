export type { PriceCategory, PriceTable } from './prices.ts';
export { loadPrices } from './prices.ts';
export { categoryOf, quote, SERVICE_WINDOW_MS, windowOpen } from './quote.ts';
