// Journeys, their versions, runs and steps in the database. Every function takes the account:
// another tenant's journey or run is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { Definition } from './graph.ts';

export type JourneyStatus = 'draft' | 'published' | 'paused' | 'archived';

export interface JourneyRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  status: JourneyStatus;
  version: number;
  definition: Definition;
  trigger_event: string | null;
  config_id: string | null;
  signing_secret_sealed: string | null;
  created_at: Date;
  updated_at: Date;
}

export type RunStatus = 'running' | 'waiting' | 'completed' | 'failed' | 'canceled' | 'expired';
export const LIVE_STATUSES: RunStatus[] = ['running', 'waiting'];

export interface RunError {
  code: string;
  message: string;
}

export interface RunRow {
  id: string;
  account_id: string;
  journey_id: string;
  version: number;
  contact_id: string;
  status: RunStatus;
  current_node_id: string | null;
  resume_at: Date | null;
  resume_edge: string | null;
  vars: Record<string, unknown>;
  trigger_data: Record<string, unknown>;
  trigger_event_id: string | null;
  depth: number;
  error: RunError | null;
  step_count: number;
  last_node_id: string | null;
  repeat_count: number;
  sandbox: boolean;
  expires_at: Date;
  started_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

export type StepStatus = 'waiting' | 'completed' | 'failed' | 'canceled';

export interface StepRow {
  run_id: string;
  seq: number;
  journey_id: string;
  node_id: string;
  type: string;
  status: StepStatus;
  edge: string | null;
  output: unknown;
  error: RunError | null;
  started_at: Date;
  ended_at: Date | null;
}

/**
 * The entry event kept apart for the engine's lookup (and automation_interest); a timed entry
 * (`after`) is no event of the outbox, so it is left out: the timed scan finds it (timed.ts).
 */
const triggerEventOf = (d: Definition) =>
  d.entry.trigger === 'event' && d.entry.after === undefined ? (d.entry.event ?? null) : null;

export async function countJourneys(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM journeys WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

export async function insertJourney(
  sql: Sql,
  row: Pick<
    JourneyRow,
    'id' | 'account_id' | 'name' | 'description' | 'definition' | 'config_id' | 'signing_secret_sealed'
  >,
  now: Date,
): Promise<JourneyRow> {
  const { rows } = await sql.query<JourneyRow>(
    `INSERT INTO journeys (id, account_id, name, description, status, version, definition, trigger_event,
                           config_id, signing_secret_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'draft', 1, $5, $6, $7, $8, $9, $9) RETURNING *`,
    [
      row.id,
      row.account_id,
      row.name,
      row.description,
      JSON.stringify(row.definition),
      triggerEventOf(row.definition),
      row.config_id,
      row.signing_secret_sealed,
      now,
    ],
  );
  return rows[0]!;
}

export async function findJourney(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<JourneyRow | null> {
  const { rows } = await sql.query<JourneyRow>(
    `SELECT * FROM journeys WHERE id = $1 AND account_id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export async function updateJourney(
  sql: Sql,
  id: string,
  values: Pick<JourneyRow, 'name' | 'description' | 'status' | 'version' | 'definition'>,
  now: Date,
): Promise<JourneyRow> {
  const { rows } = await sql.query<JourneyRow>(
    `UPDATE journeys SET name = $2, description = $3, status = $4, version = $5, definition = $6,
                         trigger_event = $7, updated_at = $8
      WHERE id = $1 RETURNING *`,
    [
      id,
      values.name,
      values.description,
      values.status,
      values.version,
      JSON.stringify(values.definition),
      triggerEventOf(values.definition),
      now,
    ],
  );
  return rows[0]!;
}

/** Keeps the journey's current version as published (runs started on it read it). */
export async function saveVersion(sql: Sql, row: JourneyRow, now: Date): Promise<void> {
  await sql.query(
    `INSERT INTO journey_versions (journey_id, version, definition, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (journey_id, version) DO UPDATE SET definition = EXCLUDED.definition`,
    [row.id, row.version, JSON.stringify(row.definition), now],
  );
}

export async function deleteJourney(sql: Sql, id: string): Promise<void> {
  await sql.query('DELETE FROM automation_calls WHERE journey_id = $1', [id]);
  await sql.query('DELETE FROM journeys WHERE id = $1', [id]);
}

export async function listJourneys(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { status?: string },
): Promise<JourneyRow[]> {
  const { rows } = await sql.query<JourneyRow>(
    `SELECT * FROM journeys
      WHERE account_id = $1 AND ($2::text IS NULL OR id < $2) AND ($3::text IS NULL OR status = $3)
      ORDER BY id DESC LIMIT $4`,
    [accountId, page.before, filters.status ?? null, page.limit + 1],
  );
  return rows;
}

export async function findRun(
  sql: Sql,
  accountId: string,
  journeyId: string | null,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<RunRow | null> {
  const { rows } = await sql.query<RunRow>(
    `SELECT * FROM journey_runs WHERE id = $1 AND account_id = $2 AND ($3::text IS NULL OR journey_id = $3)
     ${options.forUpdate ? 'FOR UPDATE' : ''}`,
    [id, accountId, journeyId],
  );
  return rows[0] ?? null;
}

export async function listRuns(
  sql: Sql,
  accountId: string,
  journeyId: string,
  page: Page,
  filters: { status?: string; contactId?: string },
): Promise<RunRow[]> {
  const { rows } = await sql.query<RunRow>(
    `SELECT * FROM journey_runs
      WHERE account_id = $1 AND journey_id = $2 AND ($3::text IS NULL OR id < $3)
        AND ($4::text IS NULL OR status = $4) AND ($5::text IS NULL OR contact_id = $5)
      ORDER BY id DESC LIMIT $6`,
    [accountId, journeyId, page.before, filters.status ?? null, filters.contactId ?? null, page.limit + 1],
  );
  return rows;
}

export async function stepsOf(sql: Sql, runId: string): Promise<StepRow[]> {
  const { rows } = await sql.query<StepRow>(
    'SELECT * FROM journey_run_steps WHERE run_id = $1 ORDER BY seq',
    [runId],
  );
  return rows;
}

export async function insertRun(sql: Sql, row: RunRow): Promise<RunRow> {
  const { rows } = await sql.query<RunRow>(
    `INSERT INTO journey_runs (id, account_id, journey_id, version, contact_id, status, current_node_id, resume_at,
                               vars, trigger_data, trigger_event_id, depth, sandbox, expires_at, started_at,
                               updated_at)
     VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, '{}', $8, $9, $10, $11, $12, $13, $13) RETURNING *`,
    [
      row.id,
      row.account_id,
      row.journey_id,
      row.version,
      row.contact_id,
      row.current_node_id,
      row.resume_at,
      JSON.stringify(row.trigger_data),
      row.trigger_event_id,
      row.depth,
      row.sandbox,
      row.expires_at,
      row.started_at,
    ],
  );
  return rows[0]!;
}
