// What one message costs: the list price for its recipient's country and its category, and what the
// wallet is actually charged, with WhatsApp's free rules applied (as on the WhatsApp Cloud API):
// utility templates and free-form (service) messages inside an open customer service window cost
// nothing, and nothing the sandbox carries is ever charged. Estimates and sends both price through
// here, so an estimate is exactly what the send then charges.
import type { Provider, TemplateCategory } from '../../channels/types.ts';
import type { PriceCategory, PriceTable } from './prices.ts';

export type FreeReason = 'customer_service_window' | 'sandbox';

export interface Quote {
  /** ISO 3166-1 alpha-2 of the recipient's number; null for a number of no country (+800 …). */
  country: string | null;
  category: PriceCategory;
  listPriceMicros: number;
  chargeMicros: number;
  /** Why a message with a list price costs nothing; null when it is charged (or costs nothing anyway). */
  freeReason: FreeReason | null;
}

/** The category billed: the template's, or `service` for a free-form message. */
export function categoryOf(templateCategory: TemplateCategory | null): PriceCategory {
  return templateCategory ? (templateCategory.toLowerCase() as PriceCategory) : 'service';
}

export function quote(
  prices: PriceTable,
  input: { country: string | null; category: PriceCategory; windowOpen: boolean; provider: Provider },
): Quote {
  const listPriceMicros = prices.listPrice(input.country, input.category);
  const base = { country: input.country, category: input.category, listPriceMicros };
  if (listPriceMicros === 0) return { ...base, chargeMicros: 0, freeReason: null };
  if (input.provider === 'sandbox') return { ...base, chargeMicros: 0, freeReason: 'sandbox' };
  if (input.windowOpen && (input.category === 'utility' || input.category === 'service')) {
    return { ...base, chargeMicros: 0, freeReason: 'customer_service_window' };
  }
  return { ...base, chargeMicros: listPriceMicros, freeReason: null };
}

/** The customer service window: 24 hours from the contact's last inbound message. */
export const SERVICE_WINDOW_MS = 24 * 3600 * 1000;

export function windowOpen(lastInboundAt: Date | null, now: Date): boolean {
  return lastInboundAt !== null && now.getTime() < lastInboundAt.getTime() + SERVICE_WINDOW_MS;
}
