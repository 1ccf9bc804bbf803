// The WhatsApp Business app's address book of a coexistence number (Meta's smb_app_state_sync: at
// onboarding, then each change made in the app): each contact added or edited there is a contact
// here, found by user id or number as any customer is (identity.ts), made when new, named by the
// app when it has no name yet (a name set here is the business's own and is kept). A contact
// removed from the app is kept: the business's history with the customer is not the phone book's
// to delete, and erasure is a request of its own.
import type { AppContact } from '../../channels/types.ts';
import type { Tx } from '../../kernel/database/db.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { customerContact } from './identity.ts';
import type { MergeServices } from './merge.ts';
import { CONTACT_COLUMNS, type ContactRow } from './repo.ts';
import { toContact } from './schemas.ts';

/** Applies the app's contacts; answers the events (contact.created, contact.updated) to emit. */
export async function applyAppContacts(
  s: MergeServices,
  tx: Tx,
  accountId: string,
  contacts: AppContact[],
): Promise<EventInput[]> {
  const events: EventInput[] = [];
  const now = s.now();
  const added = contacts.filter((c) => c.action === 'add');
  // Customers in a fixed order: two syncs never lock contacts in a cycle.
  added.sort((a, b) => (a.userId ?? a.phone ?? '').localeCompare(b.userId ?? b.phone ?? ''));
  for (const c of added) {
    const who = {
      phone: c.phone,
      waId: c.phone?.replace(/\D/g, '') ?? null,
      userId: c.userId,
      parentUserId: null,
      username: c.username,
    };
    const name = c.fullName?.trim().slice(0, 200) || null;
    const { contact, isNew } = await customerContact(s, tx, accountId, who, { name, now }, events);
    if (isNew || contact.name || !name) continue;
    const { rows } = await tx.query<ContactRow>(
      `UPDATE contacts SET name = $3, updated_at = $4 WHERE account_id = $1 AND id = $2 AND name IS NULL
       RETURNING ${CONTACT_COLUMNS}`,
      [accountId, contact.id, name, now],
    );
    if (rows[0])
      events.push({
        type: 'contact.updated',
        accountId,
        data: { ...toContact(rows[0]), previous: { name: null } },
      });
  }
  return events;
}
