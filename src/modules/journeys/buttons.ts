// The buttons a wait_for_reply waits for, held against the messages that offer them. A tap answers
// with the button's id: a template's quick-reply button with its label (automation sends no
// payloads of their own), an interactive message's button or list row with its id. A wait for a
// button that no message before it offers can only time out, so:
//   - when a journey is published (and a journey config saved, whose journey is published), each
//     button of a wait's `match.buttons` must be offered by one of the messages sent before the
//     wait: the send_message nodes a run can come from to the wait without passing another one. A
//     template is read by its name and language, whatever its status; one the account does not
//     have (yet) is not held against anything then, nor is a wait no send_message comes before (it
//     may answer a message sent outside the journey);
//   - when a run sends a message whose next node waits for buttons, the message it is about to
//     send is held against them again (a template made or changed at Meta since the publish): one
//     that lacks them fails the send step, BUTTONS_MISSING, rather than wait for a tap that cannot
//     come.
import type { MessageContent, TemplateComponent } from '../../channels/types.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import type { MessageFieldsInput } from '../messages/index.ts';
import type { Definition, JourneyNode } from './graph.ts';

/** A template's components, found by name and language (null: the account has no such template). */
export type TemplateComponents = (name: string, language: string) => Promise<TemplateComponent[] | null>;

/** The labels of a template's quick-reply buttons: what a tap on one answers with. */
export function quickReplies(components: TemplateComponent[]): string[] {
  return components.flatMap((c) =>
    c.type === 'BUTTONS' ? c.buttons.flatMap((b) => (b.type === 'QUICK_REPLY' ? [b.text] : [])) : [],
  );
}

/** The button ids an interactive message offers (its buttons, or its list's rows). */
function interactiveIds(interactive: MessageFieldsInput['interactive']): string[] {
  if (!interactive) return [];
  return [
    ...(interactive.buttons ?? []).map((b) => b.id),
    ...(interactive.sections ?? []).flatMap((s) => s.rows.map((r) => r.id)),
  ];
}

/** What a message offers to tap, and how to name it in an issue. */
interface Offer {
  ids: string[];
  what: string;
}

/** "no quick-reply buttons", or "quick-reply buttons "Yes", "No"". */
function listed(kind: string, ids: string[]): string {
  return ids.length === 0 ? `no ${kind}` : `${kind} ${ids.map((id) => JSON.stringify(id)).join(', ')}`;
}

/** What a node's message offers, or null when it cannot be known (a template the account lacks). */
async function offerOf(message: MessageFieldsInput, templates: TemplateComponents): Promise<Offer | null> {
  if (typeof message.templateName === 'string') {
    const language = message.templateLanguage ?? '';
    const components = await templates(message.templateName, language);
    if (!components) return null;
    const ids = quickReplies(components);
    return {
      ids,
      what: `template ${message.templateName} (${language}) has ${listed('quick-reply buttons', ids)}`,
    };
  }
  const ids = interactiveIds(message.interactive);
  return { ids, what: `a ${message.type ?? 'text'} message with ${listed('buttons', ids)}` };
}

/** The send_message nodes a run can come from to `waitId` without passing another send_message. */
export function messagesBefore(d: Definition, waitId: string): JourneyNode[] {
  const byId = new Map(d.nodes.map((n) => [n.id, n]));
  const into = new Map<string, string[]>();
  for (const e of d.edges) into.set(e.to, [...(into.get(e.to) ?? []), e.from]);
  const found: JourneyNode[] = [];
  const seen = new Set([waitId]);
  const queue = [...(into.get(waitId) ?? [])];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const node = byId.get(id);
    if (!node) continue;
    if (node.type === 'send_message') found.push(node);
    else queue.push(...(into.get(id) ?? []));
  }
  return found;
}

const buttonsOf = (node: JourneyNode): string[] =>
  (node.config.match as { buttons?: string[] } | undefined)?.buttons ?? [];

/** Each button of a wait that no message before it offers, at `nodes[i].config.match.buttons[k]`. */
export async function buttonProblems(d: Definition, templates: TemplateComponents): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  for (const [i, node] of d.nodes.entries()) {
    const buttons = node.type === 'wait_for_reply' ? buttonsOf(node) : [];
    if (buttons.length === 0) continue;
    const before = messagesBefore(d, node.id);
    const offers = await Promise.all(
      before.map((n) => offerOf(n.config.message as MessageFieldsInput, templates)),
    );
    // A message whose buttons cannot be known yet may offer any of them.
    if (before.length === 0 || offers.some((o) => o === null)) continue;
    const offered = new Set(offers.flatMap((o) => o!.ids));
    const told = [...new Set(offers.map((o) => o!.what))].join('; ');
    buttons.forEach((button, k) => {
      if (offered.has(button)) return;
      issues.push({
        field: `nodes[${i}].config.match.buttons[${k}]`,
        issue: `${JSON.stringify(button)} is not a button of the message sent before this wait (${told})`,
      });
    });
  }
  return issues;
}

/**
 * The buttons the node after `sendId` (by next) waits for that the message about to be sent does
 * not offer (`offered`: its quick-reply labels or interactive ids); empty when all are.
 */
export function missingButtons(d: Definition, sendId: string, offered: string[]): string[] {
  const nextId = d.edges.find((e) => e.from === sendId && e.when === 'next')?.to;
  const next = d.nodes.find((n) => n.id === nextId);
  if (next?.type !== 'wait_for_reply') return [];
  return buttonsOf(next).filter((b) => !offered.includes(b));
}

/** The ids a prepared message offers to tap: a template's quick replies, an interactive's ids. */
export function offeredIds(content: MessageContent): string[] {
  if (content.type === 'template') return quickReplies(content.template.components);
  if (content.type !== 'interactive') return [];
  const i = content.interactive;
  if (i.kind === 'buttons') return i.buttons.map((b) => b.id);
  if (i.kind === 'list') return i.sections.flatMap((s) => s.rows.map((r) => r.id));
  return [];
}
