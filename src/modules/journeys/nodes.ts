// What the schema of a journey cannot check, checked whenever it is saved (a draft too), every
// fault at once with its field: each node's config (a message's content, Liquid templates, tags and
// attribute names, a team member of another account, a URL the egress check refuses, durations,
// conditions and a switch's cases), the entry (a timed entry event takes `after`, and only it) and
// the settings. The graph as a whole is checked when the journey is published (graph.ts).
import { Duration } from 'luxon';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import {
  type Action,
  type ActionChecks,
  actionProblems,
  type Condition,
  type Conditions,
  conditionProblems,
  contactChange,
  durationProblem,
  fieldType,
  JOURNEY_PREFIXES,
  sendWindowProblems,
  signedDurationMs,
  TIMED_TRIGGERS,
  templateProblem,
  triggerConditionProblems,
} from '../automation/index.ts';
import { ATTRIBUTE_NAME, normalizeTag } from '../contacts/index.ts';
import type { Definition, JourneyNode } from './graph.ts';

export const MAX_WAIT = Duration.fromObject({ days: 30 });
export const MAX_REPLY_TIMEOUT = Duration.fromObject({ days: 7 });
export const MAX_RUN_DURATION = Duration.fromObject({ days: 30 });

/** Where a wait's `until` may read a time. */
export const UNTIL_PREFIXES = ['contact.attributes.', 'trigger.data.', 'run.vars.'];
const PATH = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

/** Whether `until` names a place a run holds a time (else it is a literal date-time). */
export function untilSource(until: string): string | null {
  const prefix = UNTIL_PREFIXES.find((p) => until.startsWith(p));
  return prefix && PATH.test(until.slice(prefix.length)) ? prefix : null;
}

/** The problems of one action, located at `at` (actionProblems locates them in a list). */
async function oneAction(action: Action, at: string, checks: ActionChecks): Promise<FieldIssue[]> {
  const found = await actionProblems([action], '@', checks);
  return found.map((f) => ({ ...f, field: f.field.replace('@[0]', at) }));
}

const TAG_ISSUE = 'must be 1–50 letters, digits, spaces or - _ : . and start with a letter or digit';

function conditionsAt(conditions: Conditions, at: string): FieldIssue[] {
  return conditionProblems(conditions, at, JOURNEY_PREFIXES);
}

async function nodeProblems(node: JourneyNode, at: string, checks: ActionChecks): Promise<FieldIssue[]> {
  const c = node.config ?? {};
  const issues: FieldIssue[] = [];
  switch (node.type) {
    case 'send_message':
      return oneAction({ type: 'send_message', message: c.message }, `${at}.config`, checks);
    case 'wait': {
      if (typeof c.duration === 'string') {
        const problem = durationProblem(c.duration, MAX_WAIT);
        if (problem) issues.push({ field: `${at}.config.duration`, issue: problem });
      } else if (typeof c.until === 'string') {
        if (!untilSource(c.until) && Number.isNaN(Date.parse(c.until))) {
          issues.push({
            field: `${at}.config.until`,
            issue:
              'must be an ISO-8601 date-time, or contact.attributes.<key>, trigger.data.<path> or run.vars.<path>',
          });
        }
        if (typeof c.offset === 'string') {
          const ms = signedDurationMs(c.offset);
          if (ms === null || Math.abs(ms) > MAX_WAIT.toMillis()) {
            issues.push({
              field: `${at}.config.offset`,
              issue: 'must be an ISO-8601 duration of at most P30D, negative ("-P1D") for before',
            });
          }
        }
      }
      return issues;
    }
    case 'wait_for_reply': {
      const problem = durationProblem(c.timeout, MAX_REPLY_TIMEOUT);
      if (problem) issues.push({ field: `${at}.config.timeout`, issue: problem });
      const keywords = (c.match as { keywords?: unknown } | undefined)?.keywords;
      if (keywords !== undefined) {
        issues.push(
          ...conditionsAt(
            { all: [{ field: 'message.text', op: 'matches_keyword', value: keywords }] },
            'k',
          ).map((p) => ({ field: `${at}.config.match.keywords`, issue: p.issue })),
        );
      }
      return issues;
    }
    case 'condition':
      return conditionsAt(c.conditions as Conditions, `${at}.config.conditions`);
    case 'switch': {
      const field = c.field as string;
      if (!fieldType(field, JOURNEY_PREFIXES)) {
        return [
          {
            field: `${at}.config.field`,
            issue: `${JSON.stringify(field)} is not a field conditions can read`,
          },
        ];
      }
      const cases = c.cases as { key: string; op?: Condition['op']; value?: unknown }[];
      const seen = new Set<string>();
      cases.forEach((k, i) => {
        if (seen.has(k.key))
          issues.push({ field: `${at}.config.cases[${i}].key`, issue: `repeats case ${k.key}` });
        seen.add(k.key);
      });
      const asConditions = { all: cases.map((k) => ({ field, op: k.op ?? 'eq', value: k.value })) };
      for (const p of conditionsAt(asConditions, 'cases')) {
        issues.push({
          field: p.field.replace(/^cases\.all\[(\d+)\]\.(field|op|value)$/, `${at}.config.cases[$1].$2`),
          issue: p.issue,
        });
      }
      return issues;
    }
    case 'update_contact': {
      const change = contactChange(c);
      if (change) issues.push(...(await oneAction(change, `${at}.config`, checks)));
      for (const key of ['addTags', 'removeTags'] as const) {
        ((c[key] as string[] | undefined) ?? []).forEach((tag, i) => {
          if (normalizeTag(tag) === null)
            issues.push({ field: `${at}.config.${key}[${i}]`, issue: TAG_ISSUE });
        });
      }
      for (const [name, value] of Object.entries((c.setAttributes as Record<string, unknown>) ?? {})) {
        const field = `${at}.config.setAttributes.${name}`;
        if (!ATTRIBUTE_NAME.test(name)) {
          issues.push({
            field,
            issue: 'names an attribute: at most 40 letters, digits or _, not starting with a digit',
          });
        } else if (typeof value === 'string') {
          const problem = templateProblem(value);
          if (problem) issues.push({ field, issue: problem });
        }
      }
      return issues;
    }
    case 'webhook':
      return oneAction({ type: 'call_webhook', url: c.url, body: c.body }, `${at}.config`, checks);
    case 'assign':
      return oneAction({ type: 'assign', ...c }, `${at}.config`, checks);
    case 'place_call':
      return oneAction({ type: 'place_call', scriptId: c.scriptId }, `${at}.config`, checks);
    default:
      return [];
  }
}

/** Every fault of a journey as it would be saved, but its graph's. */
export async function definitionProblems(
  name: string,
  d: Definition,
  checks: Omit<ActionChecks, 'sequenceExists' | 'callsWebhooks'>,
): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  if (!name.trim()) issues.push({ field: 'name', issue: 'must not be blank' });
  const { entry } = d;
  if (entry.trigger === 'event' && !entry.event) {
    issues.push({ field: 'entry.event', issue: 'is required when entry.trigger is event' });
  }
  if (entry.trigger === 'api' && entry.event) {
    issues.push({ field: 'entry.event', issue: 'is given only when entry.trigger is event' });
  }
  const timed = (TIMED_TRIGGERS as readonly string[]).includes(entry.event ?? '');
  if (timed) {
    const problem =
      entry.after === undefined ? 'is required for a timed entry event' : durationProblem(entry.after);
    if (problem) issues.push({ field: 'entry.after', issue: problem });
  } else if (entry.after !== undefined) {
    issues.push({
      field: 'entry.after',
      issue: `applies to the timed entry events only (${TIMED_TRIGGERS.join(', ')})`,
    });
  }
  if (entry.conditions && timed) {
    // An occasion whose conditions fail would be looked at again by every scan (nothing records
    // it); a condition node at the start records its run instead.
    issues.push({
      field: 'entry.conditions',
      issue: 'a timed entry takes no conditions: start the journey with a condition node instead',
    });
  } else if (entry.conditions) {
    issues.push(
      ...(entry.event
        ? triggerConditionProblems(entry.conditions, entry.event, 'entry.conditions', JOURNEY_PREFIXES)
        : conditionProblems(entry.conditions, 'entry.conditions', JOURNEY_PREFIXES)),
    );
  }
  const problem = durationProblem(d.settings.maxRunDuration, MAX_RUN_DURATION);
  if (problem) issues.push({ field: 'settings.maxRunDuration', issue: problem });
  if (d.settings.sendWindow) issues.push(...sendWindowProblems(d.settings.sendWindow, 'settings.sendWindow'));
  const all = { ...checks, sequenceExists: null, callsWebhooks: true };
  for (const [i, node] of d.nodes.entries()) issues.push(...(await nodeProblems(node, `nodes[${i}]`, all)));
  return issues;
}
