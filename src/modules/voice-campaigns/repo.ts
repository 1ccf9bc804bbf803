// Voice campaigns and their audience rows in the database. Reads take the account: another
// tenant's campaign is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Audience, CampaignStatus } from '../campaign-shared/index.ts';
import { campaignTable } from '../campaign-shared/index.ts';

export type { Audience, CampaignStatus };

export interface CallSettings {
  variables?: Record<string, unknown>;
  machineDetection?: boolean;
  ringTimeoutSeconds?: number;
  maxDurationSeconds: number;
}

export interface CampaignRow {
  id: string;
  account_id: string;
  name: string;
  script_id: string;
  status: CampaignStatus;
  audience: Audience;
  start_at: Date | null;
  calling_from: string;
  calling_until: string;
  calls_per_second: number;
  max_concurrent: number;
  retry_on: string[];
  max_attempts: number;
  retry_after: string;
  call_settings: CallSettings;
  mode: 'live' | 'sandbox' | null;
  estimated_cost_micros: string | number;
  started_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type CampaignValues = Omit<
  CampaignRow,
  'id' | 'account_id' | 'status' | 'mode' | 'started_at' | 'ended_at' | 'created_at' | 'updated_at'
>;

const COLUMNS = [
  'name',
  'script_id',
  'audience',
  'start_at',
  'calling_from',
  'calling_until',
  'calls_per_second',
  'max_concurrent',
  'retry_on',
  'max_attempts',
  'retry_after',
  'call_settings',
  'estimated_cost_micros',
] as const;

const json = (column: string, value: unknown) =>
  column === 'audience' || column === 'call_settings' ? JSON.stringify(value) : value;

export async function insertCampaign(
  sql: Sql,
  id: string,
  accountId: string,
  values: CampaignValues,
  now: Date,
): Promise<CampaignRow> {
  const params = COLUMNS.map((c) => json(c, values[c]));
  const { rows } = await sql.query<CampaignRow>(
    `INSERT INTO voice_campaigns (id, account_id, status, created_at, updated_at, ${COLUMNS.join(', ')})
     VALUES ($1, $2, 'draft', $3, $3, ${COLUMNS.map((_, i) => `$${i + 4}`).join(', ')}) RETURNING *`,
    [id, accountId, now, ...params],
  );
  return rows[0]!;
}

export async function updateCampaignValues(
  sql: Sql,
  id: string,
  values: CampaignValues,
  now: Date,
): Promise<void> {
  await sql.query(
    `UPDATE voice_campaigns SET ${COLUMNS.map((c, i) => `${c} = $${i + 3}`).join(', ')}, updated_at = $2 WHERE id = $1`,
    [id, now, ...COLUMNS.map((c) => json(c, values[c]))],
  );
}

export async function setCampaignStatus(
  sql: Sql,
  id: string,
  change: {
    status: CampaignStatus;
    mode?: 'live' | 'sandbox';
    started_at?: Date;
    ended_at?: Date;
    estimated_cost_micros?: number;
  },
  now: Date,
): Promise<void> {
  await sql.query(
    `UPDATE voice_campaigns SET status = $2, mode = coalesce($3, mode), started_at = coalesce($4, started_at),
            ended_at = coalesce($5, ended_at), estimated_cost_micros = coalesce($6, estimated_cost_micros), updated_at = $7
      WHERE id = $1`,
    [
      id,
      change.status,
      change.mode ?? null,
      change.started_at ?? null,
      change.ended_at ?? null,
      change.estimated_cost_micros ?? null,
      now,
    ],
  );
}

const table = campaignTable<CampaignRow>('voice_campaigns');
export const findCampaign = table.find;
export const listCampaigns = table.list;
export const countCampaigns = table.count;
export const deleteCampaign = table.remove;

/** Fixes the audience: a row per contact, due now. */
/**
 * Fixes the audience: each contact to be called, except those without a phone (known to WhatsApp by
 * their user id alone), who are done at once as `skipped`, error `no_phone`: a call needs a number.
 */
export async function insertAudience(
  sql: Sql,
  campaignId: string,
  contacts: { id: string; phone: string | null }[],
  now: Date,
): Promise<void> {
  await sql.query(
    `INSERT INTO voice_campaign_contacts (campaign_id, contact_id, state, next_attempt_at, outcome, error_code)
     SELECT $1, u.id, CASE WHEN u.callable THEN 'pending' ELSE 'done' END, $4,
            CASE WHEN u.callable THEN NULL ELSE 'skipped' END, CASE WHEN u.callable THEN NULL ELSE 'no_phone' END
       FROM unnest($2::text[], $3::boolean[]) AS u (id, callable) ON CONFLICT DO NOTHING`,
    [campaignId, contacts.map((c) => c.id), contacts.map((c) => c.phone !== null), now],
  );
}

export interface Counters {
  total: number;
  queued: number;
  inProgress: number;
  completed: number;
  answered: number;
  busy: number;
  noAnswer: number;
  failed: number;
  canceled: number;
  /** Not called: no phone (a customer WhatsApp knows by user id alone). */
  skipped: number;
}

const ZERO: Counters = {
  total: 0,
  queued: 0,
  inProgress: 0,
  completed: 0,
  answered: 0,
  busy: 0,
  noAnswer: 0,
  failed: 0,
  canceled: 0,
  skipped: 0,
};

/** Each campaign's counters, counted from its rows. */
export async function countersOf(sql: Sql, campaignIds: string[]): Promise<Map<string, Counters>> {
  const { rows } = await sql.query<Counters & { campaign_id: string }>(
    `SELECT campaign_id, count(*)::int AS total,
            count(*) FILTER (WHERE state = 'pending')::int AS queued,
            count(*) FILTER (WHERE state = 'calling')::int AS "inProgress",
            count(*) FILTER (WHERE state = 'done' AND outcome = 'completed')::int AS completed,
            count(*) FILTER (WHERE state = 'done' AND answered)::int AS answered,
            count(*) FILTER (WHERE state = 'done' AND outcome = 'busy')::int AS busy,
            count(*) FILTER (WHERE state = 'done' AND outcome = 'no_answer')::int AS "noAnswer",
            count(*) FILTER (WHERE state = 'done' AND outcome = 'failed')::int AS failed,
            count(*) FILTER (WHERE state = 'done' AND outcome = 'canceled')::int AS canceled,
            count(*) FILTER (WHERE state = 'done' AND outcome = 'skipped')::int AS skipped
       FROM voice_campaign_contacts WHERE campaign_id = ANY($1::text[]) GROUP BY campaign_id`,
    [campaignIds],
  );
  const found = new Map(rows.map(({ campaign_id, ...c }) => [campaign_id, c]));
  return new Map(campaignIds.map((id) => [id, found.get(id) ?? ZERO]));
}
