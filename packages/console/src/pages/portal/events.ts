// The event types a webhook may subscribe to: the API documents them (src/kernel/outbox/events.ts, the
// OpenAPI document's webhook event `type`). The compiler holds this copy to the SDK's EventType,
// both ways, so a type added to the API fails `npm run console:typecheck` until it is listed here.
import type { EventType } from '@tidings/sdk';

export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.erased',
  'contact.tagged',
  'contact.untagged',
  'conversation.opened',
  'conversation.assigned',
  'conversation.closed',
  'template.status_changed',
  'template.quality_changed',
  'template.category_changed',
  'bulk_job.completed',
  'wallet.credited',
  'wallet.low_balance',
  'account.status_changed',
  'channel.quality_changed',
  'channel.account_updated',
  'channel.error',
  'call.status_changed',
  'campaign.status_changed',
  'journey_run.completed',
  'journey_run.failed',
  'rule.run_failed',
  'enrollment.completed',
  'enrollment.exited',
  'webhook.test',
] as const satisfies readonly EventType[];

type Missing = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
// Fails to compile when the API documents a type this list lacks.
export const ALL_LISTED: [Missing] extends [never] ? true : Missing = true;

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
