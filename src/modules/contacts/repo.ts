// Contact rows. Every query is scoped by account_id: another account's id finds nothing.
import type { Sql } from '../../kernel/database/db.ts';
import { ACCOUNT_ORDER, type Page } from '../../kernel/http/pagination.ts';
import { idAt, newId } from '../../kernel/values/ids.ts';
import { isPhoneAddress } from '../../kernel/values/whatsapp-user-ids.ts';
import type { AttributeValue } from './fields.ts';

export interface ContactRow {
  id: string;
  account_id: string;
  /** E.164; null for a customer known only by their WhatsApp user id (migrations/037_whatsapp_user_ids.sql). */
  phone: string | null;
  name: string | null;
  email: string | null;
  tags: string[];
  attributes: Record<string, AttributeValue>;
  opted_in: boolean;
  /** The customer stopped marketing messages (migrations/020_contacts_marketing_opt_out.sql). */
  marketing_opt_out: boolean;
  created_at: Date;
  updated_at: Date;
  last_inbound_at: Date | null;
  /** WhatsApp's id for the number, as Meta reported it (migrations/008_contacts_wa_id.sql). */
  wa_id: string | null;
  /** Meta's business-scoped user id (BSUID), its parent id and the username, as Meta reported them. */
  whatsapp_user_id: string | null;
  whatsapp_parent_user_id: string | null;
  whatsapp_username: string | null;
}

/** The stored fields a write sets. */
export interface ContactValues {
  /** Null only for a contact Meta knows by its user id alone (a write never takes a phone away). */
  phone: string | null;
  name: string | null;
  email: string | null;
  tags: string[];
  attributes: Record<string, AttributeValue>;
  optedIn: boolean;
  marketingOptOut: boolean;
}

export const CONTACT_COLUMNS =
  'id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out, created_at, updated_at, last_inbound_at, wa_id, ' +
  'whatsapp_user_id, whatsapp_parent_user_id, whatsapp_username';

/**
 * Makes a bare contact (an address, nothing else: a number, or a WhatsApp user id) for each pair that
 * has none, in one statement; answers those made (a pair another transaction made meanwhile is not
 * among them: its number or its user id is taken).
 */
export async function insertNumbers(
  sql: Sql,
  pairs: { accountId: string; address: string }[],
  now: Date,
): Promise<ContactRow[]> {
  const { rows } = await sql.query<ContactRow>(
    `INSERT INTO contacts (id, account_id, phone, whatsapp_user_id, created_at, updated_at)
     SELECT n.id, n.account_id, n.phone, n.whatsapp_user_id, $2, $2
       FROM jsonb_to_recordset($1::jsonb) AS n (id text, account_id text, phone text, whatsapp_user_id text)
     ON CONFLICT DO NOTHING
     RETURNING ${CONTACT_COLUMNS}`,
    [
      JSON.stringify(
        pairs.map((p) => ({
          id: newId('contact'),
          account_id: p.accountId,
          phone: isPhoneAddress(p.address) ? p.address : null,
          whatsapp_user_id: isPhoneAddress(p.address) ? null : p.address,
        })),
      ),
      now,
    ],
  );
  return rows;
}

/** Inserts contacts (ON CONFLICT of the phone, nothing); answers those inserted. */
export async function insertContacts(
  sql: Sql,
  rows: { id: string; accountId: string; values: ContactValues }[],
  now: Date,
): Promise<ContactRow[]> {
  const { rows: inserted } = await sql.query<ContactRow>(
    `INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out,
                           created_at, updated_at)
     SELECT r.id, r.account_id, r.phone, r.name, r.email, r.tags, r.attributes, r.opted_in, r.marketing_opt_out,
            $2, $2
       FROM jsonb_to_recordset($1::jsonb) AS r (id text, account_id text, phone text, name text, email text,
            tags text[], attributes jsonb, opted_in boolean, marketing_opt_out boolean)
     ON CONFLICT (account_id, phone) DO NOTHING
     RETURNING ${CONTACT_COLUMNS}`,
    [
      JSON.stringify(
        rows.map(({ id, accountId, values: v }) => ({
          id,
          account_id: accountId,
          phone: v.phone,
          name: v.name,
          email: v.email,
          tags: v.tags,
          attributes: v.attributes,
          opted_in: v.optedIn,
          marketing_opt_out: v.marketingOptOut,
        })),
      ),
      now,
    ],
  );
  return inserted;
}

export async function contactIdByPhone(sql: Sql, accountId: string, phone: string): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>(
    'SELECT id FROM contacts WHERE account_id = $1 AND phone = $2',
    [accountId, phone],
  );
  return rows[0]?.id ?? null;
}

export async function findContact(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ContactRow | null> {
  const { rows } = await sql.query<ContactRow>(
    `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export async function writeContact(
  sql: Sql,
  accountId: string,
  id: string,
  values: ContactValues,
  now: Date,
): Promise<ContactRow> {
  const { rows } = await sql.query<ContactRow>(
    `UPDATE contacts
        SET phone = $3, name = $4, email = $5, tags = $6, attributes = $7, opted_in = $8,
            marketing_opt_out = $9, updated_at = $10,
            -- WhatsApp's id belongs to the number: a new number's is learnt again from Meta.
            wa_id = CASE WHEN phone IS NOT DISTINCT FROM $3 THEN wa_id END
      WHERE account_id = $1 AND id = $2
      RETURNING ${CONTACT_COLUMNS}`,
    [
      accountId,
      id,
      values.phone,
      values.name,
      values.email,
      values.tags,
      JSON.stringify(values.attributes),
      values.optedIn,
      values.marketingOptOut,
      now,
    ],
  );
  if (!rows[0]) throw new Error(`contact ${id} vanished while locked`);
  return rows[0];
}

export async function deleteContact(sql: Sql, accountId: string, id: string): Promise<ContactRow | null> {
  const { rows } = await sql.query<ContactRow>(
    `DELETE FROM contacts WHERE account_id = $1 AND id = $2 RETURNING ${CONTACT_COLUMNS}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export interface ContactFilters {
  /** A LIKE pattern over search_text, already lower-cased and escaped. */
  searchPattern?: string;
  tags?: string[];
  phone?: string;
  whatsappUserId?: string;
  optedIn?: boolean;
  marketingOptOut?: boolean;
  createdAfter?: Date;
  updatedAfter?: Date;
  /** Per attribute, the JSON values it may equal (a query's text may mean a string, number or boolean). */
  attributes?: { name: string; values: AttributeValue[] }[];
}

/**
 * How many of the newest rows a search looks through first. A common term finds its page there at
 * once; a rarer one then goes through the trigram index instead.
 */
export const SEARCH_RECENT_ROWS = 1000;
/** The longest second walk a search takes; a rarer term goes to the trigram index at once. */
const SEARCH_MAX_WALK = 10_000;

export async function listContacts(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: ContactFilters,
): Promise<ContactRow[]> {
  // The account as a one-element array, ordered by (account_id, id): see ACCOUNT_ORDER.
  const params: unknown[] = [[accountId]];
  const scope = ['account_id = ANY($1::text[])'];
  const where: string[] = [];
  // The statement through the GIN indexes: they take no `= ANY`, so the account is an equality
  // there, for the indexes led by account_id; tags are matched as the account's keys
  // (migrations/028), which hold the account already (its id has no space): then the account is
  // left out, lest the planner AND the tag's few rows with the account's whole posting list in
  // another GIN index (a bitmap scan takes `= ANY` too, element by element).
  const account = '($1::text[])[1]';
  const indexed: string[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (page.before) scope.push(`id < ${param(page.before)}`);
  if (filters.searchPattern) where.push(`search_text LIKE ${param(filters.searchPattern)}`);
  if (filters.tags?.length) {
    const tags = param(filters.tags);
    where.push(`tags @> ${tags}::text[]`);
    indexed.push(`contact_tag_keys(account_id, tags) @> contact_tag_keys(${account}, ${tags}::text[])`);
  }
  if (filters.phone) where.push(`phone = ${param(filters.phone)}`);
  if (filters.whatsappUserId) where.push(`whatsapp_user_id = ${param(filters.whatsappUserId)}`);
  if (filters.optedIn !== undefined) where.push(`opted_in = ${param(filters.optedIn)}`);
  // Written out, not a parameter: the planner then sees that the opted-out rows' own index
  // (migrations/032) holds every row the list wants.
  if (filters.marketingOptOut !== undefined)
    where.push(filters.marketingOptOut ? 'marketing_opt_out' : 'NOT marketing_opt_out');
  if (filters.createdAfter) {
    // The id bound lets the (account_id, id) index narrow the range; created_at makes it exact.
    scope.push(`id >= ${param(idAt('contact', filters.createdAfter))}`);
    where.push(`created_at > ${param(filters.createdAfter)}`);
  }
  if (filters.updatedAfter) where.push(`updated_at > ${param(filters.updatedAfter)}`);
  for (const attribute of filters.attributes ?? []) {
    // `@>` with one {name: value} object per reading of the value: the jsonb_path_ops index serves it.
    const alternatives = attribute.values.map(
      (value) => `attributes @> ${param(JSON.stringify({ [attribute.name]: value }))}::jsonb`,
    );
    where.push(`(${alternatives.join(' OR ')})`);
  }
  const limit = page.limit + 1;
  const conditions = [...scope, ...where].join(' AND ');
  // A filter phone or the GIN indexes serve narrows the rows to a few the index finds; anything
  // else is a walk of the account's rows, newest first.
  const rare = filters.searchPattern || filters.tags?.length || filters.attributes?.length;
  if (!rare || filters.phone) {
    const { rows } = await sql.query<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE ${conditions} ${ACCOUNT_ORDER} LIMIT ${limit}`,
      params,
    );
    return rows;
  }
  // A search or a tag or attribute filter with ORDER BY id LIMIT n tempts the planner to walk the
  // account's rows newest first until n match: instant for a common term, a walk through the whole
  // account for one whose matches are few or all old (the estimate cannot see where they lie, nor
  // how common a tag is in this account rather than across all tenants). So the walk is bounded:
  // first the newest 1,000 rows; if matches there are dense enough, a second walk as far as that
  // density says the page needs (at most 10,000 rows); otherwise, or if the page is still not
  // full, all matches through the GIN indexes (the MATERIALIZED CTE has no LIMIT to tempt the
  // planner), then sorted. Every path gives the same, exact page.
  // Below a cursor, a walk takes the ids alone from the (account_id, id) index (an index-only scan),
  // then the rows by primary key, newest first, until the page is full: walking whole rows there,
  // the planner took the primary key's range below an old cursor for fewer rows than it held (every
  // tenant's rows below it, then a sort: 20-47 ms at 5M rows) over the account's index, which it
  // prices a random heap read a row. Without a cursor only the account's index gives the order, and
  // whole rows are cheaper to walk (a rare term's 1,000 probes by key cost 4-5 ms more).
  const newest = (window: number) =>
    page.before
      ? `SELECT * FROM contacts WHERE id = ANY(ARRAY(
           SELECT id FROM contacts WHERE ${scope.join(' AND ')} ${ACCOUNT_ORDER} LIMIT ${window}))`
      : `SELECT * FROM contacts WHERE ${scope.join(' AND ')} ${ACCOUNT_ORDER} LIMIT ${window}`;
  let window = SEARCH_RECENT_ROWS;
  for (;;) {
    const { rows } = await sql.query<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM (${newest(window)}) AS newest
        WHERE ${where.join(' AND ')}
        ORDER BY id DESC LIMIT ${limit}`,
      params,
    );
    if (rows.length === limit) return rows;
    // Far enough, at the density seen, to fill the page twice over; farther means a rare term.
    const needed =
      rows.length === 0 ? Number.POSITIVE_INFINITY : Math.ceil((2 * limit * window) / rows.length);
    if (window > SEARCH_RECENT_ROWS || needed > SEARCH_MAX_WALK) break;
    window = needed;
  }
  const { rows } = await sql.query<ContactRow>(
    `WITH matches AS MATERIALIZED (
       SELECT ${CONTACT_COLUMNS} FROM contacts
        WHERE ${[...(indexed.length ? indexed : [`account_id = ${account}`]), ...scope.slice(1), ...where].join(' AND ')})
     SELECT * FROM matches ORDER BY id DESC LIMIT ${limit}`,
    params,
  );
  return rows;
}

/** The customer wrote at `at`: their service window runs from then (it only ever moves forward). */
export async function noteInbound(sql: Sql, accountId: string, contactId: string, at: Date): Promise<void> {
  await sql.query(
    'UPDATE contacts SET last_inbound_at = greatest(last_inbound_at, $3) WHERE account_id = $1 AND id = $2',
    [accountId, contactId, at],
  );
}
