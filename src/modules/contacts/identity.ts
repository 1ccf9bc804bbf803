// Who a customer is, as Meta's callbacks say it, and the contact that is them. Since April 2026 a
// callback names a customer by up to three things: their number (`from`, `wa_id`, `recipient_id`),
// WhatsApp's id for that number (`wa_id`, which can differ from the number the business wrote to),
// and their business-scoped user id (`user_id`, `from_user_id`, `recipient_user_id`), with a parent
// id and a username beside it; a customer with a username may come with the user id alone.
//
// The rules (docs/messaging.md § Who a customer is):
//   - the contact is found by user id, then wa_id, then phone;
//   - what it did not know is learnt: a user id on a contact known by number, a number on one known
//     by user id, the latest parent id and username, the wa_id;
//   - when the identity names two contacts (a callback carrying a number and a user id that each
//     have a contact), they are one person: merged into one (merge.ts), never left as two;
//   - a contact is made only from what Meta said: a number, a user id, or both.
import type { ProviderUpdate } from '../../channels/types.ts';
import type { Sql, Tx } from '../../kernel/database/db.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { type MergeServices, mergeContacts } from './merge.ts';
import { CONTACT_COLUMNS, type ContactRow } from './repo.ts';
import { toContact } from './schemas.ts';

/** What a callback said of a customer; null where it said nothing. One of phone and userId at least. */
export interface CustomerIdentity {
  /** E.164. */
  phone: string | null;
  /** WhatsApp's id for the number (digits). */
  waId: string | null;
  userId: string | null;
  parentUserId: string | null;
  username: string | null;
}

/** How senders are ordered so that two batches lock contacts in one order: user id, else number. */
export const identityKey = (who: Pick<CustomerIdentity, 'phone' | 'userId'>): string =>
  who.userId ?? who.phone ?? '';

/** Whose contact a row is: which of the identity's keys it holds, best first. */
function rank(row: ContactRow, who: CustomerIdentity): number {
  if (who.userId && row.whatsapp_user_id === who.userId) return 0;
  if (who.waId && row.wa_id === who.waId) return 1;
  return 2;
}

/**
 * The contacts the identity names (by user id, wa_id or phone), locked in id order for the
 * caller's transaction (FOR NO KEY UPDATE: rows referencing them may still be inserted).
 */
async function lockNamed(tx: Tx, accountId: string, who: CustomerIdentity): Promise<ContactRow[]> {
  const { rows } = await tx.query<ContactRow>(
    `SELECT ${CONTACT_COLUMNS} FROM contacts
      WHERE account_id = $1 AND (phone = $2 OR wa_id = $3 OR whatsapp_user_id = $4)
      ORDER BY id FOR NO KEY UPDATE`,
    [accountId, who.phone, who.waId, who.userId],
  );
  return rows;
}

/**
 * What `row` learns from the identity, as one UPDATE (none when it knows it all): the user id it
 * lacks (or a new one, Meta's word being the latest), the number it lacks, the parent id, the
 * username and the wa_id Meta reported last.
 */
async function learn(tx: Tx, row: ContactRow, who: CustomerIdentity): Promise<ContactRow> {
  const next = {
    phone: row.phone ?? who.phone,
    wa_id: who.waId ?? row.wa_id,
    whatsapp_user_id: who.userId ?? row.whatsapp_user_id,
    whatsapp_parent_user_id: who.parentUserId ?? row.whatsapp_parent_user_id,
    whatsapp_username: who.username ?? row.whatsapp_username,
  };
  const changed = (Object.keys(next) as (keyof typeof next)[]).some((k) => next[k] !== row[k]);
  if (!changed) return row;
  // Meta's bookkeeping, not the business's change: no event, updated_at kept (as lastInboundAt).
  const { rows } = await tx.query<ContactRow>(
    `UPDATE contacts SET phone = $3, wa_id = $4, whatsapp_user_id = $5, whatsapp_parent_user_id = $6,
            whatsapp_username = $7
      WHERE account_id = $1 AND id = $2 RETURNING ${CONTACT_COLUMNS}`,
    [
      row.account_id,
      row.id,
      next.phone,
      next.wa_id,
      next.whatsapp_user_id,
      next.whatsapp_parent_user_id,
      next.whatsapp_username,
    ],
  );
  return rows[0]!;
}

/**
 * The customer's contact, locked for this transaction and knowing what the identity says, or null
 * when the account has none. Two contacts named by it are merged first: the one known by number
 * survives (merge.ts says why), and the other's rows move to it.
 */
export async function lockCustomer(
  s: MergeServices,
  tx: Tx,
  accountId: string,
  who: CustomerIdentity,
): Promise<ContactRow | null> {
  const named = await lockNamed(tx, accountId, who);
  if (named.length === 0) return null;
  let contact = named.sort((a, b) => rank(a, who) - rank(b, who))[0]!;
  if (named.length > 1) {
    // The number's contact survives; the others (at most two: the user id's and the wa_id's) join it.
    const survivor = named.find((c) => c.phone !== null && c.phone === who.phone) ?? contact;
    contact = survivor;
    for (const other of named)
      if (other.id !== survivor.id) contact = await mergeContacts(s, tx, contact, other);
  }
  return learn(tx, contact, who);
}

/**
 * A contact made from what a callback said (its number and user id as given, the profile name; a
 * customer who wrote has their service window open from `lastInboundAt`); null if another
 * transaction took its number or user id meanwhile (lockCustomer then finds it).
 */
export async function insertCustomer(
  tx: Tx,
  accountId: string,
  who: CustomerIdentity,
  made: { name: string | null; now: Date; lastInboundAt?: Date },
): Promise<ContactRow | null> {
  const { rows } = await tx.query<ContactRow>(
    `INSERT INTO contacts (id, account_id, phone, name, created_at, updated_at, wa_id, last_inbound_at,
                           whatsapp_user_id, whatsapp_parent_user_id, whatsapp_username)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9, $10)
     ON CONFLICT DO NOTHING
     RETURNING ${CONTACT_COLUMNS}`,
    [
      newId('contact'),
      accountId,
      who.phone,
      made.name,
      made.now,
      who.waId,
      made.lastInboundAt ?? null,
      who.userId,
      who.parentUserId,
      who.username,
    ],
  );
  return rows[0] ?? null;
}

/**
 * The customer's contact, locked; made (with its contact.created event in `events`) when the
 * account has none. `isNew`: made by this call.
 */
export async function customerContact(
  s: MergeServices,
  tx: Tx,
  accountId: string,
  who: CustomerIdentity,
  made: { name: string | null; now: Date; lastInboundAt?: Date },
  events: EventInput[],
): Promise<{ contact: ContactRow; isNew: boolean }> {
  const found = await lockCustomer(s, tx, accountId, who);
  if (found) return { contact: found, isNew: false };
  const created = await insertCustomer(tx, accountId, who, made);
  if (created) {
    events.push({ type: 'contact.created', accountId, data: toContact(created) });
    return { contact: created, isNew: true };
  }
  // Made meanwhile by another transaction (a send to the number, the API): a new statement sees it.
  return { contact: (await lockCustomer(s, tx, accountId, who))!, isNew: false };
}

/** What a provider reported of a contact's customer beside a message: to remember on the contact. */
export interface IdentityReport {
  accountId: string;
  contactId: string;
  waId?: string | null;
  userId?: string | null;
  parentUserId?: string | null;
  username?: string | null;
}

/**
 * Remembers what Meta reported of each contact's customer (the latest report wins; WhatsApp's
 * bookkeeping: no event), in one statement that locks the contacts it changes in id order. Callers
 * run it before they lock messages, as inbound processing does (contact, then conversation, then
 * messages), so the two never wait on each other in a cycle. A user id another contact holds is the
 * sign that the two are one customer: that contact is merged into this one (lockCustomer).
 */
export async function rememberIdentities(s: MergeServices, tx: Tx, reports: IdentityReport[]): Promise<void> {
  const latest = new Map(reports.map((r) => [`${r.accountId}/${r.contactId}`, r]));
  if (latest.size === 0) return;
  const sorted = [...latest.values()].sort((a, b) => a.contactId.localeCompare(b.contactId));
  const column = (pick: (r: IdentityReport) => string | null | undefined) =>
    sorted.map((r) => pick(r) ?? null);
  const { rows: taken } = await tx.query<{ id: string }>(
    `WITH u AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                AS u (account_id, id, wa_id, user_id, parent_user_id, username)
     ), changed AS (
       UPDATE contacts c SET wa_id = coalesce(u.wa_id, c.wa_id),
              whatsapp_user_id = coalesce(u.user_id, c.whatsapp_user_id),
              whatsapp_parent_user_id = coalesce(u.parent_user_id, c.whatsapp_parent_user_id),
              whatsapp_username = coalesce(u.username, c.whatsapp_username)
         FROM (SELECT * FROM u ORDER BY id) u
        WHERE c.account_id = u.account_id AND c.id = u.id
          AND (c.wa_id IS DISTINCT FROM coalesce(u.wa_id, c.wa_id)
               OR c.whatsapp_user_id IS DISTINCT FROM coalesce(u.user_id, c.whatsapp_user_id)
               OR c.whatsapp_parent_user_id IS DISTINCT FROM coalesce(u.parent_user_id, c.whatsapp_parent_user_id)
               OR c.whatsapp_username IS DISTINCT FROM coalesce(u.username, c.whatsapp_username))
          -- A user id another contact holds is left to the merge below.
          AND NOT EXISTS (SELECT 1 FROM contacts o WHERE o.account_id = u.account_id
                            AND o.whatsapp_user_id = u.user_id AND o.id <> c.id)
       RETURNING c.id
     )
     SELECT u.id FROM u
      WHERE u.user_id IS NOT NULL
        AND EXISTS (SELECT 1 FROM contacts o WHERE o.account_id = u.account_id
                      AND o.whatsapp_user_id = u.user_id AND o.id <> u.id)`,
    [
      column((r) => r.accountId),
      column((r) => r.contactId),
      column((r) => r.waId),
      column((r) => r.userId),
      column((r) => r.parentUserId),
      column((r) => r.username),
    ],
  );
  for (const { id } of taken) {
    const r = sorted.find((x) => x.contactId === id)!;
    const { rows } = await tx.query<{ phone: string | null }>(
      'SELECT phone FROM contacts WHERE account_id = $1 AND id = $2',
      [r.accountId, id],
    );
    if (!rows[0]) continue;
    await lockCustomer(s, tx, r.accountId, {
      phone: rows[0].phone,
      waId: r.waId ?? null,
      userId: r.userId ?? null,
      parentUserId: r.parentUserId ?? null,
      username: r.username ?? null,
    });
  }
}

/**
 * A customer's number or user id changed (Meta's system message): the contact known by the previous
 * one takes the new ones, with contact.updated (`previous`: the number and user id it had). A contact
 * already holding the new number or user id is the same customer: merged into it. No contact known by
 * the previous identity: the one holding the new (if any) learns it; nothing is made.
 */
export async function applyIdentityChange(
  s: MergeServices,
  tx: Tx,
  accountId: string,
  change: Pick<Extract<ProviderUpdate, { kind: 'identity_change' }>, 'previous' | 'current'>,
): Promise<EventInput[]> {
  const { previous, current } = change;
  const before = await lockCustomer(s, tx, accountId, {
    phone: previous.phone,
    waId: null,
    userId: previous.userId,
    parentUserId: null,
    username: null,
  });
  const now = {
    phone: current.phone,
    waId: current.waId,
    userId: current.userId,
    parentUserId: current.parentUserId,
    username: null,
  };
  if (!before) {
    await lockCustomer(s, tx, accountId, now);
    return [];
  }
  // Another contact at the new number or user id is this customer too: it joins this one.
  const others = (await lockNamed(tx, accountId, now)).filter((c) => c.id !== before.id);
  let contact = before;
  for (const other of others) contact = await mergeContacts(s, tx, contact, other);
  const { rows } = await tx.query<ContactRow>(
    `UPDATE contacts SET phone = coalesce($3, phone), wa_id = CASE WHEN $3::text IS NULL THEN wa_id ELSE $4 END,
            whatsapp_user_id = coalesce($5, whatsapp_user_id),
            whatsapp_parent_user_id = coalesce($6, whatsapp_parent_user_id), updated_at = $7
      WHERE account_id = $1 AND id = $2 RETURNING ${CONTACT_COLUMNS}`,
    [accountId, contact.id, current.phone, current.waId, current.userId, current.parentUserId, s.now()],
  );
  const after = rows[0]!;
  const previousFields: Record<string, unknown> = {};
  if (after.phone !== before.phone) previousFields.phone = before.phone;
  if (after.whatsapp_user_id !== before.whatsapp_user_id)
    previousFields.whatsappUserId = before.whatsapp_user_id;
  if (Object.keys(previousFields).length === 0) return [];
  return [{ type: 'contact.updated', accountId, data: { ...toContact(after), previous: previousFields } }];
}

/** The contact at a user id, else at a number (no lock, nothing learnt): null when none is. */
export async function findCustomer(
  sql: Sql,
  accountId: string,
  who: { phone: string | null; userId: string | null },
): Promise<ContactRow | null> {
  const { rows } = await sql.query<ContactRow>(
    `SELECT ${CONTACT_COLUMNS} FROM contacts
      WHERE account_id = $1 AND (whatsapp_user_id = $3 OR phone = $2)
      ORDER BY coalesce(whatsapp_user_id = $3, false) DESC, id LIMIT 1`,
    [accountId, who.phone, who.userId],
  );
  return rows[0] ?? null;
}
