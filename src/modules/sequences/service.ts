// Sequences: saved checked (every fault at once, with its field), and moved through their life:
//   draft ──publish──▶ active ◀──resume── paused      (pause: active → paused)
//   any but archived ──archive──▶ archived            (active enrollments exit, reason archived)
// A draft is edited in place (its version stays 1). Once published, each edit makes the next
// version, kept in sequence_versions; enrollments run on the version they started on. An archived
// sequence is read-only. Only a draft or an archived sequence may be deleted (with its enrollments).
import type { Database, Sql } from '../../kernel/database/db.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
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
  type Definition,
  type EnrollmentRow,
  type Move,
  type Reenroll,
  SEQUENCES,
  type SequenceRow,
} from './repo.ts';

export { MAX_SEQUENCES_PER_ACCOUNT } from './repo.ts';

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

export async function createSequence(
  s: SequenceServices,
  accountId: string,
  input: SequenceInput,
): Promise<SequenceRow> {
  const definition = definitionOf(input);
  const issues = await sequenceProblems(s, input.name, definition);
  if (issues.length > 0) throw invalidFields(issues);
  return s.db.transaction(async (tx) => {
    await SEQUENCES.reserve(tx, accountId);
    return SEQUENCES.insert(
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

export function getSequence(db: Sql, accountId: string, id: string): Promise<SequenceRow> {
  return SEQUENCES.get(db, accountId, id);
}

export async function patchSequence(
  s: SequenceServices,
  accountId: string,
  id: string,
  patch: Partial<SequenceInput>,
): Promise<SequenceRow> {
  return s.db.transaction(async (tx) => {
    const before = await SEQUENCES.locked(tx, accountId, id);
    SEQUENCES.refuseArchived(before);
    const name = patch.name ?? before.name;
    const definition = definitionOf(
      { ...patch, name, steps: patch.steps ?? before.definition.steps },
      before.definition,
    );
    const issues = await sequenceProblems(s, name, definition);
    if (issues.length > 0) throw invalidFields(issues);
    const row = await SEQUENCES.edit(
      tx,
      before,
      {
        name: name.trim(),
        description: patch.description === undefined ? before.description : patch.description,
        definition,
      },
      () => s.now(),
    );
    await refreshInterest(tx, accountId);
    return row;
  });
}

export async function moveSequence(
  s: SequenceServices,
  accountId: string,
  id: string,
  move: Move,
): Promise<SequenceRow> {
  return s.db.transaction(async (tx) => {
    const before = await SEQUENCES.locked(tx, accountId, id);
    const to = SEQUENCES.moveTo(before, move);
    const row = await SEQUENCES.update(tx, id, { ...before, status: to }, s.now());
    if (move === 'publish') await SEQUENCES.keepVersion(tx, row, s.now());
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
    const before = await SEQUENCES.locked(tx, accountId, id);
    await SEQUENCES.remove(tx, before);
    await refreshInterest(tx, accountId);
  });
}
