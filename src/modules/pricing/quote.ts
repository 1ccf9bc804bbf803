// What one message costs: the list price in force for its recipient's market and its category, and
// what the wallet is actually charged, with the book's in-window rule applied (a utility template
// delivered inside an open customer service window was free until Meta began charging it on
// 2026-10-01: rows of the book, book.ts), and nothing the sandbox carries ever charged. Estimates
// and sends both price through here at the same instant, so an estimate is exactly what the send
// then charges; `rule` names the book's row that set the charge.
import type { Provider, TemplateCategory } from '../../channels/types.ts';
import type { PriceCategory } from './book.ts';
import type { PriceTable } from './prices.ts';

export type FreeReason = 'customer_service_window' | 'sandbox';

export interface Quote {
  /** ISO 3166-1 alpha-2 of the recipient's number; null for a number of no country (+800 …). */
  country: string | null;
  category: PriceCategory;
  listPriceMicros: number;
  chargeMicros: number;
  /** Why a message with a list price costs nothing; null when it is charged (or costs nothing anyway). */
  freeReason: FreeReason | null;
  /** The book's rule that set the charge (book.ts ruleKey), `sandbox`, or `none` where no row is in force. */
  rule: string;
}

/** The category billed: the template's, or `service` for a free-form message. */
export function categoryOf(templateCategory: TemplateCategory | null): PriceCategory {
  return templateCategory ? (templateCategory.toLowerCase() as PriceCategory) : 'service';
}

export function quote(
  prices: PriceTable,
  input: {
    country: string | null;
    category: PriceCategory;
    windowOpen: boolean;
    provider: Provider;
    at: Date;
  },
): Quote {
  const list = prices.entry(input.country, input.category, 'list', input.at);
  const listPriceMicros = list?.priceMicros ?? 0;
  const base = { country: input.country, category: input.category, listPriceMicros };
  if (listPriceMicros === 0) return { ...base, chargeMicros: 0, freeReason: null, rule: list?.key ?? 'none' };
  if (input.provider === 'sandbox')
    return { ...base, chargeMicros: 0, freeReason: 'sandbox', rule: 'sandbox' };
  if (input.windowOpen) {
    const inWindow = prices.entry(input.country, input.category, 'in_window', input.at);
    if (inWindow && inWindow.priceMicros !== null && inWindow.priceMicros < listPriceMicros) {
      return {
        ...base,
        chargeMicros: inWindow.priceMicros,
        freeReason: inWindow.priceMicros === 0 ? 'customer_service_window' : null,
        rule: inWindow.key,
      };
    }
  }
  return { ...base, chargeMicros: listPriceMicros, freeReason: null, rule: list!.key };
}

/** The customer service window: 24 hours from the contact's last inbound message. */
export const SERVICE_WINDOW_MS = 24 * 3600 * 1000;

export function windowOpen(lastInboundAt: Date | null, now: Date): boolean {
  return lastInboundAt !== null && now.getTime() < lastInboundAt.getTime() + SERVICE_WINDOW_MS;
}
