// Sequences: saved checked (every fault at once, with its field), and moved through their life:
//   draft ──publish──▶ active ◀──resume── paused      (pause: active → paused)
//   any but archived ──archive──▶ archived            (active enrollments exit, reason archived)
// A draft is edited in place (its version stays 1). Once published, each edit makes the next
// version, kept in sequence_versions; enrollments run on the version they started on. An archived
// sequence is read-only. Only a draft or an archived sequence may be deleted (with its enrollments).
import type { Database, Sql, Tx } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, notFound } from '../../kernel/http/errors.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import {
  actionProblems,
  type Conditions,
  durationProblem,
  MAX_DELAY,
  refreshInterest,
  type SendWindow,
  sendWindowProblems,
  signedDurationMs,
  triggerConditionProblems,
} from '../automation/index.ts';
import { invalidFields, normalizeTag } from '../contacts/index.ts';
import type { MessageFieldsInput } from '../messages/index.ts';
import { endEnrollment } from './enroll.ts';
import {
  countSequences,
  type Definition,
  deleteSequence,
  type EnrollmentRow,
  findSequence,
  insertSequence,
  type Reenroll,
  type SequenceRow,
  type SequenceStatus,
  saveVersion,
  updateSequence,
} from './repo.ts';

/** Sequences one account may have. */
export const MAX_SEQUENCES_PER_ACCOUNT = 200;

/** The delay of a step given none: due at once (on enrolment, or right after the step before). */
const AT_ONCE = 'PT0S';

export interface SequenceServices {
  db: Database;
  egress: Egress;
  events: EventOutbox;
  now: () => Date;
}

export interface SequenceInput {
  name: string;
  description?: string | null;
  steps: {
    id?: string;
    /** Left out: at once (stored as `{after: "PT0S"}`). */
    delay?: { after: string } | { at: string; offset?: string };
    message: MessageFieldsInput;
  }[];
  enrollment?: { trigger?: { event: string; conditions?: Conditions }; reenroll?: Reenroll };
  exit?: { onReply?: boolean; onTagAdded?: string; onTagRemoved?: string };
  sendWindow?: SendWindow | null;
}

/** The definition as stored: defaults filled in, step ids made where missing, tags normalised. */
function definitionOf(input: SequenceInput, before?: Definition): Definition {
  const given = new Set(input.steps.map((s) => s.id).filter(Boolean));
  let n = 0;
  const freshId = () => {
    let id: string;
    do id = `step_${++n}`;
    while (given.has(id));
    return id;
  };
  const exit = input.exit ?? before?.exit ?? { onReply: true };
  const tag = (t: string | undefined) => (t === undefined ? undefined : (normalizeTag(t) ?? t));
  const enrollment = input.enrollment ?? before?.enrollment;
  return {
    steps: input.steps.map((s) => ({
      id: s.id ?? freshId(),
      delay: s.delay ?? { after: AT_ONCE },
      message: s.message,
    })),
    enrollment: {
      ...(enrollment?.trigger ? { trigger: enrollment.trigger } : {}),
      reenroll: enrollment?.reenroll ?? 'never',
    },
    exit: {
      onReply: exit.onReply ?? true,
      ...(exit.onTagAdded !== undefined ? { onTagAdded: tag(exit.onTagAdded) } : {}),
      ...(exit.onTagRemoved !== undefined ? { onTagRemoved: tag(exit.onTagRemoved) } : {}),
    },
    sendWindow: input.sendWindow === undefined ? (before?.sendWindow ?? null) : input.sendWindow,
  };
}

/** Every fault of a sequence as it would be saved. */
async function sequenceProblems(
  s: SequenceServices,
  name: string,
  definition: Definition,
): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  if (!name.trim()) issues.push({ field: 'name', issue: 'must not be blank' });
  const seen = new Set<string>();
  definition.steps.forEach((step, i) => {
    if (seen.has(step.id)) issues.push({ field: `steps[${i}].id`, issue: `repeats step id ${step.id}` });
    seen.add(step.id);
    if ('after' in step.delay) {
      const problem = durationProblem(step.delay.after, MAX_DELAY, { min: 'zero' });
      if (problem) issues.push({ field: `steps[${i}].delay.after`, issue: problem });
    } else if (step.delay.offset !== undefined) {
      const ms = signedDurationMs(step.delay.offset);
      if (ms === null || Math.abs(ms) > MAX_DELAY.toMillis()) {
        issues.push({
          field: `steps[${i}].delay.offset`,
          issue: 'must be an ISO-8601 duration of at most P365D, negative ("-P1D") for before',
        });
      }
    }
  });
  issues.push(
    ...(await actionProblems(
      definition.steps.map((step) => ({ type: 'send_message', message: step.message })),
      'steps',
      { egress: s.egress, memberExists: async () => false, sequenceExists: null, callsWebhooks: false },
    )),
  );
  const trigger = definition.enrollment.trigger;
  if (trigger?.conditions) {
    issues.push(
      ...triggerConditionProblems(trigger.conditions, trigger.event, 'enrollment.trigger.conditions'),
    );
  }
  for (const key of ['onTagAdded', 'onTagRemoved'] as const) {
    const tag = definition.exit[key];
    if (tag !== undefined && normalizeTag(tag) === null) {
      issues.push({
        field: `exit.${key}`,
        issue: 'must be 1–50 letters, digits, spaces or - _ : . and start with a letter or digit',
      });
    }
  }
  if (definition.sendWindow) issues.push(...sendWindowProblems(definition.sendWindow, 'sendWindow'));
  return issues;
}

/** Serialises the writers of one account's sequences (their count) until the transaction ends. */
async function lockSequences(sql: Sql, accountId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('sequences:' || $1, 0))`, [accountId]);
}

export async function createSequence(
  s: SequenceServices,
  accountId: string,
  input: SequenceInput,
): Promise<SequenceRow> {
  const definition = definitionOf(input);
  const issues = await sequenceProblems(s, input.name, definition);
  if (issues.length > 0) throw invalidFields(issues);
  return s.db.transaction(async (tx) => {
    await lockSequences(tx, accountId);
    if ((await countSequences(tx, accountId)) >= MAX_SEQUENCES_PER_ACCOUNT) {
      throw conflict(`At most ${MAX_SEQUENCES_PER_ACCOUNT} sequences are allowed; delete one first.`);
    }
    return insertSequence(
      tx,
      {
        id: newId('sequence'),
        account_id: accountId,
        name: input.name.trim(),
        description: input.description ?? null,
        definition,
      },
      s.now(),
    );
  });
}

export async function getSequence(db: Sql, accountId: string, id: string): Promise<SequenceRow> {
  const row = await findSequence(db, accountId, id);
  if (!row) throw notFound('sequence');
  return row;
}

async function lockedSequence(tx: Tx, accountId: string, id: string): Promise<SequenceRow> {
  const row = await findSequence(tx, accountId, id, { forUpdate: true });
  if (!row) throw notFound('sequence');
  return row;
}

export async function patchSequence(
  s: SequenceServices,
  accountId: string,
  id: string,
  patch: Partial<SequenceInput>,
): Promise<SequenceRow> {
  return s.db.transaction(async (tx) => {
    const before = await lockedSequence(tx, accountId, id);
    if (before.status === 'archived') throw conflict('An archived sequence cannot be changed.');
    const name = patch.name ?? before.name;
    const definition = definitionOf(
      { ...patch, name, steps: patch.steps ?? before.definition.steps },
      before.definition,
    );
    const issues = await sequenceProblems(s, name, definition);
    if (issues.length > 0) throw invalidFields(issues);
    const published = before.status !== 'draft';
    const row = await updateSequence(
      tx,
      id,
      {
        name: name.trim(),
        description: patch.description === undefined ? before.description : patch.description,
        status: before.status,
        version: published ? before.version + 1 : before.version,
        definition,
      },
      s.now(),
    );
    if (published) await saveVersion(tx, row, s.now());
    await refreshInterest(tx, accountId);
    return row;
  });
}

const MOVES: Record<
  'publish' | 'pause' | 'resume' | 'archive',
  { from: SequenceStatus[]; to: SequenceStatus }
> = {
  publish: { from: ['draft'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  archive: { from: ['draft', 'active', 'paused'], to: 'archived' },
};

const DONE = { publish: 'published', pause: 'paused', resume: 'resumed', archive: 'archived' } as const;

export async function moveSequence(
  s: SequenceServices,
  accountId: string,
  id: string,
  move: keyof typeof MOVES,
): Promise<SequenceRow> {
  return s.db.transaction(async (tx) => {
    const before = await lockedSequence(tx, accountId, id);
    const { from, to } = MOVES[move];
    if (!from.includes(before.status)) {
      throw conflict(`A ${before.status} sequence cannot be ${DONE[move]}.`);
    }
    const row = await updateSequence(tx, id, { ...before, status: to }, s.now());
    if (move === 'publish') await saveVersion(tx, row, s.now());
    if (move === 'archive') {
      const { rows } = await tx.query<EnrollmentRow>(
        `SELECT * FROM sequence_enrollments WHERE sequence_id = $1 AND status = 'active' ORDER BY id FOR UPDATE`,
        [id],
      );
      for (const enrollment of rows) {
        await endEnrollment(tx, s, enrollment, { status: 'exited', exitReason: 'archived' });
      }
    }
    await refreshInterest(tx, accountId);
    return row;
  });
}

export async function removeSequence(s: SequenceServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    const before = await lockedSequence(tx, accountId, id);
    if (before.status !== 'draft' && before.status !== 'archived') {
      throw conflict(`A ${before.status} sequence cannot be deleted: archive it first.`);
    }
    await deleteSequence(tx, id);
    await refreshInterest(tx, accountId);
  });
}
