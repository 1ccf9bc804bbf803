// Conversation rows. Every function takes the account: another tenant's conversation is not found.
import type { Sql } from '../../kernel/database/db.ts';
import { invalid } from '../../kernel/http/errors.ts';
import { type MessageRow, messageFromJson } from '../messages/index.ts';

export type ConversationStatus = 'open' | 'closed';

export interface ConversationRow {
  id: string;
  account_id: string;
  contact_id: string;
  /** The contact's number when it opened; null for a customer known by WhatsApp user id alone. */
  phone: string | null;
  status: ConversationStatus;
  assignee_id: string | null;
  /** The team it belongs to; with no assignee, it waits in the team's queue. */
  team_id: string | null;
  last_inbound_at: Date | null;
  last_message_at: Date;
  last_message_id: string | null;
  unread_count: number;
  /** The conversation's labels (not the contact's tags), lower-cased, in the order added. */
  labels: string[];
  /** Hidden from the open list until then (or until the customer writes); null when not snoozed. */
  snoozed_until: Date | null;
  opened_at: Date;
  closed_at: Date | null;
  /** The console member who closed it (null: an API key, a rule, a removed contact). */
  closed_by: string | null;
  /** The close a satisfaction survey was sent for, and what the customer answered (csat.ts). */
  csat_close_at: Date | null;
  csat_score: number | null;
  csat_comment: string | null;
  csat_agent_id: string | null;
  csat_answered_at: Date | null;
  csat_comment_until: Date | null;
  /** The SLA clock's start (opened, or last reopened), the business's first reply since (sla.ts). */
  sla_started_at: Date | null;
  first_response_at: Date | null;
  /** The SLA policy that applies, its due times, the next one to judge, and when targets were missed. */
  sla_policy_id: string | null;
  sla_first_response_due_at: Date | null;
  sla_resolution_due_at: Date | null;
  sla_next_due_at: Date | null;
  sla_first_response_breached_at: Date | null;
  sla_resolution_breached_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A conversation with what its view shows beside it: the contact's window and the last message. */
export interface ConversationView extends ConversationRow {
  /** The contact's last inbound message, in any conversation: the customer service window's start. */
  contact_last_inbound_at: Date | null;
  last_message: MessageRow | null;
}

export const CONVERSATION_COLUMNS =
  'id, account_id, contact_id, phone, status, assignee_id, team_id, last_inbound_at, last_message_at, last_message_id, ' +
  'unread_count, labels, snoozed_until, opened_at, closed_at, closed_by, csat_close_at, csat_score, ' +
  'csat_comment, csat_agent_id, csat_answered_at, csat_comment_until, sla_started_at, first_response_at, ' +
  'sla_policy_id, sla_first_response_due_at, sla_resolution_due_at, sla_next_due_at, ' +
  'sla_first_response_breached_at, sla_resolution_breached_at, created_at, updated_at';

const columnsOf = (alias: string, columns: string) =>
  columns
    .split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

/** Selects conversations `cv` with their view's extras; `where` filters `cv`. */
const viewSql = (where: string, tail = '') => `
  SELECT ${columnsOf('cv', CONVERSATION_COLUMNS)},
         ct.last_inbound_at AS contact_last_inbound_at,
         CASE WHEN m.id IS NULL THEN NULL ELSE row_to_json(m) END AS last_message
    FROM conversations cv
    LEFT JOIN contacts ct ON ct.id = cv.contact_id AND ct.account_id = cv.account_id
    LEFT JOIN LATERAL (SELECT * FROM message_rows
                        WHERE id = cv.last_message_id AND account_id = cv.account_id) m ON true
   WHERE ${where} ${tail}`;

function toView(row: ConversationView): ConversationView {
  return { ...row, last_message: row.last_message ? messageFromJson(row.last_message) : null };
}

export async function findConversation(
  sql: Sql,
  accountId: string,
  id: string,
): Promise<ConversationView | null> {
  const { rows } = await sql.query<ConversationView>(viewSql('cv.account_id = $1 AND cv.id = $2'), [
    accountId,
    id,
  ]);
  return rows[0] ? toView(rows[0]) : null;
}

/** Conversations with their views' extras, in no order. */
export async function findConversations(
  sql: Sql,
  accountId: string,
  ids: string[],
): Promise<ConversationView[]> {
  const { rows } = await sql.query<ConversationView>(
    viewSql('cv.account_id = $1 AND cv.id = ANY($2::text[])'),
    [accountId, ids],
  );
  return rows.map(toView);
}

/** The conversation's own row, without its view's extras (`lock`: for a change of its state). */
export async function findConversationRow(
  sql: Sql,
  accountId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<ConversationRow | null> {
  const { rows } = await sql.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE account_id = $1 AND id = $2
     ${options.lock ? 'FOR UPDATE' : ''}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export async function findOpenConversation(
  sql: Sql,
  accountId: string,
  contactId: string,
): Promise<ConversationRow | null> {
  const { rows } = await sql.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations
      WHERE account_id = $1 AND contact_id = $2 AND status = 'open'`,
    [accountId, contactId],
  );
  return rows[0] ?? null;
}

export interface ConversationFilters {
  status?: ConversationStatus;
  assigneeId?: string;
  unassigned?: boolean;
  teamId?: string;
  contactId?: string;
  /** Lower-cased, as stored. */
  label?: string;
  /** true: only those snoozed now; false: only those not (left out with status open: false). */
  snoozed?: boolean;
}

/**
 * The list's position: the last conversation seen, by last activity then id (newest first), or with
 * `order: sla_due` by next SLA due time then id (soonest first, those with none after them: `at` null).
 */
export interface ActivityPage {
  limit: number;
  order: 'activity' | 'sla_due';
  after: { at: Date | null; id: string } | null;
}

// An SLA-ordered cursor starts with "d": one of the other order is refused, not misread.
export function readActivityCursor(query: {
  limit?: number;
  cursor?: string;
  order?: 'activity' | 'sla_due';
}): ActivityPage {
  const limit = query.limit ?? 20;
  const order = query.order ?? 'activity';
  if (!query.cursor) return { limit, order, after: null };
  const text = Buffer.from(query.cursor, 'base64url').toString('utf8');
  const sla = text.startsWith('d');
  const [at, id] = (sla ? text.slice(1) : text).split('|');
  const time = at === '-' && sla ? null : Number(at);
  if (
    sla !== (order === 'sla_due') ||
    !id ||
    !/^cnv_[0-9a-z]{26}$/.test(id) ||
    (time !== null && !Number.isSafeInteger(time))
  )
    throw invalid('cursor', 'is not a cursor this API returned for this order');
  return { limit, order, after: { at: time === null ? null : new Date(time), id } };
}

export function activityCursor(row: ConversationRow): string {
  return Buffer.from(`${row.last_message_at.getTime()}|${row.id}`, 'utf8').toString('base64url');
}

export function slaDueCursor(row: ConversationRow): string {
  const at = row.sla_next_due_at ? String(row.sla_next_due_at.getTime()) : '-';
  return Buffer.from(`d${at}|${row.id}`, 'utf8').toString('base64url');
}

/** Conversations by last activity, most recent first (then newest id first), or by SLA due time. */
export async function listConversations(
  sql: Sql,
  accountId: string,
  page: ActivityPage,
  filters: ConversationFilters,
  now: Date,
): Promise<ConversationView[]> {
  const params: unknown[] = [accountId];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = ['cv.account_id = $1'];
  const sla = page.order === 'sla_due';
  if (page.after && !sla)
    where.push(
      `(cv.last_message_at, cv.id) < (${param(page.after.at)}::timestamptz, ${param(page.after.id)})`,
    );
  if (page.after && sla) {
    const id = param(page.after.id);
    where.push(
      page.after.at === null
        ? `cv.sla_next_due_at IS NULL AND cv.id > ${id}`
        : `((cv.sla_next_due_at, cv.id) > (${param(page.after.at)}::timestamptz, ${id}) OR cv.sla_next_due_at IS NULL)`,
    );
  }
  if (filters.status) where.push(`cv.status = ${param(filters.status)}`);
  if (filters.assigneeId) where.push(`cv.assignee_id = ${param(filters.assigneeId)}`);
  if (filters.unassigned) where.push('cv.assignee_id IS NULL');
  if (filters.teamId) where.push(`cv.team_id = ${param(filters.teamId)}`);
  if (filters.contactId) where.push(`cv.contact_id = ${param(filters.contactId)}`);
  if (filters.label) where.push(`cv.labels @> ARRAY[${param(filters.label)}::text]`);
  // Snoozed is "until a time still to come": exact whenever the wake scan last ran.
  const snoozed = filters.snoozed ?? (filters.status === 'open' ? false : undefined);
  if (snoozed === true) where.push(`cv.snoozed_until > ${param(now)}`);
  if (snoozed === false) where.push(`(cv.snoozed_until IS NULL OR cv.snoozed_until <= ${param(now)})`);
  const { rows } = await sql.query<ConversationView>(
    viewSql(
      where.join(' AND '),
      // As conversations_sla_due holds them (ascending, nulls last).
      `ORDER BY ${sla ? 'cv.sla_next_due_at, cv.id' : 'cv.last_message_at DESC, cv.id DESC'} LIMIT ${page.limit + 1}`,
    ),
    params,
  );
  return rows.map(toView);
}

/** A conversation's messages in both directions, newest first. */
export async function listConversationMessages(
  sql: Sql,
  accountId: string,
  conversationId: string,
  page: { limit: number; before: string | null },
): Promise<MessageRow[]> {
  const params: unknown[] = [accountId, conversationId];
  const before = page.before ? `AND id < $${params.push(page.before)}` : '';
  const { rows } = await sql.query<MessageRow>(
    `SELECT * FROM message_rows
      WHERE conversation_id = $2 AND account_id = $1 ${before}
      ORDER BY id DESC LIMIT ${page.limit + 1}`,
    params,
  );
  return rows;
}

/** Deletes the conversation's own row; answers whether there was one. */
export async function deleteConversationRow(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM conversations WHERE account_id = $1 AND id = $2', [
    accountId,
    id,
  ]);
  return rowCount > 0;
}

/** A message deleted before any provider had it: it will never be sent. */
export interface UnsentMessage {
  id: string;
  charged_micros: number;
  refunded_at: Date | null;
  bulk_job_id: string | null;
}

/**
 * Deletes a conversation's messages; answers those no provider has had: queued, their hand-over not
 * begun. Each is judged as it was deleted, so a dispatcher's claim that committed first counts.
 */
export async function deleteConversationMessages(
  sql: Sql,
  accountId: string,
  conversationId: string,
): Promise<UnsentMessage[]> {
  const { rows } = await sql.query<UnsentMessage>(
    `WITH gone AS (
       DELETE FROM messages WHERE account_id = $1 AND conversation_id = $2
       RETURNING id, status, accepted_at, handover_started_at, charged_micros, refunded_at, bulk_job_id,
                 campaign_id, contact_id
     ), kept AS (
       -- A campaign's recipient keeps the status its message had (one never sent: failed).
       UPDATE campaign_recipients r SET kept_status = CASE WHEN g.status = 'queued' THEN 'failed' ELSE g.status END
         FROM gone g
        WHERE g.campaign_id IS NOT NULL AND r.campaign_id = g.campaign_id AND r.contact_id = g.contact_id
          AND r.message_id = g.id
     ), files AS (
       -- The customers' files the messages carried go with them (their chunks by cascade).
       DELETE FROM media f USING gone g WHERE f.account_id = $1 AND f.message_id = g.id
     )
     SELECT id, charged_micros, refunded_at, bulk_job_id FROM gone
      WHERE status = 'queued' AND accepted_at IS NULL AND handover_started_at IS NULL
      ORDER BY id`,
    [accountId, conversationId],
  );
  return rows;
}
