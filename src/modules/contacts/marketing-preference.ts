// A customer's marketing preference as WhatsApp reports it (the `user_preferences` webhook): "stop"
// marks the contact `marketingOptOut`, "resume" clears it. The contact is found as inbound messages
// find it (by wa_id, then by phone) and made when the number is new, so the preference holds when
// the business adds the number later. Meta may deliver webhooks out of order: a preference older
// than the last one applied (`marketing_preference_at`) changes nothing.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { CONTACT_COLUMNS, type ContactRow, insertSender, lockSender } from './repo.ts';
import { toContact } from './schemas.ts';

export interface MarketingPreference {
  /** WhatsApp's id of the customer's number (digits). */
  waId: string;
  stopped: boolean;
  at: Date;
}

/** Applies the preference; answers the events it makes (none when nothing changed). */
export async function applyMarketingPreference(
  tx: Tx,
  accountId: string,
  preference: MarketingPreference,
  now: Date,
): Promise<EventInput[]> {
  const phone = `+${preference.waId}`;
  let before = await lockSender(tx, accountId, phone, preference.waId);
  let created = false;
  if (!before) {
    const made = await insertSender(tx, {
      id: newId('contact'),
      accountId,
      phone,
      name: null,
      waId: preference.waId,
      now,
    });
    created = made !== null;
    // Made meanwhile by another transaction: a new statement sees it.
    before = made ?? (await lockSender(tx, accountId, phone, preference.waId))!;
  }
  const { rows } = await tx.query<ContactRow>(
    `UPDATE contacts SET marketing_opt_out = $3, marketing_preference_at = $4,
            updated_at = CASE WHEN marketing_opt_out = $3 THEN updated_at ELSE $5 END
      WHERE account_id = $1 AND id = $2
        AND (marketing_preference_at IS NULL OR marketing_preference_at < $4)
      RETURNING ${CONTACT_COLUMNS}`,
    [accountId, before.id, preference.stopped, preference.at, now],
  );
  const after = rows[0];
  if (created) return [{ type: 'contact.created', accountId, data: toContact(after ?? before) }];
  if (!after || after.marketing_opt_out === before.marketing_opt_out) return [];
  return [
    {
      type: 'contact.updated',
      accountId,
      data: { ...toContact(after), previous: { marketingOptOut: before.marketing_opt_out } },
    },
  ];
}
