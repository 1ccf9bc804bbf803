// Journeys, their versions, runs and steps in the database. Every function takes the account:
// another tenant's journey or run is not found.
import type { Sql } from '../../kernel/database/db.ts';
import { Versioned } from '../../kernel/database/versioned.ts';
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

/** Journeys one account may have (journey configs' own count among them). */
export const MAX_JOURNEYS_PER_ACCOUNT = 200;

export type Move = 'publish' | 'pause' | 'archive';

export const JOURNEYS = new Versioned<JourneyRow, Move>({
  table: 'journeys',
  noun: 'journey',
  nouns: 'journeys',
  limit: MAX_JOURNEYS_PER_ACCOUNT,
  created: ['name', 'description', 'config_id', 'signing_secret_sealed'],
  edited: ['name', 'description'],
  derived: { trigger_event: triggerEventOf },
  versions: { table: 'journey_versions', key: 'journey_id' },
  alsoDeletes: [{ table: 'automation_calls', column: 'journey_id' }],
  deletable: ['draft', 'archived'],
  moves: {
    publish: { from: ['draft', 'paused'], to: 'published', done: 'published' },
    pause: { from: ['published'], to: 'paused', done: 'paused' },
    archive: { from: ['draft', 'published', 'paused'], to: 'archived', done: 'archived' },
  },
});

export function findJourney(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<JourneyRow | null> {
  return JOURNEYS.find(sql, accountId, id, options);
}

export function listJourneys(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { status?: string },
): Promise<JourneyRow[]> {
  return JOURNEYS.list(sql, accountId, page, filters);
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
