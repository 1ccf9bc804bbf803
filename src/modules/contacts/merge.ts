// One person, one contact. When Meta shows that two contacts are the same customer (one known by
// number, one by WhatsApp user id alone, and a callback naming both: identity.ts), the second is
// merged into the first, in the transaction that learnt it, both rows locked (in id order):
//   1. the hook `contacts.merging` lets each module that keeps rows of contacts move the merged
//      contact's rows to the survivor, settling its own uniqueness (conversations and their
//      messages, enrollments, journey runs, campaign recipients, calls: docs/architecture.md § Hooks);
//   2. the merged contact is deleted, and its id recorded in contact_merges, so that the API answers
//      it with the survivor (GET /contacts/{id}; docs/messaging.md § Who a customer is);
//   3. the survivor takes what it lacked: the number or the user id, the name and email, tags and
//      attributes (its own first, within the limits), the later service window, and the stricter
//      consent (opted out of marketing if either was);
//   4. `contact.merged` carries the survivor with `survivorId` and `mergedId`.
// Which survives: the contact known by number. Its id is the one integrations hold (imports,
// campaigns, CRMs keyed by phone); the user-id-only one was made by the customer's first message.
import type { Sql, Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { type AttributeValue, MAX_ATTRIBUTES, MAX_TAGS } from './fields.ts';
import { CONTACT_COLUMNS, type ContactRow } from './repo.ts';
import { toContact } from './schemas.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /**
     * Two contacts are one customer: each subscriber moves its rows of `mergedId` to `survivorId`
     * (both contacts locked; run before the merged contact is deleted). `merged` holds the merged
     * contact's addresses, by which its messages are found (messages_account_phone, _user_id).
     */
    'contacts.merging': {
      accountId: string;
      survivorId: string;
      mergedId: string;
      merged: { phone: string | null; whatsappUserId: string | null };
    };
  }
}

export interface MergeServices {
  events: EventOutbox;
  now: () => Date;
}

/** The survivor's attributes, then the merged contact's it lacks, up to the limit. */
function unitedAttributes(
  survivor: Record<string, AttributeValue>,
  merged: Record<string, AttributeValue>,
): Record<string, AttributeValue> {
  const out = { ...survivor };
  for (const [name, value] of Object.entries(merged)) {
    if (Object.keys(out).length >= MAX_ATTRIBUTES) break;
    if (!(name in out)) out[name] = value;
  }
  return out;
}

/** Merges `merged` into `survivor` (both locked by the caller); answers the survivor as it is now. */
export async function mergeContacts(
  s: MergeServices,
  tx: Tx,
  survivor: ContactRow,
  merged: ContactRow,
): Promise<ContactRow> {
  const accountId = survivor.account_id;
  const now = s.now();
  await s.events.hook(tx, 'contacts.merging', {
    accountId,
    survivorId: survivor.id,
    mergedId: merged.id,
    merged: { phone: merged.phone, whatsappUserId: merged.whatsapp_user_id },
  });
  // Gone before the survivor takes its number or user id (each is unique per account).
  const gone = await tx.query<{ marketing_preference_at: Date | null }>(
    'DELETE FROM contacts WHERE account_id = $1 AND id = $2 RETURNING marketing_preference_at',
    [accountId, merged.id],
  );
  await tx.query('UPDATE contact_merges SET survivor_id = $3 WHERE account_id = $1 AND survivor_id = $2', [
    accountId,
    merged.id,
    survivor.id,
  ]);
  await tx.query(
    `INSERT INTO contact_merges (account_id, merged_id, survivor_id, merged_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [accountId, merged.id, survivor.id, now],
  );
  const tags = [...new Set([...survivor.tags, ...merged.tags])].slice(0, MAX_TAGS);
  const { rows } = await tx.query<ContactRow>(
    `UPDATE contacts
        SET phone = coalesce(phone, $3), wa_id = coalesce(wa_id, $4),
            whatsapp_user_id = coalesce(whatsapp_user_id, $5),
            whatsapp_parent_user_id = coalesce(whatsapp_parent_user_id, $6),
            whatsapp_username = coalesce(whatsapp_username, $7),
            name = coalesce(name, $8), email = coalesce(email, $9), tags = $10, attributes = $11,
            opted_in = opted_in OR $12, marketing_opt_out = marketing_opt_out OR $13,
            marketing_preference_at = greatest(marketing_preference_at, $14::timestamptz),
            last_inbound_at = greatest(last_inbound_at, $15::timestamptz), updated_at = $16
      WHERE account_id = $1 AND id = $2
      RETURNING ${CONTACT_COLUMNS}`,
    [
      accountId,
      survivor.id,
      merged.phone,
      merged.wa_id,
      merged.whatsapp_user_id,
      merged.whatsapp_parent_user_id,
      merged.whatsapp_username,
      merged.name,
      merged.email,
      tags,
      JSON.stringify(unitedAttributes(survivor.attributes, merged.attributes)),
      merged.opted_in,
      merged.marketing_opt_out,
      gone.rows[0]?.marketing_preference_at ?? null,
      merged.last_inbound_at,
      now,
    ],
  );
  const after = rows[0]!;
  await s.events.emit(tx, {
    type: 'contact.merged',
    accountId,
    data: { ...toContact(after), survivorId: survivor.id, mergedId: merged.id },
  });
  return after;
}

/** The contact an id names now: the survivor it was merged into, or the id itself. */
export async function currentContactId(sql: Sql, accountId: string, id: string): Promise<string> {
  const { rows } = await sql.query<{ survivor_id: string }>(
    'SELECT survivor_id FROM contact_merges WHERE account_id = $1 AND merged_id = $2',
    [accountId, id],
  );
  return rows[0]?.survivor_id ?? id;
}

/**
 * Forgets the ids merged into an erased contact: nothing is kept that names the customer. Answers
 * them: what was written before a merge (events, runs' variables) names the merged id.
 */
export async function forgetMerges(tx: Tx, accountId: string, survivorId: string): Promise<string[]> {
  const { rows } = await tx.query<{ merged_id: string }>(
    'DELETE FROM contact_merges WHERE account_id = $1 AND survivor_id = $2 RETURNING merged_id',
    [accountId, survivorId],
  );
  return rows.map((r) => r.merged_id);
}
