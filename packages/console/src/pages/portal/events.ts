// The event types a webhook may subscribe to, by family: the SDK's EVENT_TYPES, generated from the
// API document's webhook event `type` (the server's catalogue), not a list of the console's own.
import { EVENT_TYPES } from '@tidings/sdk';

/** The types by family (message, contact, …), in the API's order. */
export function eventFamilies(): { family: string; types: string[] }[] {
  const out: { family: string; types: string[] }[] = [];
  for (const type of EVENT_TYPES) {
    const family = type.split('.')[0]!;
    const last = out[out.length - 1];
    if (last?.family === family) last.types.push(type);
    else out.push({ family, types: [type] });
  }
  return out;
}
