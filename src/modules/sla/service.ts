// SLA policies (docs/conversations.md § SLA policies): an account's targets for its conversations
// (due.ts says which applies and when it falls due). Admins make and change them; the conversations
// they apply to get their due times in the transaction of the change that decides it (the hook
// `conversations.sla`: opened, reopened, labels or team changed). A policy changed or added applies
// from the next such change of each conversation (a change never rewrites every open conversation
// of an account on the request path); a deleted policy's conversations keep no due times. At most
// MAX_POLICIES per account.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, invalidRequest, notFound } from '../../kernel/http/errors.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { newId } from '../../kernel/values/ids.ts';
import { findHours } from '../business-hours/index.ts';
import { normalizeTags } from '../contacts/index.ts';
import { type ConversationRow, dropSlaOfPolicy, setSlaDue } from '../conversations/index.ts';
import { existingTeams } from '../teams/index.ts';
import { dueAt, nextDueAt, policyFor } from './due.ts';
import {
  countPolicies,
  deletePolicy,
  findPolicy,
  findPolicyByName,
  listPolicies,
  type SlaPolicyRow,
  type SlaPolicyValues,
  writePolicy,
} from './repo.ts';

export const MAX_POLICIES = 50;

export interface SlaServices {
  db: Database;
  now: () => Date;
}

export interface SlaPolicyInput {
  name?: string;
  firstResponseMinutes?: number | null;
  resolutionMinutes?: number | null;
  businessHours?: boolean;
  labels?: string[];
  teamIds?: string[];
  position?: number;
}

const nameTaken = (id: string) =>
  conflict('The account has an SLA policy of this name.', [
    { field: 'name', issue: 'is taken', policyId: id },
  ]);

async function save(s: SlaServices, tx: Tx, accountId: string, id: string, v: SlaPolicyValues) {
  const issues: FieldIssue[] = [];
  const name = v.name.trim();
  if (!name) issues.push({ field: 'name', issue: 'must not be blank' });
  if (v.first_response_minutes === null && v.resolution_minutes === null)
    issues.push({ field: 'firstResponseMinutes', issue: 'give a first response or a resolution target' });
  const labels = normalizeTags(v.labels, 'labels', issues);
  const teams = await existingTeams(tx, accountId, v.team_ids);
  v.team_ids.forEach((t, i) => {
    if (!teams.has(t)) issues.push({ field: `teamIds[${i}]`, issue: 'is not a team of this account' });
  });
  if (issues.length > 0) throw invalidRequest(issues);
  const other = await findPolicyByName(tx, accountId, name);
  if (other && other.id !== id) throw nameTaken(other.id);
  return writePolicy(tx, accountId, id, { ...v, name, labels }, s.now());
}

export function createPolicy(s: SlaServices, accountId: string, input: SlaPolicyInput & { name: string }) {
  return s.db.transaction(async (tx) => {
    // The account's row, locked: two creations at once count each other against the limit.
    await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    if ((await countPolicies(tx, accountId)) >= MAX_POLICIES)
      throw conflict(`The account has ${MAX_POLICIES} SLA policies, the most it may have.`);
    return save(s, tx, accountId, newId('slaPolicy'), {
      name: input.name,
      first_response_minutes: input.firstResponseMinutes ?? null,
      resolution_minutes: input.resolutionMinutes ?? null,
      business_hours: input.businessHours ?? false,
      labels: input.labels ?? [],
      team_ids: input.teamIds ?? [],
      position: input.position ?? 0,
    });
  });
}

export function patchPolicy(s: SlaServices, accountId: string, id: string, input: SlaPolicyInput) {
  return s.db.transaction(async (tx) => {
    const row = await findPolicy(tx, accountId, id, { lock: true });
    if (!row) throw notFound('SLA policy');
    const pick = <K extends keyof SlaPolicyInput, V>(key: K, current: V) =>
      (input[key] === undefined ? current : input[key]) as V;
    return save(s, tx, accountId, id, {
      name: pick('name', row.name),
      first_response_minutes: pick('firstResponseMinutes', row.first_response_minutes),
      resolution_minutes: pick('resolutionMinutes', row.resolution_minutes),
      business_hours: pick('businessHours', row.business_hours),
      labels: pick('labels', row.labels),
      team_ids: pick('teamIds', row.team_ids),
      position: pick('position', row.position),
    });
  });
}

export async function getPolicy(s: Pick<SlaServices, 'db'>, accountId: string, id: string) {
  const row = await findPolicy(s.db, accountId, id);
  if (!row) throw notFound('SLA policy');
  return row;
}

export function removePolicy(s: SlaServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    if (!(await findPolicy(tx, accountId, id, { lock: true }))) throw notFound('SLA policy');
    await dropSlaOfPolicy(tx, accountId, id);
    await deletePolicy(tx, accountId, id);
  });
}

/**
 * The conversation's policy and due times, written on it (the hook `conversations.sla`, in the
 * transaction of the change; the row is locked). An account without policies costs one indexed read.
 */
export async function applySla(tx: Tx, accountId: string, c: ConversationRow): Promise<void> {
  const policy = policyFor(await listPolicies(tx, accountId), c);
  if (!policy && c.sla_policy_id === null && c.sla_next_due_at === null) return;
  const startedAt = c.sla_started_at ?? c.opened_at;
  const hours = policy?.business_hours ? await findHours(tx, accountId) : null;
  const due = {
    sla_first_response_due_at: policy ? dueAt(policy.first_response_minutes, startedAt, hours) : null,
    sla_resolution_due_at: policy ? dueAt(policy.resolution_minutes, startedAt, hours) : null,
  };
  await setSlaDue(tx, c, {
    policyId: policy?.id ?? null,
    firstResponseDueAt: due.sla_first_response_due_at,
    resolutionDueAt: due.sla_resolution_due_at,
    nextDueAt: nextDueAt({ ...c, ...due }),
  });
}

/** Conversations get their due times as they change (wired in app.ts). */
export function subscribeSla(hooks: Hooks): void {
  hooks.on('conversations.sla', (tx, { accountId, conversation }) => applySla(tx, accountId, conversation));
}

export type { SlaPolicyRow };
