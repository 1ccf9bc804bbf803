// A voice script as it is stored and played, and the checks publishing runs on it (pure):
//   - tts: the text (Liquid, rendered per call) said `loop` times;
//   - ivr: nodes by id, from `start`; a node says or plays something, may gather digits whose
//     options lead to another node (`next`) or to an action, and may end in an action;
//   - actions: hangup, tag the contact, call a webhook (both may go on to a `next` node), transfer.
// Publishing checks that the start exists, every node is reachable from it, every option, noInput
// and invalid leads to a node that exists or to an action, option keys are digits of the gather's
// length, and every node does something; each fault is one `details` entry at its node.
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { isTemplated, templateProblem } from '../automation/index.ts';
import { normalizeTag } from '../contacts/index.ts';
import { sayLimitBytes } from './say-limits.ts';

export type Action =
  | { type: 'hangup' }
  | { type: 'tag'; tag: string; next?: string }
  | { type: 'webhook'; url: string; next?: string }
  | { type: 'transfer'; to: string };

/** Where a key press (or its absence) leads: another node, or an action. */
export type Route = { next: string } | { action: Action };

export interface Gather {
  numDigits: number;
  timeoutSeconds: number;
  /** Times the prompt is said again after no input or an invalid one, before noInput / invalid. */
  retries: number;
  options: Record<string, Route>;
  noInput?: Route;
  invalid?: Route;
}

export interface IvrNode {
  say?: string;
  /** An audio URL played. */
  play?: string;
  gather?: Gather;
  action?: Action;
}

export interface Definition {
  type: 'tts' | 'ivr';
  language: string;
  voice: string | null;
  tts: { text: string; loop: number } | null;
  ivr: { start: string; nodes: Record<string, IvrNode> } | null;
  onMachine: 'hangup' | 'leave_message' | 'continue';
}

const KEYS = /^[0-9*#]+$/;

/** The nodes an action or a route leads to. */
function targetsOf(route: Route | Action | undefined): string[] {
  if (!route) return [];
  if ('next' in route && typeof route.next === 'string') return [route.next];
  if ('action' in route) return targetsOf(route.action);
  return [];
}

/** A node's actions, with their fields: its own, its options', noInput's and invalid's. */
function nodeActions(id: string, node: IvrNode): [string, Action][] {
  const at = `ivr.nodes.${id}`;
  const found: [string, Action][] = [];
  if (node.action) found.push([`${at}.action`, node.action]);
  for (const [key, route] of Object.entries(node.gather?.options ?? {})) {
    if ('action' in route) found.push([`${at}.gather.options.${key}.action`, route.action]);
  }
  for (const which of ['noInput', 'invalid'] as const) {
    const route = node.gather?.[which];
    if (route && 'action' in route) found.push([`${at}.gather.${which}.action`, route.action]);
  }
  return found;
}

/** Every action of an ivr script, with its field, node by node. */
export function actionsOf(d: Definition): [string, Action][] {
  return Object.entries(d.ivr?.nodes ?? {}).flatMap(([id, node]) => nodeActions(id, node));
}

/** Why a text cannot be said: Liquid that does not parse, or a plain text longer than its voice speaks. */
function sayProblem(text: string, voice: string | null): string | null {
  if (isTemplated(text)) return templateProblem(text);
  const bytes = Buffer.byteLength(text, 'utf8');
  const limit = sayLimitBytes(voice);
  return bytes > limit
    ? `is ${bytes} bytes of UTF-8: Twilio's <Say> speaks at most ${limit} with ${voice ? `voice ${voice}` : 'the default voice'}`
    : null;
}

/** Every fault of the script that saving it can find (its texts, tags, the shape of its options). */
export function definitionProblems(d: Definition): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (d.type === 'tts') {
    if (!d.tts) issues.push({ field: 'tts', issue: 'is required for a tts script' });
    else {
      const problem = sayProblem(d.tts.text, d.voice);
      if (problem) issues.push({ field: 'tts.text', issue: problem });
    }
    if (d.ivr) issues.push({ field: 'ivr', issue: 'is for ivr scripts only' });
    return issues;
  }
  if (!d.ivr) return [{ field: 'ivr', issue: 'is required for an ivr script' }];
  if (d.tts) issues.push({ field: 'tts', issue: 'is for tts scripts only' });
  for (const [id, node] of Object.entries(d.ivr.nodes)) {
    const at = `ivr.nodes.${id}`;
    if (node.say !== undefined) {
      const problem = sayProblem(node.say, d.voice);
      if (problem) issues.push({ field: `${at}.say`, issue: problem });
    }
    const gather = node.gather;
    for (const key of Object.keys(gather?.options ?? {})) {
      if (!KEYS.test(key) || key.length !== gather!.numDigits) {
        issues.push({
          field: `${at}.gather.options.${key}`,
          issue: `must be ${gather!.numDigits} of the keys 0-9, * and # (numDigits)`,
        });
      }
    }
    for (const [field, action] of nodeActions(id, node)) {
      if (action.type === 'tag' && normalizeTag(action.tag) === null) {
        issues.push({
          field: `${field}.tag`,
          issue: 'must be 1–50 letters, digits, spaces or - _ : . and start with a letter or digit',
        });
      }
    }
  }
  return issues;
}

/** The graph's faults, checked when the script is published: one entry per faulty node. */
export function graphProblems(d: Definition): FieldIssue[] {
  if (d.type !== 'ivr' || !d.ivr) return [];
  const { start, nodes } = d.ivr;
  const issues: FieldIssue[] = [];
  if (!Object.hasOwn(nodes, start))
    issues.push({ field: 'ivr.start', issue: `names no node (${JSON.stringify(start)})` });
  const reached = new Set<string>();
  const stack = Object.hasOwn(nodes, start) ? [start] : [];
  while (stack.length) {
    const id = stack.pop()!;
    if (reached.has(id)) continue;
    reached.add(id);
    const node = nodes[id]!;
    const routes = [
      ...Object.values(node.gather?.options ?? {}),
      node.gather?.noInput,
      node.gather?.invalid,
      node.action,
    ];
    for (const route of routes)
      for (const to of targetsOf(route)) if (Object.hasOwn(nodes, to)) stack.push(to);
  }
  for (const [id, node] of Object.entries(nodes)) {
    const at = `ivr.nodes.${id}`;
    if (!node.say && !node.play && !node.gather && !node.action) {
      issues.push({ field: at, issue: `${id} neither says, plays, gathers nor acts` });
    }
    if (Object.hasOwn(nodes, start) && !reached.has(id)) {
      issues.push({ field: at, issue: `${id} cannot be reached from the start (${start})` });
    }
    const routes: [string, Route | Action | undefined][] = [
      ...Object.entries(node.gather?.options ?? {}).map(
        ([k, r]) => [`gather.options.${k}`, r] as [string, Route],
      ),
      ['gather.noInput', node.gather?.noInput],
      ['gather.invalid', node.gather?.invalid],
      ['action', node.action],
    ];
    for (const [where, route] of routes) {
      for (const to of targetsOf(route)) {
        if (!Object.hasOwn(nodes, to)) {
          issues.push({ field: `${at}.${where}`, issue: `leads to ${JSON.stringify(to)}, which is no node` });
        }
      }
    }
    if (node.gather && Object.keys(node.gather.options).length === 0) {
      issues.push({ field: `${at}.gather.options`, issue: 'must hold at least one option' });
    }
  }
  return issues;
}
