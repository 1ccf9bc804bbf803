// Contacts of an account: create, change, replace, delete, tag and untag. Each change and its
// event (contact.created|updated|deleted|tagged|untagged) commit in one transaction.
import type { AccountSnapshot } from '../../kernel/access/auth.ts';
import { Batcher } from '../../kernel/async/batcher.ts';
import { type Database, type Sql, sqlState, type Tx, UNIQUE_VIOLATION } from '../../kernel/database/db.ts';
import { ApiError, conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox, EventType } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import { isWhatsAppUserId } from '../../kernel/values/whatsapp-user-ids.ts';
import { eraseData, lockForErasure } from '../erasure/index.ts';
import { changeIssues } from './change-checks.ts';
import {
  type AttributeValue,
  type ContactFields,
  invalidFields,
  MAX_ATTRIBUTES,
  MAX_TAGS,
  type NormalizedFields,
  normalizeFields,
  normalizeTag,
  normalizeTags,
} from './fields.ts';
import { findCustomer } from './identity.ts';
import { currentContactId, forgetMerges } from './merge.ts';
import {
  type ContactRow,
  type ContactValues,
  contactIdByPhone,
  deleteContact,
  findContact,
  insertContacts,
  insertNumbers,
  writeContact,
} from './repo.ts';
import { toContact } from './schemas.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /**
     * A contact was deleted or erased, in that transaction, before erasure rewrites its rows
     * (modules/conversations closes its open conversations).
     */
    'contacts.removed': { accountId: string; contactId: string };
  }
}

export interface ContactServices {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}

type Account = Pick<AccountSnapshot, 'id' | 'countryCode'>;

export function phoneConflict(contactId: string): ApiError {
  return conflict('Another contact of this account has this phone number.', [
    { field: 'phone', issue: 'belongs to another contact', contactId },
  ]);
}

/** Fields as stored when creating (or fully replacing): what is not given takes its default. */
export function valuesOf(fields: NormalizedFields & { phone: string }): ContactValues & { phone: string } {
  return {
    phone: fields.phone,
    name: fields.name ?? null,
    email: fields.email ?? null,
    tags: fields.tags ?? [],
    attributes: (fields.attributes ?? {}) as Record<string, AttributeValue>,
    optedIn: fields.optedIn ?? false,
    marketingOptOut: fields.marketingOptOut ?? false,
  };
}

async function emit(s: ContactServices, tx: Tx, type: EventType, row: ContactRow, extra: object = {}) {
  await s.events.emit(tx, { type, accountId: row.account_id, data: { ...toContact(row), ...extra } });
}

/**
 * `find` of the contact an id names, following a merge: a merged contact's id answers with the
 * survivor (docs/messaging.md § Who a customer is). Looked up only when the id finds nothing.
 */
async function following<T>(
  sql: Sql,
  accountId: string,
  id: string,
  find: (id: string) => Promise<T | null>,
) {
  const found = await find(id);
  if (found) return found;
  const survivor = await currentContactId(sql, accountId, id);
  const row = survivor === id ? null : await find(survivor);
  if (!row) throw notFound('contact');
  return row;
}

async function contactOf(tx: Tx, accountId: string, id: string): Promise<ContactRow> {
  return following(tx, accountId, id, (i) => findContact(tx, accountId, i, { forUpdate: true }));
}

/**
 * Runs a change that may give the contact a phone another contact has. The unique index is the
 * judge (two requests racing cannot both win); the other contact's id is looked up after the
 * failed transaction is gone.
 */
async function withPhoneCheck<T>(
  s: ContactServices,
  accountId: string,
  phone: string | null | undefined,
  work: () => Promise<T>,
) {
  try {
    return await work();
  } catch (err) {
    if (sqlState(err) !== UNIQUE_VIOLATION || !phone) throw err;
    throw phoneConflict((await contactIdByPhone(s.db, accountId, phone)) ?? 'unknown');
  }
}

export async function createContact(
  s: ContactServices,
  account: Account,
  input: ContactFields & { phone: string },
) {
  const fields = normalizeFields(input, account.countryCode);
  const values = valuesOf({ ...fields, phone: fields.phone! });
  const made = await creatorOf(s).submit({ accountId: account.id, values });
  if ('existingId' in made) throw phoneConflict(made.existingId);
  return made.row;
}

interface NewContact {
  accountId: string;
  /** A contact the API makes has a phone (only Meta makes one known by user id alone). */
  values: ContactValues & { phone: string };
}

type Made = { row: ContactRow } | { existingId: string };

// One batcher per database, a single queue on PostgreSQL too: a second queue halved the batches
// (what arrives while one runs starts the other at once) and each batch's statements cost the
// server and the database more than the overlap saved (same-run A/B, 32 clients: one queue 8-15 %
// more contacts a second, 25 % less server CPU a contact; docs/history/issue-27.md).
const creators = new WeakMap<Database, Batcher<NewContact, Made>>();

function creatorOf(s: ContactServices): Batcher<NewContact, Made> {
  let creator = creators.get(s.db);
  if (!creator) {
    creator = new Batcher((batch) => createContacts(s, batch), { limit: 100 });
    creators.set(s.db, creator);
  }
  return creator;
}

/**
 * Contacts created together (POST /contacts arriving at once): one INSERT of them all and their
 * contact.created events in one transaction. A phone already taken, or taken by an earlier contact
 * of the same batch, answers the contact that has it (looked up after the commit).
 */
async function createContacts(s: ContactServices, batch: NewContact[]): Promise<Made[]> {
  const inserted = await s.db.transaction(async (tx) => {
    // The time first, then the ids: an id's own time is then never earlier than created_at, which
    // the createdAfter filter's `id >= idAt(createdAfter)` bound relies on (repo.ts listContacts).
    const now = s.now();
    const rows = await insertContacts(
      tx,
      batch.map((c) => ({ id: newId('contact'), accountId: c.accountId, values: c.values })),
      now,
    );
    await s.events.emitMany(
      tx,
      rows.map((row) => ({ type: 'contact.created', accountId: row.account_id, data: toContact(row) })),
    );
    return rows;
  });
  const byKey = new Map(inserted.map((row) => [`${row.account_id}|${row.phone}`, row]));
  return Promise.all(
    batch.map(async (c): Promise<Made> => {
      const key = `${c.accountId}|${c.values.phone}`;
      const row = byKey.get(key);
      if (row) {
        byKey.delete(key); // a second contact of the batch with this phone is the conflict
        return { row };
      }
      // Deleted between the two statements: rare enough to report as the conflict it nearly was.
      return { existingId: (await contactIdByPhone(s.db, c.accountId, c.values.phone)) ?? 'unknown' };
    }),
  );
}

export async function getContact(s: ContactServices, accountId: string, id: string): Promise<ContactRow> {
  return following(s.db, accountId, id, (i) => findContact(s.db, accountId, i));
}

/**
 * A change applied to a stored contact (PATCH, and a bulk upsert of an existing phone): the fields
 * given replace the stored ones; attributes merge, a null value removing one. Throws
 * INVALID_REQUEST if the merge leaves more attributes than a contact may hold.
 */
export function mergeFields(row: ContactRow, fields: NormalizedFields): ContactValues {
  const attributes: Record<string, AttributeValue> = { ...row.attributes };
  for (const [name, value] of Object.entries(fields.attributes ?? {})) {
    if (value === null) delete attributes[name];
    else attributes[name] = value;
  }
  if (Object.keys(attributes).length > MAX_ATTRIBUTES) {
    throw invalidFields([
      { field: 'attributes', issue: `a contact holds at most ${MAX_ATTRIBUTES} attributes` },
    ]);
  }
  return {
    phone: fields.phone ?? row.phone,
    name: fields.name === undefined ? row.name : fields.name,
    email: fields.email === undefined ? row.email : fields.email,
    tags: fields.tags ?? row.tags,
    attributes,
    optedIn: fields.optedIn ?? row.opted_in,
    marketingOptOut: fields.marketingOptOut ?? row.marketing_opt_out,
  };
}

/**
 * PATCH: the fields given replace the stored ones; attributes merge, a null value removes one. The
 * change is checked as the route's schema checks a body, for callers that no schema has checked
 * (automation's rendered values).
 */
export async function updateContact(s: ContactServices, account: Account, id: string, input: ContactFields) {
  const issues = changeIssues(input);
  if (issues.length > 0) throw invalidFields(issues);
  const fields = normalizeFields(input, account.countryCode, true);
  return withPhoneCheck(s, account.id, fields.phone, () =>
    s.db.transaction(async (tx) => {
      const row = await contactOf(tx, account.id, id);
      const values = mergeFields(row, fields);
      const updated = await writeContact(tx, account.id, id, values, s.now());
      await emit(s, tx, 'contact.updated', updated, { previous: previousValues(row, updated) });
      return updated;
    }),
  );
}

/** PUT: the whole contact; fields left out go back to their defaults. */
export async function replaceContact(
  s: ContactServices,
  account: Account,
  id: string,
  input: ContactFields & { phone: string },
) {
  const fields = normalizeFields(input, account.countryCode);
  const values = valuesOf({ ...fields, phone: fields.phone! });
  return withPhoneCheck(s, account.id, values.phone, () =>
    s.db.transaction(async (tx) => {
      const row = await contactOf(tx, account.id, id);
      const updated = await writeContact(tx, account.id, id, values, s.now());
      await emit(s, tx, 'contact.updated', updated, { previous: previousValues(row, updated) });
      return updated;
    }),
  );
}

export async function removeContact(s: ContactServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    const row = await following(tx, accountId, id, (i) => deleteContact(tx, accountId, i));
    await emit(s, tx, 'contact.deleted', row, { deleted: true });
    // A conversation left open on a deleted contact could never be continued: the number's next
    // message makes a new contact, and a new conversation.
    await s.events.hook(tx, 'contacts.removed', { accountId, contactId: row.id });
  });
}

/**
 * Deletes the contact and erases its personal data from every table (modules/erasure/erase.ts),
 * in one transaction: a `contact.erased` event names only its id (a `contact.deleted` event would
 * carry what is being erased). The account's work in flight commits first (erasure/lock.ts).
 */
export async function eraseContact(s: ContactServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    await lockForErasure(tx, accountId);
    const row = await following(tx, accountId, id, (i) => deleteContact(tx, accountId, i));
    // The ids merged into it go too, and what names them: nothing is left that names the customer.
    const formerIds = await forgetMerges(tx, accountId, row.id);
    // First, so that the conversation.closed events this emits are erased with the rest.
    await s.events.hook(tx, 'contacts.removed', { accountId, contactId: row.id });
    await eraseData(tx, {
      kind: 'contact',
      accountId,
      contactId: row.id,
      phone: row.phone,
      whatsappUserId: row.whatsapp_user_id,
      formerIds,
    });
    await s.events.emit(tx, { type: 'contact.erased', accountId, data: { id: row.id } });
  });
}

/** The contact Meta knows by this user id; a bare one (contact.created) when the account has none. */
async function contactOfUserId(s: ContactServices, accountId: string, userId: string): Promise<string> {
  if (!isWhatsAppUserId(userId)) {
    throw invalid(
      'whatsappUserId',
      "is not a WhatsApp user id (Meta's business-scoped id, e.g. US.13491208655302741918)",
    );
  }
  const known = await findCustomer(s.db, accountId, { phone: null, userId });
  if (known) return known.id;
  return s.db.transaction(async (tx) => {
    const [made] = await insertNumbers(tx, [{ accountId, address: userId }], s.now());
    if (!made) return (await findCustomer(tx, accountId, { phone: null, userId }))!.id;
    await emit(s, tx, 'contact.created', made);
    return made.id;
  });
}

/** Adds tags; those it already has are ignored, and a call that adds none changes nothing. */
export async function addTags(s: ContactServices, accountId: string, id: string, raw: string[]) {
  const issues: { field: string; issue: string }[] = [];
  const tags = normalizeTags(raw, 'tags', issues);
  if (issues.length > 0) throw invalidFields(issues);
  return s.db.transaction(async (tx) => {
    const row = await contactOf(tx, accountId, id);
    const added = tags.filter((t) => !row.tags.includes(t));
    if (added.length === 0) return row;
    if (row.tags.length + added.length > MAX_TAGS) {
      throw invalidFields([{ field: 'tags', issue: `a contact carries at most ${MAX_TAGS} tags` }]);
    }
    const updated = await writeContact(
      tx,
      accountId,
      id,
      { ...valuesOfRow(row), tags: [...row.tags, ...added] },
      s.now(),
    );
    await emit(s, tx, 'contact.tagged', updated, { tagsAdded: added });
    return updated;
  });
}

/** Removes a tag; removing one the contact does not carry changes nothing. */
export async function removeTag(
  s: ContactServices,
  accountId: string,
  id: string,
  raw: string,
): Promise<void> {
  const tag = normalizeTag(raw);
  await s.db.transaction(async (tx) => {
    const row = await contactOf(tx, accountId, id);
    if (tag === null || !row.tags.includes(tag)) return;
    const values = { ...valuesOfRow(row), tags: row.tags.filter((t) => t !== tag) };
    const updated = await writeContact(tx, accountId, id, values, s.now());
    await emit(s, tx, 'contact.untagged', updated, { tagsRemoved: [tag] });
  });
}

/**
 * The fields a change moved, with their values before it (`contact.updated`'s `previous`): what
 * automation's changed, changed_to and changed_from compare with.
 */
function previousValues(before: ContactRow, after: ContactRow): Record<string, unknown> {
  const shown = { before: toContact(before), after: toContact(after) };
  const previous: Record<string, unknown> = {};
  for (const key of ['phone', 'name', 'email', 'tags', 'attributes', 'optedIn', 'marketingOptOut'] as const) {
    if (JSON.stringify(shown.before[key]) !== JSON.stringify(shown.after[key]))
      previous[key] = shown.before[key];
  }
  return previous;
}

function valuesOfRow(row: ContactRow): ContactValues {
  return {
    phone: row.phone,
    name: row.name,
    email: row.email,
    tags: row.tags,
    attributes: row.attributes,
    optedIn: row.opted_in,
    marketingOptOut: row.marketing_opt_out,
  };
}

/**
 * The contact a request names: by id (a merged one's survivor), by number or by WhatsApp user id
 * (made if the account has none with it, as a send makes one).
 */
export async function contactIdNamedBy(
  s: ContactServices,
  account: { id: string; countryCode: string },
  body: { contactId?: string; to?: string; whatsappUserId?: string },
): Promise<string> {
  const named = [body.contactId, body.to, body.whatsappUserId].filter((v) => v !== undefined);
  if (named.length !== 1) throw invalid('body', 'takes exactly one of contactId, to or whatsappUserId');
  if (body.contactId !== undefined) return currentContactId(s.db, account.id, body.contactId);
  if (body.whatsappUserId !== undefined) return contactOfUserId(s, account.id, body.whatsappUserId);
  const phone = normalizePhone(body.to!, account.countryCode);
  if (!phone) throw invalid('to', 'is not a phone number (E.164, such as +14155550123)');
  const known = await contactIdByPhone(s.db, account.id, phone);
  if (known) return known;
  try {
    return (await createContact(s, account, { phone })).id;
  } catch (err) {
    // Made meanwhile by another request: that one is the contact.
    const made = err instanceof ApiError ? await contactIdByPhone(s.db, account.id, phone) : null;
    if (made) return made;
    throw err;
  }
}
