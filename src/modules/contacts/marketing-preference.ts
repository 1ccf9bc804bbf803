// A customer's marketing preference as WhatsApp reports it (the `user_preferences` webhook): "stop"
// marks the contact `marketingOptOut`, "resume" clears it. The contact is found as inbound messages
// find it (by user id, wa_id, then phone: identity.ts) and made when the customer is new, so the
// preference holds when the business adds the number later. Meta may deliver webhooks out of order: a preference older
// than the last one applied (`marketing_preference_at`) changes nothing.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { type CustomerIdentity, insertCustomer, lockCustomer } from './identity.ts';
import type { MergeServices } from './merge.ts';
import { CONTACT_COLUMNS, type ContactRow } from './repo.ts';
import { toContact } from './schemas.ts';

export interface MarketingPreference {
  /** WhatsApp's id of the customer's number (digits), their user id: one at least. */
  waId: string | null;
  userId: string | null;
  parentUserId: string | null;
  stopped: boolean;
  at: Date;
}

/** Applies the preference; answers the events it makes (none when nothing changed). */
export async function applyMarketingPreference(
  s: MergeServices,
  tx: Tx,
  accountId: string,
  preference: MarketingPreference,
): Promise<EventInput[]> {
  const now = s.now();
  const who: CustomerIdentity = {
    phone: preference.waId ? `+${preference.waId}` : null,
    waId: preference.waId,
    userId: preference.userId,
    parentUserId: preference.parentUserId,
    username: null,
  };
  let before = await lockCustomer(s, tx, accountId, who);
  let created = false;
  if (!before) {
    const made = await insertCustomer(tx, accountId, who, { name: null, now });
    created = made !== null;
    // Made meanwhile by another transaction: a new statement sees it.
    before = made ?? (await lockCustomer(s, tx, accountId, who))!;
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
