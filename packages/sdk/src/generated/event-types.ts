// Generated from openapi.json by scripts/event-types.ts (npm run sdk:generate): do not edit.
import type { EventType } from '../types.ts';

/** The event types a webhook may subscribe to, in the document's order. */
export const EVENT_TYPES = ["message.received", "message.sent", "message.delivered", "message.read", "message.failed", "contact.created", "contact.updated", "contact.deleted", "contact.erased", "contact.merged", "contact.tagged", "contact.untagged", "conversation.opened", "conversation.assigned", "conversation.closed", "template.status_changed", "template.quality_changed", "template.category_changed", "bulk_job.completed", "wallet.credited", "wallet.low_balance", "account.status_changed", "channel.quality_changed", "channel.account_updated", "channel.error", "call.status_changed", "campaign.status_changed", "journey_run.completed", "journey_run.failed", "rule.run_failed", "enrollment.completed", "enrollment.exited", "webhook.test"] as const satisfies readonly EventType[];
