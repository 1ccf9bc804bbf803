// What the schema of an action cannot check, checked when a rule is saved, every problem at once
// with its field: a message's content (the send path's own rules), Liquid templates that do not
// parse, tags, attribute names and contact fields the contacts module would refuse, a team member
// or sequence of another account (invisible: refused as unknown), a URL the egress check refuses,
// and actions whose resource area does not exist yet (place_call) or that cannot be used where
// they are.

import type { Sql } from '../../kernel/database/db.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import { ATTRIBUTE_NAME, changeIssues, normalizeTag } from '../contacts/index.ts';
import { checkContent, type MessageFieldsInput } from '../messages/index.ts';
import { liquidDataIssue } from './liquid-data.ts';
import { isTemplated, templateProblem } from './templating.ts';

export type Action = { type: string } & Record<string, unknown>;

export interface ActionChecks {
  egress: Egress;
  /** Whether the account has this team member. */
  memberExists: (id: string) => Promise<boolean>;
  /** Whether the account has this sequence (null: sequences cannot be named here). */
  sequenceExists: ((id: string) => Promise<boolean>) | null;
  /** Whether the account has this journey (null: journeys cannot be named here). */
  journeyExists?: ((id: string) => Promise<boolean>) | null;
  /** Whether the account has this team (absent: teams cannot be named here). */
  teamExists?: (id: string) => Promise<boolean>;
  /** Whether the engine runs call_webhook yet. */
  callsWebhooks: boolean;
  /** Why the account cannot call with this voice script (not its own, not published), or null. */
  scriptProblem?: (id: string) => Promise<string | null>;
}

/**
 * Whether the sequences and journeys an action names exist: modules above automation and rules,
 * asked through this (given in app.ts) when a rule is saved.
 */
export interface ActionTargets {
  sequenceExists(sql: Sql, accountId: string, id: string): Promise<boolean>;
  journeyExists(sql: Sql, accountId: string, id: string): Promise<boolean>;
}

/** The texts of a message that are Liquid templates, with their fields. */
function templatedTexts(message: MessageFieldsInput, at: string): [string, string][] {
  const texts: [string, string][] = [];
  if (typeof message.text === 'string') texts.push([`${at}.text`, message.text]);
  (message.parameters ?? []).forEach((p, i) => {
    if (typeof p === 'string') texts.push([`${at}.parameters[${i}]`, p]);
  });
  const media = message.media as { caption?: unknown } | undefined;
  if (typeof media?.caption === 'string') texts.push([`${at}.media.caption`, media.caption]);
  if (typeof message.interactive?.body === 'string')
    texts.push([`${at}.interactive.body`, message.interactive.body]);
  return texts;
}

export const CONTACT_CHANGE_FIELDS = ['optedIn', 'marketingOptOut', 'name', 'email'] as const;

/**
 * The update_contact action of a journey node's config (which also tags and sets attributes): its
 * optedIn, marketingOptOut, name and email, or null when it sets none of them.
 */
export function contactChange(config: Record<string, unknown>): Action | null {
  const given = CONTACT_CHANGE_FIELDS.filter((k) => config[k] !== undefined);
  if (given.length === 0) return null;
  return { type: 'update_contact', ...Object.fromEntries(given.map((k) => [k, config[k]])) };
}

/**
 * What an update_contact's fields cannot be: none given, or a value PATCH /contacts would refuse (a
 * literal email that is not one; a template is checked once rendered, when the action runs).
 */
function contactChangeProblems(a: Record<string, unknown>, at: string): FieldIssue[] {
  const given = CONTACT_CHANGE_FIELDS.filter((k) => a[k] !== undefined);
  if (given.length === 0) {
    return [{ field: at, issue: 'sets nothing: give optedIn, marketingOptOut, name or email' }];
  }
  const literal = Object.fromEntries(
    given.filter((k) => typeof a[k] !== 'string' || !isTemplated(a[k] as string)).map((k) => [k, a[k]]),
  );
  if (Object.keys(literal).length === 0) return [];
  return changeIssues(literal).map((f) => ({ ...f, field: `${at}.${f.field}` }));
}

/** Strings anywhere inside a JSON value, with their paths. */
function stringsIn(value: unknown, at: string, out: [string, string][] = []): [string, string][] {
  if (typeof value === 'string') out.push([at, value]);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) stringsIn(v, `${at}[${i}]`, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) stringsIn(v, `${at}.${k}`, out);
  }
  return out;
}

export async function actionProblems(
  actions: Action[],
  path: string,
  checks: ActionChecks,
): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  for (const [i, a] of actions.entries()) {
    const at = `${path}[${i}]`;
    const templates: [string, string][] = [];
    switch (a.type) {
      case 'send_message': {
        const message = a.message as MessageFieldsInput;
        const found: FieldIssue[] = [];
        checkContent(message, found);
        for (const f of found) issues.push({ ...f, field: `${at}.message.${f.field}` });
        templates.push(...templatedTexts(message, `${at}.message`));
        break;
      }
      case 'add_tag':
      case 'remove_tag':
      case 'add_label':
      case 'remove_label': {
        const key = a.type.endsWith('_tag') ? 'tag' : 'label';
        if (normalizeTag(a[key] as string) === null) {
          issues.push({
            field: `${at}.${key}`,
            issue: 'must be 1–50 letters, digits, spaces or - _ : . and start with a letter or digit',
          });
        }
        break;
      }
      case 'set_attribute':
        if (!ATTRIBUTE_NAME.test(a.key as string)) {
          issues.push({
            field: `${at}.key`,
            issue: 'must start with a letter or _ and hold at most 40 letters, digits or _',
          });
        }
        if (typeof a.value === 'string') templates.push([`${at}.value`, a.value]);
        break;
      case 'update_contact':
        issues.push(...contactChangeProblems(a, at));
        for (const key of ['name', 'email'] as const) {
          if (typeof a[key] === 'string') templates.push([`${at}.${key}`, a[key] as string]);
        }
        break;
      case 'assign':
        if ((a.assigneeId === undefined) === (a.strategy === undefined)) {
          issues.push({ field: at, issue: 'takes either assigneeId or strategy: "round_robin"' });
        } else if (typeof a.assigneeId === 'string' && !(await checks.memberExists(a.assigneeId))) {
          issues.push({ field: `${at}.assigneeId`, issue: 'is not a team member of this account' });
        }
        break;
      case 'assign_team':
        if (!checks.teamExists)
          issues.push({ field: `${at}.type`, issue: 'assign_team cannot be used here' });
        else if (!(await checks.teamExists(a.teamId as string)))
          issues.push({ field: `${at}.teamId`, issue: 'is not a team of this account' });
        break;
      case 'enroll_in_sequence':
      case 'exit_sequences':
        if (!checks.sequenceExists) {
          issues.push({
            field: `${at}.type`,
            issue: `${a.type} needs sequences, which this release does not have yet`,
          });
        } else if (typeof a.sequenceId === 'string' && !(await checks.sequenceExists(a.sequenceId))) {
          issues.push({ field: `${at}.sequenceId`, issue: 'is not a sequence of this account' });
        }
        break;
      case 'call_webhook': {
        if (!checks.callsWebhooks) {
          issues.push({ field: `${at}.type`, issue: 'call_webhook is not available in this release yet' });
          break;
        }
        const problem = await checks.egress.check(a.url as string);
        if (problem) issues.push({ field: `${at}.url`, issue: problem });
        if (a.body !== undefined) templates.push(...stringsIn(a.body, `${at}.body`));
        break;
      }
      case 'trigger_journey': {
        if (!checks.journeyExists) {
          issues.push({ field: `${at}.type`, issue: 'trigger_journey cannot be used here' });
        } else if (!(await checks.journeyExists(a.journeyId as string))) {
          issues.push({ field: `${at}.journeyId`, issue: 'is not a journey of this account' });
        }
        if (a.data !== undefined) templates.push(...stringsIn(a.data, `${at}.data`));
        const tooMuch = liquidDataIssue(a.data, `${at}.data`);
        if (tooMuch) issues.push(tooMuch);
        break;
      }
      case 'place_call': {
        const problem = checks.scriptProblem
          ? await checks.scriptProblem(a.scriptId as string)
          : 'place_call cannot be used here';
        if (problem) issues.push({ field: `${at}.scriptId`, issue: problem });
        break;
      }
    }
    for (const [field, text] of templates) {
      const problem = templateProblem(text);
      if (problem) issues.push({ field, issue: problem });
    }
  }
  return issues;
}
