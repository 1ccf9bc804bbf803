// The events table (written by the outbox, kernel/outbox/events.ts) as an account reads it. Every query
// takes the account, so another tenant's event is not found. Ids sort by creation time, so a time
// range is an id range on the (account_id, id) index. Every read of payloads takes what the caller
// may see (visibility.ts) as a condition of the statement, so a page is full of what it may see.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import { type Visible, visibleCondition } from './visibility.ts';

export interface EventRow {
  id: string;
  type: string;
  /** The envelope exactly as webhooks deliver it. */
  payload: string;
}

/** An event filter as SQL: an exact type, `family.*` (the part before the dot) or `*` (none). */
export function typeCondition(filter: string, params: unknown[]): string {
  if (filter === '*') return 'true';
  if (filter.endsWith('.*')) return `split_part(type, '.', 1) = $${params.push(filter.slice(0, -2))}`;
  return `type = $${params.push(filter)}`;
}

/** Any of several filters, as SQL. */
export function typesCondition(filters: string[], params: unknown[]): string {
  return `(${filters.map((f) => typeCondition(f, params)).join(' OR ')})`;
}

/**
 * The events a webhook replay sends again: an account's (or every account's of a partner) with ids
 * in [fromId, beforeId), matching each of the filter lists (an endpoint's, and the request's), never
 * a `webhook.test`; oldest first, at most `limit`.
 */
export async function eventsToReplay(
  sql: Sql,
  q: {
    owner: { accountId: string } | { partnerId: string };
    fromId: string;
    beforeId: string;
    filters: string[][];
    limit: number;
  },
): Promise<{ id: string; type: string }[]> {
  const params: unknown[] = [
    'accountId' in q.owner ? q.owner.accountId : q.owner.partnerId,
    q.fromId,
    q.beforeId,
  ];
  const accounts =
    'accountId' in q.owner
      ? 'e.account_id = $1'
      : 'e.account_id IN (SELECT a.id FROM accounts a WHERE a.partner_id = $1)';
  let where = `${accounts} AND e.id >= $2 AND e.id < $3 AND e.type <> 'webhook.test'`;
  for (const filters of q.filters) where += ` AND ${typesCondition(filters, params)}`;
  const { rows } = await sql.query<{ id: string; type: string }>(
    `SELECT e.id, e.type FROM events e WHERE ${where} ORDER BY e.id LIMIT ${q.limit}`,
    params,
  );
  return rows;
}

export async function listEvents(
  sql: Sql,
  accountId: string,
  page: Page,
  visible: Visible,
  filters: { type?: string; fromId?: string; beforeId?: string },
): Promise<EventRow[]> {
  const params: unknown[] = [accountId, page.limit + 1];
  let where = `account_id = $1 AND ${visibleCondition(visible, params)}`;
  if (page.before) where += ` AND id < $${params.push(page.before)}`;
  if (filters.beforeId) where += ` AND id < $${params.push(filters.beforeId)}`;
  if (filters.fromId) where += ` AND id >= $${params.push(filters.fromId)}`;
  if (filters.type) where += ` AND ${typeCondition(filters.type, params)}`;
  const { rows } = await sql.query<EventRow>(
    `SELECT id, type, payload FROM events WHERE ${where} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows;
}

export async function findEvent(
  sql: Sql,
  accountId: string,
  id: string,
  visible: Visible,
): Promise<EventRow | null> {
  const params: unknown[] = [id, accountId];
  const { rows } = await sql.query<EventRow>(
    `SELECT id, type, payload FROM events WHERE id = $1 AND account_id = $2 AND ${visibleCondition(visible, params)}`,
    params,
  );
  return rows[0] ?? null;
}

/**
 * Ids of the account's events from `fromId` (inclusive) upward, below `beforeId` when given, oldest
 * first: read from the index alone, so a stream can look over a window it has mostly sent already.
 */
export async function eventIdsFrom(
  sql: Sql,
  accountId: string,
  fromId: string,
  beforeId: string | null,
  limit: number,
): Promise<string[]> {
  const params: unknown[] = [accountId, fromId, limit];
  const before = beforeId ? ` AND id < $${params.push(beforeId)}` : '';
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM events WHERE account_id = $1 AND id >= $2${before} ORDER BY id LIMIT $3`,
    params,
  );
  return rows.map((r) => r.id);
}

/** The account's events with these ids that the caller sees and `filters` take, oldest first. */
export async function eventsByIds(
  sql: Sql,
  accountId: string,
  ids: string[],
  visible: Visible,
  filters: string[] | null,
): Promise<EventRow[]> {
  if (ids.length === 0) return [];
  const params: unknown[] = [accountId, ids];
  let where = `account_id = $1 AND id = ANY($2::text[]) AND ${visibleCondition(visible, params)}`;
  if (filters) where += ` AND ${typesCondition(filters, params)}`;
  const { rows } = await sql.query<EventRow>(
    `SELECT id, type, payload FROM events WHERE ${where} ORDER BY id`,
    params,
  );
  return rows;
}
