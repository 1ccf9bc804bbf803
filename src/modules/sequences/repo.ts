// Sequences, their versions and their enrollments in the database. Every function takes the
// account: another tenant's sequence or enrollment is not found.
import type { Sql } from '../../kernel/database/db.ts';
import { Versioned } from '../../kernel/database/versioned.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { Conditions, SendWindow } from '../automation/index.ts';
import type { MessageFieldsInput } from '../messages/index.ts';

export type Delay = { after: string } | { at: string; offset?: string };

export interface Step {
  id: string;
  delay: Delay;
  message: MessageFieldsInput;
}

export type Reenroll = 'never' | 'after_exit' | 'always';

/** A sequence as it runs: what a version holds. */
export interface Definition {
  steps: Step[];
  enrollment: { trigger?: { event: string; conditions?: Conditions }; reenroll: Reenroll };
  exit: { onReply: boolean; onTagAdded?: string; onTagRemoved?: string };
  sendWindow?: SendWindow | null;
}

export type SequenceStatus = 'draft' | 'active' | 'paused' | 'archived';

export interface SequenceRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  status: SequenceStatus;
  version: number;
  definition: Definition;
  trigger_event: string | null;
  created_at: Date;
  updated_at: Date;
}

export type EnrollmentStatus = 'active' | 'completed' | 'exited' | 'failed' | 'canceled';
export type ExitReason = 'replied' | 'tag_added' | 'tag_removed' | 'opted_out' | 'manual' | 'archived';

export interface StepRecord {
  stepId: string;
  status: 'pending' | 'sent' | 'skipped' | 'failed';
  messageId?: string;
  at?: string;
  reason?: string;
}

export interface EnrollmentRow {
  id: string;
  account_id: string;
  sequence_id: string;
  version: number;
  contact_id: string;
  status: EnrollmentStatus;
  exit_reason: ExitReason | null;
  reason: string | null;
  step_index: number;
  next_run_at: Date | null;
  steps: StepRecord[];
  sandbox: boolean;
  opted_in_at_start: boolean;
  trigger_event_id: string | null;
  created_at: Date;
  updated_at: Date;
  ended_at: Date | null;
}

/** Sequences one account may have. */
export const MAX_SEQUENCES_PER_ACCOUNT = 200;

export type Move = 'publish' | 'pause' | 'resume' | 'archive';

export const SEQUENCES = new Versioned<SequenceRow, Move>({
  table: 'sequences',
  noun: 'sequence',
  nouns: 'sequences',
  limit: MAX_SEQUENCES_PER_ACCOUNT,
  created: ['name', 'description'],
  edited: ['name', 'description'],
  derived: { trigger_event: (d) => d.enrollment.trigger?.event ?? null },
  versions: { table: 'sequence_versions', key: 'sequence_id' },
  deletable: ['draft', 'archived'],
  moves: {
    publish: { from: ['draft'], to: 'active', done: 'published' },
    pause: { from: ['active'], to: 'paused', done: 'paused' },
    resume: { from: ['paused'], to: 'active', done: 'resumed' },
    archive: { from: ['draft', 'active', 'paused'], to: 'archived', done: 'archived' },
  },
});

export function findSequence(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SequenceRow | null> {
  return SEQUENCES.find(sql, accountId, id, options);
}

export function listSequences(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { status?: string },
): Promise<SequenceRow[]> {
  return SEQUENCES.list(sql, accountId, page, filters);
}

export async function findEnrollment(
  sql: Sql,
  accountId: string,
  sequenceId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EnrollmentRow | null> {
  const { rows } = await sql.query<EnrollmentRow>(
    `SELECT * FROM sequence_enrollments WHERE id = $1 AND account_id = $2 AND sequence_id = $3
     ${options.forUpdate ? 'FOR UPDATE' : ''}`,
    [id, accountId, sequenceId],
  );
  return rows[0] ?? null;
}

export async function listEnrollments(
  sql: Sql,
  accountId: string,
  sequenceId: string,
  page: Page,
  filters: { status?: string; contactId?: string },
): Promise<EnrollmentRow[]> {
  const { rows } = await sql.query<EnrollmentRow>(
    `SELECT * FROM sequence_enrollments
      WHERE account_id = $1 AND sequence_id = $2 AND ($3::text IS NULL OR id < $3)
        AND ($4::text IS NULL OR status = $4) AND ($5::text IS NULL OR contact_id = $5)
      ORDER BY id DESC LIMIT $6`,
    [accountId, sequenceId, page.before, filters.status ?? null, filters.contactId ?? null, page.limit + 1],
  );
  return rows;
}

export async function insertEnrollment(sql: Sql, row: EnrollmentRow): Promise<EnrollmentRow> {
  const { rows } = await sql.query<EnrollmentRow>(
    `INSERT INTO sequence_enrollments (id, account_id, sequence_id, version, contact_id, status, step_index,
                                       next_run_at, steps, sandbox, opted_in_at_start, trigger_event_id, created_at,
                                       updated_at)
     VALUES ($1, $2, $3, $4, $5, 'active', 0, $6, $7, $8, $9, $10, $11, $11) RETURNING *`,
    [
      row.id,
      row.account_id,
      row.sequence_id,
      row.version,
      row.contact_id,
      row.next_run_at,
      JSON.stringify(row.steps),
      row.sandbox,
      row.opted_in_at_start,
      row.trigger_event_id,
      row.created_at,
    ],
  );
  return rows[0]!;
}

/** Writes where an enrollment stands after a step, an exit or a wake. */
export async function saveEnrollment(sql: Sql, row: EnrollmentRow, now: Date): Promise<EnrollmentRow> {
  const { rows } = await sql.query<EnrollmentRow>(
    `UPDATE sequence_enrollments
        SET status = $2, exit_reason = $3, reason = $4, step_index = $5, next_run_at = $6, steps = $7,
            updated_at = $8, ended_at = CASE WHEN $2 = 'active' THEN NULL ELSE coalesce(ended_at, $8) END
      WHERE id = $1 RETURNING *`,
    [
      row.id,
      row.status,
      row.exit_reason,
      row.reason,
      row.step_index,
      row.status === 'active' ? row.next_run_at : null,
      JSON.stringify(row.steps),
      now,
    ],
  );
  return rows[0]!;
}
