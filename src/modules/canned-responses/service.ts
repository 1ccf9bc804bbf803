// Canned responses: replies an account saves once and its agents send with `/shortcut`. The text is
// a Liquid template over the customer and the conversation (automation/templating.ts: strict, its
// output bounded by its field's size), checked when saved; it is rendered for one conversation
// (`POST /canned-responses/{id}/render`) into the body the agent sends as it is, or edits first:
// the text (with its media) while the customer service window is open, the template, when there is
// one, once it has closed (free-form messages may not be sent then). Nothing is sent here: the send
// is the conversation's reply, with its window rule and price.
//
// Bounded: at most MAX_CANNED per account, each within the sizes its schema gives.
import type { Database } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, invalidRequest, notFound } from '../../kernel/http/errors.ts';
import { newId } from '../../kernel/values/ids.ts';
import { renderMessage, scopeFor, TemplateError, templateProblem } from '../automation/index.ts';
import { showConversation } from '../conversations/index.ts';
import { checkContent, type MessageFieldsInput } from '../messages/index.ts';
import { findMember } from '../team/index.ts';
import {
  type CannedResponseRow,
  type CannedValues,
  countCanned,
  deleteCanned,
  findCanned,
  findCannedByShortcut,
  insertCanned,
  updateCanned,
} from './repo.ts';

export interface CannedServices {
  db: Database;
  now: () => Date;
}

export const MAX_CANNED = 1000;

export interface CannedInput {
  shortcut?: string;
  title?: string;
  text?: string;
  media?: CannedValues['media'];
  template?: CannedValues['template'];
}

/** The message the text makes: a text, or the media with the text as its caption. */
function chatMessage(values: Pick<CannedValues, 'text' | 'media'>): MessageFieldsInput {
  return values.media
    ? { type: 'media', media: { ...values.media, caption: values.text } }
    : { type: 'text', text: values.text };
}

function templateMessage(template: NonNullable<CannedValues['template']>): MessageFieldsInput {
  return {
    type: 'template',
    templateName: template.name,
    templateLanguage: template.language,
    parameters: template.parameters ?? [],
  };
}

/** The body's fields as the send path's checks name them, back to the canned response's. */
const FIELD_NAMES: Record<string, string> = {
  text: 'text',
  'media.caption': 'text',
  templateName: 'template.name',
  templateLanguage: 'template.language',
};
const ownField = (field: string) =>
  FIELD_NAMES[field] ?? (field.startsWith('parameters') ? `template.${field}` : field);

/** What is wrong with a canned response: its messages as the send path checks them, its templates. */
function problemsOf(values: CannedValues): FieldIssue[] {
  const found: FieldIssue[] = [];
  checkContent(chatMessage(values), found);
  if (values.template) checkContent(templateMessage(values.template), found);
  const issues = found.map((f) => ({ ...f, field: ownField(f.field) }));
  const texts: [string, string][] = [['text', values.text]];
  (values.template?.parameters ?? []).forEach((p, i) => {
    texts.push([`template.parameters[${i}]`, p]);
  });
  for (const [field, text] of texts) {
    const problem = templateProblem(text);
    if (problem) issues.push({ field, issue: problem });
  }
  return issues;
}

const taken = (other: CannedResponseRow) =>
  conflict('The account has a canned response with this shortcut.', [
    { field: 'shortcut', issue: 'is taken', cannedResponseId: other.id },
  ]);

export async function createCanned(
  s: CannedServices,
  accountId: string,
  input: Required<Pick<CannedInput, 'shortcut' | 'title' | 'text'>> & CannedInput,
) {
  const values: CannedValues = {
    shortcut: input.shortcut.toLowerCase(),
    title: input.title,
    text: input.text,
    media: input.media ?? null,
    template: input.template ?? null,
  };
  const issues = problemsOf(values);
  if (issues.length > 0) throw invalidRequest(issues);
  return s.db.transaction(async (tx) => {
    // The account's row, locked: two creations at once count each other against the limit.
    await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    if ((await countCanned(tx, accountId)) >= MAX_CANNED)
      throw conflict(`The account has ${MAX_CANNED} canned responses, the most it may have.`);
    const row = await insertCanned(tx, accountId, newId('cannedResponse'), values, s.now());
    if (!row) throw taken((await findCannedByShortcut(tx, accountId, values.shortcut))!);
    return row;
  });
}

export async function getCanned(s: Pick<CannedServices, 'db'>, accountId: string, id: string) {
  const row = await findCanned(s.db, accountId, id);
  if (!row) throw notFound('canned response');
  return row;
}

export async function patchCanned(s: CannedServices, accountId: string, id: string, input: CannedInput) {
  return s.db.transaction(async (tx) => {
    const row = await findCanned(tx, accountId, id, { lock: true });
    if (!row) throw notFound('canned response');
    const values: CannedValues = {
      shortcut: input.shortcut?.toLowerCase() ?? row.shortcut,
      title: input.title ?? row.title,
      text: input.text ?? row.text,
      media: input.media === undefined ? row.media : input.media,
      template: input.template === undefined ? row.template : input.template,
    };
    const issues = problemsOf(values);
    if (issues.length > 0) throw invalidRequest(issues);
    const other =
      values.shortcut !== row.shortcut && (await findCannedByShortcut(tx, accountId, values.shortcut));
    if (other) throw taken(other);
    const updated = await updateCanned(tx, accountId, id, values, s.now());
    // Another took the shortcut between the look and the write.
    if (!updated) throw conflict('The account has a canned response with this shortcut.');
    return updated;
  });
}

export async function removeCanned(s: Pick<CannedServices, 'db'>, accountId: string, id: string) {
  if (!(await deleteCanned(s.db, accountId, id))) throw notFound('canned response');
}

/** Who answers, as `{{ agent.… }}` reads them: the member of a console session, or nobody. */
export interface Agent {
  id: string;
  name: string;
  email: string;
}

/** Renders a field's message; a template that fails is a problem of its field, not an error. */
async function rendered(
  message: MessageFieldsInput,
  scope: object,
  field: string,
  problems: FieldIssue[],
): Promise<MessageFieldsInput | null> {
  try {
    return await renderMessage(message, scope, field);
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    problems.push({ field, issue: err.message });
    return null;
  }
}

/** A canned response rendered for one conversation's customer (see the top of this file). */
export async function renderCanned(
  s: CannedServices,
  accountId: string,
  id: string,
  conversationId: string,
  agentId: string | null,
) {
  const canned = await getCanned(s, accountId, id);
  const now = s.now();
  const conversation = await showConversation(s.db, accountId, conversationId, now);
  if (!conversation) throw notFound('conversation');
  const member = agentId ? await findMember(s.db, accountId, agentId) : null;
  const agent: Agent | null = member ? { id: member.id, name: member.name, email: member.email } : null;
  const event = { id: conversation.id, type: 'canned_response.render', data: {} };
  const base = await scopeFor(s.db, accountId, conversation.contactId, event, now, { conversationId });
  // Without an agent, `{{ agent.name }}` is an unknown variable (a problem), not an empty text.
  const scope = agent ? { ...base, agent } : base;
  const problems: FieldIssue[] = [];
  const chat = await rendered(chatMessage(canned), scope, 'text', problems);
  const template = canned.template
    ? await rendered(templateMessage(canned.template), scope, 'template', problems)
    : null;
  const open = conversation.serviceWindowOpen;
  // The one to send: null when it failed to render (the other's problems are listed too).
  const message = open || !canned.template ? chat : template;
  const text = chat
    ? ((chat.text ?? (chat.media as { caption?: string } | undefined)?.caption) as string)
    : null;
  return {
    cannedResponseId: canned.id,
    conversationId: conversation.id,
    serviceWindowOpen: open,
    text,
    message,
    problems,
  };
}
