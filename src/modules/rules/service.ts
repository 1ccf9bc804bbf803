// Rules: saved checked (every fault at once, with its field), kept in evaluation order. A rule's
// position is its place among all the account's rules (1 first); creating at a position, moving
// and deleting shift the others so that positions stay 1 … n. Evaluation (engine.ts) takes the
// active rules of an event's type in that order.

import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Sql } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, notFound } from '../../kernel/http/errors.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import { newId } from '../../kernel/values/ids.ts';
import {
  type Action,
  type ActionTargets,
  actionProblems,
  type Conditions,
  durationProblem,
  refreshInterest,
  TIMED_TRIGGERS,
  type TriggerEvent,
  triggerConditionProblems,
} from '../automation/index.ts';
import { invalidFields } from '../contacts/index.ts';
import { findMember } from '../team/index.ts';
import { teamRef } from '../teams/index.ts';
import { callableScriptProblem } from '../voice-scripts/index.ts';
import { generateSecret } from '../webhooks/index.ts';
import {
  countRules,
  deleteRule,
  findRule,
  insertRule,
  lockRules,
  type RuleRow,
  type RuleValues,
  shiftPositions,
  updateRule,
} from './repo.ts';

/** Rules one account may have. */
export const MAX_RULES_PER_ACCOUNT = 200;

export interface RuleServices {
  db: Database;
  /** Whether the sequences and journeys a rule's actions name exist (given in app.ts). */
  actionTargets: ActionTargets;
  egress: Egress;
  secrets: SecretBox;
  now: () => Date;
}

/** A rule as saved, with its signing secret when this write made it (shown once). */
export interface SavedRule {
  row: RuleRow;
  signingSecret?: string;
}

export interface RuleInput {
  name: string;
  description?: string | null;
  status?: 'active' | 'paused';
  position?: number;
  trigger: { event: TriggerEvent; after?: string };
  conditions?: Conditions;
  actions: Action[];
  stopProcessing?: boolean;
}

const isTimed = (event: string) => (TIMED_TRIGGERS as readonly string[]).includes(event);

/** Every fault of a rule as it would be saved. */
async function ruleProblems(
  s: RuleServices,
  sql: Sql,
  accountId: string,
  rule: RuleValues,
): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  if (!rule.name.trim()) issues.push({ field: 'name', issue: 'must not be blank' });
  if (isTimed(rule.trigger_event)) {
    const problem =
      rule.trigger_after === null ? 'is required for a timed trigger' : durationProblem(rule.trigger_after);
    if (problem) issues.push({ field: 'trigger.after', issue: problem });
  } else if (rule.trigger_after !== null) {
    issues.push({
      field: 'trigger.after',
      issue: `applies to timed triggers only (${TIMED_TRIGGERS.join(', ')})`,
    });
  }
  issues.push(...triggerConditionProblems(rule.conditions, rule.trigger_event, 'conditions'));
  issues.push(
    ...(await actionProblems(rule.actions, 'actions', {
      egress: s.egress,
      memberExists: async (id) => (await findMember(sql, accountId, id)) !== null,
      teamExists: async (id) => (await teamRef(sql, accountId, id)) !== null,
      sequenceExists: (id) => s.actionTargets.sequenceExists(sql, accountId, id),
      journeyExists: (id) => s.actionTargets.journeyExists(sql, accountId, id),
      callsWebhooks: true,
      scriptProblem: (id) => callableScriptProblem(sql, accountId, id),
    })),
  );
  return issues;
}

function valuesOf(input: RuleInput, before?: RuleRow): RuleValues {
  return {
    name: input.name.trim(),
    description: input.description === undefined ? (before?.description ?? null) : input.description,
    status: input.status ?? before?.status ?? 'active',
    trigger_event: input.trigger.event,
    trigger_after: input.trigger.after ?? null,
    conditions: input.conditions ?? before?.conditions ?? {},
    actions: input.actions,
    stop_processing: input.stopProcessing ?? before?.stop_processing ?? false,
  };
}

/**
 * Gives the rule its signing secret (call_webhook signs with it) if it has none: every new rule,
 * and a rule made before rules had secrets, on its next change. Answers the secret when it made one.
 */
async function ensureSecret(s: RuleServices, tx: Sql, row: RuleRow): Promise<SavedRule> {
  if (row.signing_secret_sealed) return { row };
  const signingSecret = generateSecret();
  const { rows } = await tx.query<RuleRow>(
    'UPDATE rules SET signing_secret_sealed = $2 WHERE id = $1 RETURNING *',
    [row.id, s.secrets.seal(signingSecret)],
  );
  return { row: rows[0]!, signingSecret };
}

export async function createRule(s: RuleServices, accountId: string, input: RuleInput): Promise<SavedRule> {
  const values = valuesOf(input);
  const issues = await ruleProblems(s, s.db, accountId, values);
  if (issues.length > 0) throw invalidFields(issues);
  return s.db.transaction(async (tx) => {
    await lockRules(tx, accountId);
    const count = await countRules(tx, accountId);
    if (count >= MAX_RULES_PER_ACCOUNT) {
      throw conflict(`At most ${MAX_RULES_PER_ACCOUNT} rules are allowed; delete one first.`);
    }
    // Past the end means last.
    const position = Math.min(input.position ?? count + 1, count + 1);
    await shiftPositions(tx, accountId, { from: position }, 1);
    const row = await insertRule(
      tx,
      { ...values, id: newId('rule'), account_id: accountId, position },
      s.now(),
    );
    await refreshInterest(tx, accountId);
    return ensureSecret(s, tx, row);
  });
}

export async function getRule(db: Sql, accountId: string, id: string): Promise<RuleRow> {
  const row = await findRule(db, accountId, id);
  if (!row) throw notFound('rule');
  return row;
}

export type RulePatch = Partial<RuleInput>;

export async function patchRule(
  s: RuleServices,
  accountId: string,
  id: string,
  patch: RulePatch,
): Promise<SavedRule> {
  return s.db.transaction(async (tx) => {
    await lockRules(tx, accountId);
    const before = await findRule(tx, accountId, id, { forUpdate: true });
    if (!before) throw notFound('rule');
    // A new trigger comes whole (its `after` belongs to it); without one the rule keeps its own.
    const trigger = patch.trigger ?? {
      event: before.trigger_event,
      ...(before.trigger_after ? { after: before.trigger_after } : {}),
    };
    const values = valuesOf(
      { ...patch, name: patch.name ?? before.name, trigger, actions: patch.actions ?? before.actions },
      before,
    );
    const issues = await ruleProblems(s, tx, accountId, values);
    if (issues.length > 0) throw invalidFields(issues);
    let position = before.position;
    if (patch.position !== undefined && patch.position !== before.position) {
      position = Math.min(patch.position, await countRules(tx, accountId));
      // Moving up shifts those in between down, and the other way round.
      if (position < before.position) {
        await shiftPositions(tx, accountId, { from: position, to: before.position - 1 }, 1);
      } else if (position > before.position) {
        await shiftPositions(tx, accountId, { from: before.position + 1, to: position }, -1);
      }
    }
    const row = await updateRule(tx, accountId, id, { ...values, position }, s.now());
    await refreshInterest(tx, accountId);
    return ensureSecret(s, tx, row);
  });
}

export async function removeRule(s: RuleServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    await lockRules(tx, accountId);
    const before = await findRule(tx, accountId, id, { forUpdate: true });
    if (!before) throw notFound('rule');
    await deleteRule(tx, accountId, id);
    await shiftPositions(tx, accountId, { from: before.position + 1 }, -1);
    await refreshInterest(tx, accountId);
  });
}
