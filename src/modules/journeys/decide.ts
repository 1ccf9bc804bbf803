// The pure decisions of the runner (runner.ts): which edge a condition, a switch or a split takes,
// when a wait ends, whether a message is the reply a wait_for_reply waits for, and the run limits.
// No database here: every function answers from what it is given.
import { createHash } from 'node:crypto';
import {
  type Condition,
  type Conditions,
  conditionContext,
  durationMs,
  evaluate,
  fieldValue,
  type KeywordMatch,
  matchesKeyword,
  type RunScope,
  signedDurationMs,
} from '../automation/index.ts';
import type { JourneyNode } from './graph.ts';
import { untilSource } from './nodes.ts';

/** Steps a run may take in all, and the times in a row it may enter one node. */
export const STEP_LIMIT = 500;
export const NODE_REPEAT_LIMIT = 10;

/** A run's scope: the automation scope, with its trigger's data and its variables. */
export type JourneyScope = RunScope & { trigger: { data: Record<string, unknown> } };

export type Outcome = { edge: string; output?: Record<string, unknown> };

export function conditionEdge(node: JourneyNode, scope: JourneyScope): Outcome {
  const { matched } = evaluate(node.config.conditions as Conditions, conditionContext(scope));
  return { edge: matched ? 'yes' : 'no' };
}

export function switchEdge(node: JourneyNode, scope: JourneyScope): Outcome {
  const field = node.config.field as string;
  const cases = node.config.cases as { key: string; op?: Condition['op']; value?: unknown }[];
  const context = conditionContext(scope);
  for (const c of cases) {
    const { matched } = evaluate({ all: [{ field, op: c.op ?? 'eq', value: c.value }] }, context);
    if (matched) return { edge: `case:${c.key}`, output: { value: fieldValue(scope, field) ?? null } };
  }
  return { edge: 'default', output: { value: fieldValue(scope, field) ?? null } };
}

/** The branch of a split: the run and node hashed onto the weights, so the same every time. */
export function splitEdge(node: JourneyNode, runId: string): Outcome {
  const weights = Object.entries(node.config.weights as Record<string, number>);
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  const hash = createHash('sha256').update(`${runId}:${node.id}`).digest();
  let point = hash.readUInt32BE(0) % total;
  for (const [key, weight] of weights) {
    if (point < weight) return { edge: `split:${key}` };
    point -= weight;
  }
  return { edge: `split:${weights.at(-1)![0]}` };
}

/** When a wait node's wait ends, or why it cannot be known. */
export function waitEnd(node: JourneyNode, scope: JourneyScope, now: Date): Date | { error: string } {
  const c = node.config as { duration?: string; until?: string; offset?: string };
  if (c.duration) return new Date(now.getTime() + durationMs(c.duration));
  const until = c.until!;
  const raw = untilSource(until) ? fieldValue(scope, until) : until;
  const at = typeof raw === 'string' ? Date.parse(raw) : typeof raw === 'number' ? raw : Number.NaN;
  if (Number.isNaN(at)) {
    return { error: `${until} holds no date-time (${raw === undefined ? 'nothing' : JSON.stringify(raw)}).` };
  }
  return new Date(at + (c.offset ? (signedDurationMs(c.offset) ?? 0) : 0));
}

export interface Reply {
  messageId: string;
  text: string | null;
  buttonId: string | null;
}

/** Whether an inbound message is the reply a wait_for_reply node waits for. */
export function replyMatches(node: JourneyNode, reply: Reply): boolean {
  const match = node.config.match as { buttons?: string[]; keywords?: KeywordMatch } | undefined;
  if (!match || (!match.buttons && !match.keywords)) return true;
  if (match.buttons && reply.buttonId !== null && match.buttons.includes(reply.buttonId)) return true;
  return match.keywords !== undefined && reply.text !== null && matchesKeyword(reply.text, match.keywords);
}

/** Why entering `nodeId` now breaks a run limit, or null. */
export function limitBroken(
  run: { step_count: number; last_node_id: string | null; repeat_count: number },
  nodeId: string,
): { code: string; message: string } | null {
  if (run.step_count >= STEP_LIMIT) {
    return { code: 'STEP_LIMIT', message: `The run took ${STEP_LIMIT} steps, the most a run may take.` };
  }
  if (run.last_node_id === nodeId && run.repeat_count >= NODE_REPEAT_LIMIT) {
    return {
      code: 'NODE_REPEAT_LIMIT',
      message: `The run entered ${nodeId} ${NODE_REPEAT_LIMIT} times in a row, the most it may.`,
    };
  }
  return null;
}
