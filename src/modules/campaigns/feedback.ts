// What the rest of the system tells campaigns, in its own transactions:
//   - a reply: the inbound path marks the contact's recipient rows messaged in the 72 hours before
//     (docs/messaging.md § Campaigns: `replied`);
//   - a throttling answer: the dispatch of a campaign's message was told to slow down (WhatsApp's
//     130429 and its kin), so the campaign is held to half its rate (pace.ts).

import type { Tx } from '../../kernel/database/db.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { idAt } from '../../kernel/values/ids.ts';
import { channelLimits } from './channel-limits.ts';
import { type PaceState, throttledBackoff } from './pace.ts';

export const REPLY_WINDOW_MS = 72 * 3600 * 1000;

/**
 * The contact wrote at `wroteAt`: the recipients its campaign messages of the 72 hours before went
 * to have replied (found through the messages to its number or its user id, newest ids only).
 */
export async function noteCampaignReply(
  tx: Tx,
  contact: { account_id: string; id: string; phone: string | null; whatsapp_user_id: string | null },
  wroteAt: Date,
): Promise<void> {
  await tx.query(
    `UPDATE campaign_recipients r SET replied_at = $5
       FROM messages m
      WHERE m.account_id = $1 AND (m.phone = $2 OR m.whatsapp_user_id = $6) AND m.id >= $4
        AND m.campaign_id IS NOT NULL
        AND m.created_at <= $5
        AND r.campaign_id = m.campaign_id AND r.contact_id = $3 AND r.message_id = m.id
        AND r.replied_at IS NULL`,
    [
      contact.account_id,
      contact.phone,
      contact.id,
      idAt('message', new Date(wroteAt.getTime() - REPLY_WINDOW_MS)),
      wroteAt,
      contact.whatsapp_user_id,
    ],
  );
}

/**
 * Messages of these campaigns were throttled at `now`: each is held to half its rate, in a
 * transaction of its own after the dispatch recorded its outcomes (it waits for the rounds under
 * way, which hold the campaign's row shared).
 */
/** What replies and throttled dispatches tell campaigns (hooks of messages and conversations), wired in app.ts. */
export function subscribeCampaignFeedback(hooks: Hooks): void {
  hooks.on('conversations.customer-wrote', (tx, { contact, at }) => noteCampaignReply(tx, contact, at));
  hooks.on('messages.campaign-throttled', (tx, { campaignIds, at }) =>
    holdBack(tx, [...new Set(campaignIds)], at),
  );
}

async function holdBack(tx: Tx, campaignIds: string[], now: Date): Promise<void> {
  const { rows } = await tx.query<
    PaceState & { id: string; provider: 'sandbox' | 'whatsapp_cloud' | null; whatsapp: null | object }
  >(
    `SELECT c.id, c.messages_per_second, c.backoff_rate, c.backoff_at, ch.provider, ch.settings->'whatsapp' AS whatsapp
       FROM campaigns c LEFT JOIN account_channels ch ON ch.account_id = c.account_id
      WHERE c.id = ANY($1::text[]) AND c.status = 'running' ORDER BY c.id FOR UPDATE OF c`,
    [campaignIds],
  );
  for (const c of rows) {
    const rate = throttledBackoff(c, channelLimits(c.provider ?? 'sandbox', c.whatsapp).perSecond, now);
    if (rate === null) continue;
    await tx.query('UPDATE campaigns SET backoff_rate = $2, backoff_at = $3 WHERE id = $1', [
      c.id,
      rate,
      now,
    ]);
  }
}
