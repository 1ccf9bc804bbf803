// Broadcast campaigns and their recipients in the database. Reads take the account: another
// tenant's campaign is not found. A recipient's status is its row's until it is messaged, then its
// message's (or, once the message was deleted with its conversation, the status it had then).
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { Weekday } from '../automation/index.ts';
import type { Audience, CampaignStatus } from '../campaign-shared/index.ts';
import { campaignTable } from '../campaign-shared/index.ts';

export interface CampaignMessage {
  templateName: string;
  templateLanguage: string;
  /** A list (POSITIONAL template) or an object by placeholder name (NAMED template); Liquid each. */
  parameters?: string[] | Record<string, string>;
}

export interface CampaignWindow {
  from: string;
  until: string;
  days?: Weekday[];
}

export interface CampaignRow {
  id: string;
  account_id: string;
  name: string;
  message: CampaignMessage;
  audience: Audience;
  start_at: Date | null;
  send_window: CampaignWindow | null;
  messages_per_second: number | null;
  status: CampaignStatus;
  mode: 'live' | 'sandbox' | null;
  estimated_micros: string | number | null;
  estimated_at: Date | null;
  backoff_rate: number | null;
  backoff_at: Date | null;
  paused_reason: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type CampaignValues = Pick<
  CampaignRow,
  'name' | 'message' | 'audience' | 'start_at' | 'send_window' | 'messages_per_second'
>;

const COLUMNS = ['name', 'message', 'audience', 'start_at', 'send_window', 'messages_per_second'] as const;
const JSON_COLUMNS = new Set(['message', 'audience', 'send_window']);
const param = (values: CampaignValues, c: (typeof COLUMNS)[number]) =>
  JSON_COLUMNS.has(c) && values[c] !== null ? JSON.stringify(values[c]) : values[c];

export async function insertCampaign(
  sql: Sql,
  id: string,
  accountId: string,
  values: CampaignValues,
  now: Date,
): Promise<CampaignRow> {
  const { rows } = await sql.query<CampaignRow>(
    `INSERT INTO campaigns (id, account_id, status, created_at, updated_at, ${COLUMNS.join(', ')})
     VALUES ($1, $2, 'draft', $3, $3, ${COLUMNS.map((_, i) => `$${i + 4}`).join(', ')}) RETURNING *`,
    [id, accountId, now, ...COLUMNS.map((c) => param(values, c))],
  );
  return rows[0]!;
}

/** Replaces a draft's definition; its estimate no longer holds. */
export async function updateCampaignValues(
  sql: Sql,
  id: string,
  values: CampaignValues,
  now: Date,
): Promise<CampaignRow> {
  const { rows } = await sql.query<CampaignRow>(
    `UPDATE campaigns SET ${COLUMNS.map((c, i) => `${c} = $${i + 3}`).join(', ')}, updated_at = $2,
            estimated_micros = NULL, estimated_at = NULL
      WHERE id = $1 RETURNING *`,
    [id, now, ...COLUMNS.map((c) => param(values, c))],
  );
  return rows[0]!;
}

export interface StatusChange {
  status: CampaignStatus;
  mode?: 'live' | 'sandbox';
  started_at?: Date;
  completed_at?: Date;
  estimated_micros?: number;
  estimated_at?: Date;
  /** Why the sender paused it; cleared by any other move. */
  paused_reason?: string;
}

export async function setCampaignStatus(
  sql: Sql,
  id: string,
  change: StatusChange,
  now: Date,
): Promise<CampaignRow> {
  const { rows } = await sql.query<CampaignRow>(
    `UPDATE campaigns SET status = $2, mode = coalesce($3, mode), started_at = coalesce($4, started_at),
            completed_at = coalesce($5, completed_at), estimated_micros = coalesce($6, estimated_micros),
            estimated_at = coalesce($7, estimated_at), updated_at = $8, paused_reason = $9
      WHERE id = $1 RETURNING *`,
    [
      id,
      change.status,
      change.mode ?? null,
      change.started_at ?? null,
      change.completed_at ?? null,
      change.estimated_micros ?? null,
      change.estimated_at ?? null,
      now,
      change.paused_reason ?? null,
    ],
  );
  return rows[0]!;
}

const table = campaignTable<CampaignRow>('campaigns');
export const findCampaign = table.find;
export const listCampaigns = table.list;
export const countCampaigns = table.count;
export const deleteCampaign = table.remove;

export interface Counters {
  total: number;
  queued: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  skipped: number;
  replied: number;
}

const ZERO: Counters = {
  total: 0,
  queued: 0,
  sent: 0,
  delivered: 0,
  read: 0,
  failed: 0,
  skipped: 0,
  replied: 0,
};

/**
 * Each campaign's counters and what its messages cost the wallet so far (charged, less refunds,
 * plus adjustments). Two aggregates in one statement: the rows by state (and a deleted message's
 * kept status), and the live messages by status.
 */
export async function countersOf(
  sql: Sql,
  campaignIds: string[],
): Promise<Map<string, { counters: Counters; chargedMicros: number }>> {
  // One statement, so one snapshot: two queries could see a round's rows still pending and its
  // messages already made, counting those recipients twice.
  const { rows } = await sql.query<{
    kind: 'row' | 'message';
    campaign_id: string;
    status: string;
    n: number;
    replied: number;
    charged: string | null;
  }>(
    `SELECT 'row' AS kind, campaign_id,
            CASE state WHEN 'pending' THEN 'queued' WHEN 'messaged' THEN coalesce(kept_status, 'live') ELSE state END AS status,
            count(*)::int AS n, count(replied_at)::int AS replied, NULL::text AS charged
       FROM campaign_recipients WHERE campaign_id = ANY($1::text[]) GROUP BY 2, 3
     UNION ALL
     SELECT 'message', campaign_id, status, count(*)::int, 0,
            sum(charged_micros - CASE WHEN refunded_at IS NULL THEN 0 ELSE charged_micros END + adjusted_micros)::text
       FROM messages WHERE campaign_id = ANY($1::text[]) GROUP BY 2, 3`,
    [campaignIds],
  );
  const out = new Map(campaignIds.map((id) => [id, { counters: { ...ZERO }, chargedMicros: 0 }]));
  const add = (id: string, status: string, n: number) => {
    const c = out.get(id)!.counters;
    if (status in c && status !== 'total' && status !== 'replied') c[status as keyof Counters] += n;
  };
  for (const r of rows) {
    const entry = out.get(r.campaign_id)!;
    if (r.kind === 'message') {
      add(r.campaign_id, r.status, r.n);
      entry.chargedMicros += Number(r.charged);
      continue;
    }
    entry.counters.total += r.n;
    entry.counters.replied += r.replied;
    if (r.status !== 'live') add(r.campaign_id, r.status, r.n);
  }
  return out;
}

export type RecipientStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'skipped';

export interface RecipientRow {
  id: string;
  contact_id: string;
  /** Null for a contact known by WhatsApp user id alone. */
  phone: string | null;
  status: RecipientStatus;
  message_id: string | null;
  reason: string | null;
  error: { code: string; message: string } | null;
  messaged_at: Date | null;
  replied_at: Date | null;
}

export async function listRecipients(
  sql: Sql,
  campaignId: string,
  page: Page,
  filter: { status?: string; replied?: boolean },
): Promise<RecipientRow[]> {
  const { rows } = await sql.query<RecipientRow>(
    `SELECT * FROM (
       SELECT r.contact_id AS id, r.contact_id, r.phone, r.message_id, r.messaged_at, r.replied_at,
              CASE r.state WHEN 'pending' THEN 'queued' WHEN 'messaged' THEN coalesce(m.status, r.kept_status)
                           ELSE r.state END AS status,
              coalesce(r.reason, CASE WHEN m.status = 'failed' THEN m.error->>'code' END) AS reason,
              coalesce(r.error, CASE WHEN m.status = 'failed' THEN m.error END) AS error
         FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
        WHERE r.campaign_id = $1 AND ($2::text IS NULL OR r.contact_id < $2)
          AND ($4::boolean IS NULL OR (r.replied_at IS NOT NULL) = $4)
     ) x WHERE ($3::text IS NULL OR x.status = $3)
     ORDER BY x.contact_id DESC LIMIT $5`,
    [campaignId, page.before, filter.status ?? null, filter.replied ?? null, page.limit + 1],
  );
  return rows;
}
