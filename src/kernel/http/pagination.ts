// Cursor pagination (the OpenAPI document's list operations): `limit` 1–100 (default 20) and an opaque `cursor`;
// replies are `{ data, nextCursor }`, newest first. Ids sort by creation time, so the cursor is the
// last id seen, and rows inserted while a client pages never shift the pages it has yet to read.
import { Type } from 'typebox';
import { invalid } from './errors.ts';

export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size (1–100).' }),
  ),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: 'The `nextCursor` of the previous page.' }),
  ),
};

/** A page of items; named `<Item>Page` in the OpenAPI document when the item has a title. */
export function listOf<T extends Parameters<typeof Type.Array>[0]>(item: T) {
  const title = (item as { title?: unknown }).title;
  return Type.Object(
    {
      data: Type.Array(item),
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as `cursor` for the next page.',
      }),
    },
    typeof title === 'string' ? { title: `${title}Page` } : {},
  );
}

export interface Page {
  limit: number;
  /** Only ids strictly below this one (older rows) belong on the page. */
  before: string | null;
}

export function readPage(query: { limit?: number; cursor?: string }): Page {
  const limit = query.limit ?? 20;
  if (!query.cursor) return { limit, before: null };
  const decoded = Buffer.from(query.cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9a-z]{26}$/.test(decoded)) throw invalid('cursor', 'is not a cursor this API returned');
  return { limit, before: decoded };
}

/**
 * Newest first within an account, with the account written `account_id = ANY($1::text[])` ($1 the
 * account alone): through the (account_id, id) index, whatever the other tenants hold. With
 * `account_id = $1` the planner may instead walk the primary key backward and skip every row that
 * is not the account's: cheap by its estimate (rows spread evenly), 200,000 rows long when another
 * tenant's are the newest. `= ANY` is no equality it can fold away, so the order by (account_id,
 * id) is one only an index led by account_id gives without a sort.
 */
export const ACCOUNT_ORDER = 'ORDER BY account_id DESC, id DESC';

const idCursor = (row: { id: string }) => Buffer.from(row.id, 'utf8').toString('base64url');

/**
 * Cuts the one extra fetched row off, turns it into the next cursor, and shows each row. The cursor
 * is the last row's id, unless the list is in another order and says how to write its position.
 */
export function pageOf<T extends { id: string }, V>(
  rows: T[],
  page: { limit: number },
  show: (row: T) => V,
  cursorOf: (row: T) => string = idCursor,
): { data: V[]; nextCursor: string | null } {
  const hasMore = rows.length > page.limit;
  const data = hasMore ? rows.slice(0, page.limit) : rows;
  const last = data.at(-1);
  return { data: data.map(show), nextCursor: hasMore && last ? cursorOf(last) : null };
}
