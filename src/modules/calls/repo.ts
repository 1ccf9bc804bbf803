// Calls in the database. Reads take the account: another tenant's call is not found. The writes of a
// call's life (status, digits, the dialler's lease, the simulator's state) are here, each one
// statement, called by the modules that decide them (status.ts, dialer.ts, ivr.ts).

import type { VoiceProvider } from '../../channels/voice.ts';
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import { ERASED } from '../erasure/index.ts';
import type { CallStatus } from './transition.ts';

export interface Digit {
  nodeId: string;
  input: string;
  at: string;
}

/** The script's texts rendered for the call (the tts text, each ivr node's `say`), by the text as written. */
export type RenderedTexts = Record<string, string>;

export interface CallRow {
  id: string;
  account_id: string;
  provider: VoiceProvider;
  mode: 'live' | 'sandbox';
  to_number: string;
  from_number: string | null;
  country: string | null;
  contact_id: string | null;
  script_id: string;
  script_version: number;
  variables: Record<string, unknown>;
  rendered: RenderedTexts;
  machine_detection: boolean;
  ring_timeout_seconds: number;
  max_duration_seconds: number;
  status: CallStatus;
  answered_by: 'human' | 'machine' | 'unknown' | null;
  digits: Digit[];
  provider_call_id: string | null;
  error_code: string | null;
  error_message: string | null;
  provider_error_code: string | null;
  duration_seconds: number | null;
  billable_minutes: number | null;
  rate_micros: string | number;
  held_micros: string | number;
  charged_micros: string | number;
  due_at: Date;
  lease_until: Date | null;
  dial_attempts: number;
  hangup_requested_at: Date | null;
  campaign_id: string | null;
  campaign_attempt: number | null;
  caused_by: object | null;
  journey_node_id: string | null;
  sim: object | null;
  sim_due_at: Date | null;
  sim_keys: string;
  queued_at: Date;
  initiated_at: Date | null;
  ringing_at: Date | null;
  answered_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewCall = Pick<
  CallRow,
  | 'id'
  | 'account_id'
  | 'provider'
  | 'mode'
  | 'to_number'
  | 'from_number'
  | 'country'
  | 'contact_id'
  | 'script_id'
  | 'script_version'
  | 'variables'
  | 'rendered'
  | 'machine_detection'
  | 'ring_timeout_seconds'
  | 'max_duration_seconds'
  | 'rate_micros'
  | 'campaign_id'
  | 'campaign_attempt'
  | 'caused_by'
  | 'journey_node_id'
>;

export async function insertCall(sql: Sql, call: NewCall, now: Date): Promise<CallRow> {
  const { rows } = await sql.query<CallRow>(
    `INSERT INTO calls (id, account_id, provider, mode, to_number, from_number, country, contact_id, script_id,
                        script_version, variables, rendered, machine_detection, ring_timeout_seconds,
                        max_duration_seconds, rate_micros, campaign_id, campaign_attempt, caused_by, journey_node_id,
                        status, due_at, queued_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $21, 'queued',
             $20, $20, $20, $20)
     RETURNING *`,
    [
      call.id,
      call.account_id,
      call.provider,
      call.mode,
      call.to_number,
      call.from_number,
      call.country,
      call.contact_id,
      call.script_id,
      call.script_version,
      JSON.stringify(call.variables),
      JSON.stringify(call.rendered),
      call.machine_detection,
      call.ring_timeout_seconds,
      call.max_duration_seconds,
      call.rate_micros,
      call.campaign_id,
      call.campaign_attempt,
      call.caused_by ? JSON.stringify(call.caused_by) : null,
      now,
      call.journey_node_id,
    ],
  );
  return rows[0]!;
}

export async function findCall(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<CallRow | null> {
  const { rows } = await sql.query<CallRow>(
    `SELECT * FROM calls WHERE id = $1 AND account_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export interface CallFilters {
  status?: string;
  to?: string;
  campaignId?: string;
}

export async function listCalls(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: CallFilters,
): Promise<CallRow[]> {
  const { rows } = await sql.query<CallRow>(
    `SELECT * FROM calls
      WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) AND ($3::text IS NULL OR status = $3)
        AND ($4::text IS NULL OR to_number = $4) AND ($5::text IS NULL OR campaign_id = $5)
      ORDER BY id DESC LIMIT $6`,
    [
      accountId,
      page.before,
      filters.status ?? null,
      filters.to ?? null,
      filters.campaignId ?? null,
      page.limit + 1,
    ],
  );
  return rows;
}

/** The columns a change of a call's life writes (statuses, times, outcome, billing). */
export type CallChange = Partial<
  Pick<
    CallRow,
    | 'status'
    | 'answered_by'
    | 'provider_call_id'
    | 'error_code'
    | 'error_message'
    | 'provider_error_code'
    | 'duration_seconds'
    | 'billable_minutes'
    | 'held_micros'
    | 'charged_micros'
    | 'due_at'
    | 'lease_until'
    | 'dial_attempts'
    | 'hangup_requested_at'
    | 'sim'
    | 'sim_due_at'
    | 'initiated_at'
    | 'ringing_at'
    | 'answered_at'
    | 'ended_at'
  >
>;

const JSON_COLUMNS = new Set(['sim']);

/** Writes the given columns of one call (and its `updated_at`). */
export async function updateCall(sql: Sql, id: string, change: CallChange, now: Date): Promise<void> {
  const entries = Object.entries(change).filter(([, v]) => v !== undefined);
  const sets = entries.map(([column], i) => `${column} = $${i + 3}`);
  const values = entries.map(([column, v]) =>
    JSON_COLUMNS.has(column) && v !== null ? JSON.stringify(v) : v,
  );
  await sql.query(`UPDATE calls SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [
    id,
    now,
    ...values,
  ]);
}

/** Appends a key press to the call's digits. */
export async function appendDigit(sql: Sql, id: string, digit: Digit, now: Date): Promise<void> {
  await sql.query(`UPDATE calls SET digits = digits || $2::jsonb, updated_at = $3 WHERE id = $1`, [
    id,
    JSON.stringify([digit]),
    now,
  ]);
}

/**
 * Records a callback once: true the first time this (kind, key) is heard for the call, false for a
 * repeat (which then changes nothing). A call whose number was erased while it went on keeps no
 * params of a later callback: they name the number again.
 */
export async function firstHeard(
  sql: Sql,
  call: Pick<CallRow, 'id' | 'to_number'>,
  kind: string,
  key: string,
  params: object,
  now: Date,
): Promise<boolean> {
  const kept = call.to_number === ERASED ? {} : params;
  const { rows } = await sql.query(
    `INSERT INTO call_callbacks (call_id, kind, key, params, received_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [call.id, kind, key, JSON.stringify(kept), now],
  );
  return rows.length === 1;
}

/** The call a provider's callback names: by our id (echoed in its URL), else by the provider's. */
export async function callForCallback(
  sql: Sql,
  accountId: string,
  ids: { callId: string | null; providerCallId: string | null },
): Promise<CallRow | null> {
  const { rows } = await sql.query<CallRow>(
    `SELECT * FROM calls
      WHERE account_id = $1 AND (id = $2 OR ($2::text IS NULL AND provider_call_id = $3))
      FOR UPDATE`,
    [accountId, ids.callId, ids.providerCallId],
  );
  return rows[0] ?? null;
}
