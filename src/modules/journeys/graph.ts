// A journey's graph, and the checks publishing runs on it (docs/automation.md § Journeys), pure:
//   - the start node exists, and every node is reachable from it;
//   - every edge joins two nodes, with an edge kind its source has (EDGE_KINDS), one edge per kind;
//   - a wait_for_reply node has a `timeout` edge (a run must not wait for ever);
//   - no cycle without a wait (a run that loops must take time, so the run limits can stop it);
//   - at most MAX_NODES nodes.
// Each fault is one `details` entry, located at the node or edge it is about. A node left by a
// kind that has no edge ends the run there (completed, or failed after a failure): that is allowed.
import type { FieldIssue } from '../../kernel/http/errors.ts';
import type { Conditions, SendWindow } from '../automation/index.ts';

export const NODE_TYPES = [
  'send_message',
  'wait',
  'wait_for_reply',
  'condition',
  'switch',
  'split',
  'update_contact',
  'webhook',
  'assign',
  'end',
  'place_call',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const MAX_NODES = 200;

/** How long past its time a wait `until` is late (the sequences' past_due rule: an hour). */
export const LATE_MS = 3600_000;

export interface JourneyNode {
  id: string;
  type: NodeType;
  config: Record<string, unknown>;
}

export interface Edge {
  from: string;
  to: string;
  when: string;
}

export type Reentry = 'never' | 'after_exit' | 'always';

export interface Entry {
  trigger: 'api' | 'event';
  event?: string;
  /** A timed entry event's wait (contact.inactive, conversation.unanswered): journeys/timed.ts. */
  after?: string;
  conditions?: Conditions;
  reentry: Reentry;
  start: string;
}

export interface Settings {
  sendWindow?: SendWindow | null;
  maxRunDuration: string;
}

/** A journey as it runs: what a version holds. */
export interface Definition {
  entry: Entry;
  nodes: JourneyNode[];
  edges: Edge[];
  settings: Settings;
}

/** The edge kinds a node may be left by (`case:<key>` and `split:<key>` from its config). */
export function edgeKinds(node: JourneyNode): string[] {
  switch (node.type) {
    case 'send_message':
    case 'webhook':
      return ['next', 'failed'];
    case 'wait':
      // A wait until a time that had passed by more than LATE_MS when the run got there may leave by
      // `late` (a reminder whose moment is gone), when it has that edge.
      return node.config.until === undefined ? ['next'] : ['next', 'late'];
    case 'update_contact':
    case 'assign':
      return ['next'];
    case 'wait_for_reply':
      return ['reply', 'timeout'];
    case 'condition':
      return ['yes', 'no'];
    case 'switch': {
      const cases = (node.config.cases as { key: string }[] | undefined) ?? [];
      return [...cases.map((c) => `case:${c.key}`), 'default'];
    }
    case 'split':
      return Object.keys((node.config.weights as Record<string, number> | undefined) ?? {}).map(
        (k) => `split:${k}`,
      );
    case 'place_call':
      return ['answered', 'no_answer', 'failed'];
    case 'end':
      return [];
  }
}

/** Nodes whose run waits for time to pass (a cycle must hold one). */
export const WAITING_TYPES: ReadonlySet<NodeType> = new Set(['wait', 'wait_for_reply']);

/** Every fault of the graph, one entry per faulty node or edge. */
export function graphProblems(d: Definition): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (d.nodes.length > MAX_NODES) issues.push({ field: 'nodes', issue: `holds at most ${MAX_NODES} nodes` });
  const index = new Map<string, number>();
  d.nodes.forEach((node, i) => {
    if (index.has(node.id)) issues.push({ field: `nodes[${i}].id`, issue: `repeats node id ${node.id}` });
    else index.set(node.id, i);
  });
  const byId = new Map(d.nodes.map((n) => [n.id, n]));
  if (!byId.has(d.entry.start)) {
    issues.push({ field: 'entry.start', issue: `names no node (${JSON.stringify(d.entry.start)})` });
  }
  const out = new Map<string, Edge[]>();
  const seenKinds = new Set<string>();
  d.edges.forEach((edge, i) => {
    const from = byId.get(edge.from);
    if (!from)
      issues.push({ field: `edges[${i}].from`, issue: `names no node (${JSON.stringify(edge.from)})` });
    if (!byId.has(edge.to))
      issues.push({ field: `edges[${i}].to`, issue: `names no node (${JSON.stringify(edge.to)})` });
    if (!from) return;
    const kinds = edgeKinds(from);
    if (!kinds.includes(edge.when)) {
      issues.push({
        field: `edges[${i}].when`,
        issue: kinds.length
          ? `${JSON.stringify(edge.when)} is not an edge of a ${from.type} node: it has ${kinds.join(', ')}`
          : `a ${from.type} node has no edges out`,
      });
      return;
    }
    const key = `${edge.from}\u0000${edge.when}`;
    if (seenKinds.has(key)) {
      issues.push({ field: `edges[${i}]`, issue: `repeats the ${edge.when} edge of ${edge.from}` });
      return;
    }
    seenKinds.add(key);
    if (byId.has(edge.to)) out.set(edge.from, [...(out.get(edge.from) ?? []), edge]);
  });
  // Reachability from the start.
  const reached = new Set<string>();
  if (byId.has(d.entry.start)) {
    const stack = [d.entry.start];
    while (stack.length) {
      const id = stack.pop()!;
      if (reached.has(id)) continue;
      reached.add(id);
      for (const e of out.get(id) ?? []) stack.push(e.to);
    }
  }
  d.nodes.forEach((node, i) => {
    if (index.get(node.id) !== i) return;
    if (byId.has(d.entry.start) && !reached.has(node.id)) {
      issues.push({
        field: `nodes[${i}]`,
        issue: `${node.id} cannot be reached from the start (${d.entry.start})`,
      });
    }
    if (node.type === 'wait_for_reply' && !(out.get(node.id) ?? []).some((e) => e.when === 'timeout')) {
      issues.push({ field: `nodes[${i}]`, issue: `${node.id} (wait_for_reply) needs a timeout edge` });
    }
  });
  for (const cycle of cyclesWithoutWait(d.nodes, out)) {
    issues.push({
      field: `nodes[${index.get(cycle[0]!)}]`,
      issue: `${cycle.join(' → ')} → ${cycle[0]} is a cycle without a wait or wait_for_reply node`,
    });
  }
  return issues;
}

/**
 * The cycles made only of nodes that do not wait: the strongly connected parts of the graph without
 * its waiting nodes (Tarjan), each given as one of its cycles' nodes in order.
 */
function cyclesWithoutWait(nodes: JourneyNode[], out: Map<string, Edge[]>): string[][] {
  const instant = new Set(nodes.filter((n) => !WAITING_TYPES.has(n.type)).map((n) => n.id));
  const next = (id: string) => (out.get(id) ?? []).map((e) => e.to).filter((to) => instant.has(to));
  let counter = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (id: string) => {
    order.set(id, counter);
    low.set(id, counter++);
    stack.push(id);
    onStack.add(id);
    for (const to of next(id)) {
      if (!order.has(to)) {
        visit(to);
        low.set(id, Math.min(low.get(id)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(id, Math.min(low.get(id)!, order.get(to)!));
    }
    if (low.get(id) !== order.get(id)) return;
    const part: string[] = [];
    let top: string;
    do {
      top = stack.pop()!;
      onStack.delete(top);
      part.push(top);
    } while (top !== id);
    if (part.length > 1 || next(id).includes(id)) found.push(cycleIn(new Set(part), id, next));
  };
  for (const id of instant) if (!order.has(id)) visit(id);
  return found;
}

/** A cycle through `start` inside one strongly connected part, as the nodes it passes. */
function cycleIn(part: Set<string>, start: string, next: (id: string) => string[]): string[] {
  const path = [start];
  const seen = new Set([start]);
  let at = start;
  for (;;) {
    const to = next(at).find((n) => part.has(n))!;
    if (to === start || seen.has(to)) return to === start ? path : path.slice(path.indexOf(to));
    path.push(to);
    seen.add(to);
    at = to;
  }
}
