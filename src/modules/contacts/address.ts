// Where a contact's messages go, and its country, whichever way Meta knows the customer: by number,
// or by WhatsApp user id alone (a customer with a username who did not share their number). A
// contact has at least one of the two (migrations/037_whatsapp_user_ids.sql).
import { countryOf } from '../../kernel/values/phones.ts';
import { countryOfUserId } from '../../kernel/values/whatsapp-user-ids.ts';

/** A contact's row, or its view (toContact): either names the two. */
type Identified = { phone: string | null } & (
  | { whatsapp_user_id: string | null }
  | { whatsappUserId: string | null }
);

const userIdOf = (c: Identified) => ('whatsappUserId' in c ? c.whatsappUserId : c.whatsapp_user_id);

/** The contact's address (isPhoneAddress): its number when it has one, its user id otherwise. */
export function addressOf(contact: Identified): string {
  const address = contact.phone ?? userIdOf(contact);
  if (!address) throw new Error('a contact with neither a phone nor a WhatsApp user id');
  return address;
}

/** How a send names the contact's chat: `to` its number, or its `whatsappUserId` when it has none. */
export function recipientOf(contact: Identified): { to: string } | { whatsappUserId: string } {
  if (contact.phone) return { to: contact.phone };
  return { whatsappUserId: addressOf(contact) };
}

/** ISO 3166-1 alpha-2 of the contact: its number's, or the one its user id begins with. */
export function contactCountry(contact: Identified): string | null {
  if (contact.phone) return countryOf(contact.phone);
  const userId = userIdOf(contact);
  return userId ? countryOfUserId(userId) : null;
}
