// Turns a request to send into a PreparedMessage: the recipient's address (E.164, or a WhatsApp
// user id) and their country, the
// content checked, the template found, approved and filled in, and the price category. Sends,
// estimates and bulk sends all prepare through here, so they refuse exactly the same things.
import type { MessageContent, TemplateCategory, TemplateComponent } from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { ApiError, type FieldIssue, notFound } from '../../kernel/http/errors.ts';
import { countryOf, normalizePhone } from '../../kernel/values/phones.ts';
import { countryOfUserId, isPhoneAddress, isWhatsAppUserId } from '../../kernel/values/whatsapp-user-ids.ts';
import { invalidFields } from '../contacts/index.ts';
import type { PriceCategory } from '../pricing/index.ts';
import { categoryOf } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import {
  buttonPayloadIssues,
  namedParameterIssues,
  renderNamedBody,
  type TemplateRow,
  toDefinition,
} from '../templates/index.ts';
import { type ChatMessageInput, type CheckedContent, checkContent } from './content.ts';
import { type MessageReferences, referencedMessage } from './references.ts';
import type { OutboundContent, StoredContent } from './repo.ts';

export interface PreparedMessage {
  /** The chat's address: an E.164 number, or a WhatsApp user id (isPhoneAddress). */
  to: string;
  country: string | null;
  type: CheckedContent['type'];
  /** As the provider gets it. */
  content: MessageContent;
  /** As stored and shown. */
  stored: StoredContent;
  templateId: string | null;
  category: PriceCategory;
  /** Free-form: only inside the customer service window. */
  freeForm: boolean;
}

/**
 * Finds an upload a send names by id (`media.id`): its kind and filename, or null when the account
 * has no such media (unknown, deleted, expired). Paths that send without one (bulk sends,
 * campaigns, automation) refuse `media.id`.
 */
export type MediaLookup = (id: string) => Promise<{ kind: string; filename: string | null } | null>;

/** Checks a send's `media.id` against the account's uploads; answers the media as it is sent. */
async function withUpload(
  media: Extract<CheckedContent, { type: 'media' }>['media'],
  lookup: MediaLookup | undefined,
): Promise<Extract<CheckedContent, { type: 'media' }>['media']> {
  if (media.id === undefined) return media;
  if (!lookup) throw invalidFields([{ field: 'media.id', issue: 'is not taken here: give media.url' }]);
  const upload = await lookup(media.id);
  if (!upload)
    throw invalidFields([
      { field: 'media.id', issue: 'is not an upload of this account (unknown, deleted or expired)' },
    ]);
  if (upload.kind !== media.kind)
    throw invalidFields([
      { field: 'media.kind', issue: `must be ${upload.kind}: the kind media.id was uploaded as` },
    ]);
  // A document sent by id shows the upload's filename unless the send gives one.
  if (media.kind === 'document' && media.filename === undefined && upload.filename)
    return { ...media, filename: upload.filename };
  return media;
}

/** Looks templates up once per (name, language) for a whole batch. */
export type TemplateLookup = (name: string, language: string) => Promise<TemplateRow | null>;

export function templateLookup(sql: Sql, accountId: string, approved: ApprovedTemplates): TemplateLookup {
  const seen = new Map<string, Promise<TemplateRow | null>>();
  return (name, language) => {
    const key = `${name}\u0000${language}`;
    let found = seen.get(key);
    if (!found) {
      found = approved.find(sql, accountId, name, language);
      seen.set(key, found);
    }
    return found;
  };
}

const PLACEHOLDER = /\{\{(\d+)\}\}/g;

function placeholdersIn(text: string | undefined): number {
  return text ? new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1])).size : 0;
}

/** How many of a send's parameters the header takes: its placeholder, or a media header's link. */
function headerParameters(components: TemplateComponent[]): number {
  const header = components.find((c) => c.type === 'HEADER');
  if (!header) return 0;
  return header.format === 'TEXT' ? placeholdersIn(header.text) : 1;
}

/** The body with its placeholders filled: the header's parameters come first in the list. */
export function renderBody(components: TemplateComponent[], parameters: string[]): string {
  const offset = headerParameters(components);
  const body = components.find((c) => c.type === 'BODY');
  return (body?.text ?? '').replace(PLACEHOLDER, (_, n: string) => parameters[offset + Number(n) - 1] ?? '');
}

const MAX_RENDERED_BODY = 1024;

async function prepareTemplate(
  content: Extract<CheckedContent, { type: 'template' }>,
  lookup: TemplateLookup,
  field: string,
) {
  const row = await lookup(content.name, content.language);
  if (!row) throw notFound(`template ${content.name} (${content.language})`);
  if (row.status !== 'APPROVED') {
    throw new ApiError(
      'TEMPLATE_NOT_APPROVED',
      `Template ${row.name} (${row.language}) is ${row.status}; only APPROVED templates can be sent.`,
      { details: [{ field: 'templateName', issue: `is ${row.status}`, templateId: row.id }] },
    );
  }
  // A NAMED template takes its values by name; quick-reply payloads name QUICK_REPLY buttons.
  const sendIssues = buttonPayloadIssues(row, content.buttonPayloads);
  if (row.parameter_format === 'NAMED') {
    sendIssues.unshift(...namedParameterIssues(row, content.parameters, field));
    if (sendIssues.length > 0) throw invalidFields(sendIssues);
    const definition = toDefinition(row);
    const body = renderNamedBody(definition.components, content.parameters as Record<string, string>);
    if (body.length > MAX_RENDERED_BODY) {
      throw invalidFields([
        { field, issue: `make the body ${body.length} characters long; at most ${MAX_RENDERED_BODY}` },
      ]);
    }
    return { row, definition, body };
  }
  if (!Array.isArray(content.parameters)) {
    sendIssues.unshift({
      field,
      issue: `must be a list for the POSITIONAL template ${row.name}: its values in order ({{1}}, {{2}}, …)`,
    });
  }
  if (sendIssues.length > 0) throw invalidFields(sendIssues);
  const parameters = content.parameters as string[];
  if (parameters.length !== row.parameter_count) {
    throw invalidFields([
      {
        field,
        issue: `must hold ${row.parameter_count} value(s) for template ${row.name}, not ${parameters.length}`,
      },
    ]);
  }
  const definition = toDefinition(row);
  const header = definition.components.find((c) => c.type === 'HEADER');
  if (header && header.format !== 'TEXT' && !/^https?:\/\/\S+$/i.test(parameters[0] ?? '')) {
    throw invalidFields([
      {
        field: `${field}[0]`,
        issue: `must be the http(s) link of the ${header.format.toLowerCase()} the header shows`,
      },
    ]);
  }
  const body = renderBody(definition.components, parameters);
  if (body.length > MAX_RENDERED_BODY) {
    throw invalidFields([
      { field, issue: `make the body ${body.length} characters long; at most ${MAX_RENDERED_BODY}` },
    ]);
  }
  return { row, definition, body };
}

type Reference = { messageId: string; providerMessageId: string | null } | null;

/**
 * The messages a reaction or a quoted reply names, found in the account (400 naming the field for
 * one that cannot be used). Sends that cannot name messages (bulk, automations) have no `refs`.
 */
async function resolveReferences(
  input: ChatMessageInput,
  to: string,
  refs: MessageReferences | undefined,
): Promise<{ reaction: Reference; quote: Reference }> {
  const issues: FieldIssue[] = [];
  const resolve = async (id: string | undefined, field: string, use: 'reaction' | 'quote') => {
    if (id === undefined) return null;
    if (!refs) {
      issues.push({ field, issue: 'is only taken by a send to one chat (POST /messages, a reply)' });
      return null;
    }
    return referencedMessage(refs, id, to, field, use, issues);
  };
  const reaction = await resolve(input.reaction?.messageId, 'reaction.messageId', 'reaction');
  const quote = await resolve(input.context?.messageId, 'context.messageId', 'quote');
  if (issues.length > 0) throw invalidFields(issues);
  return { reaction, quote };
}

/** The prepared message of a free-form kind that needs no template: priced and windowed as text. */
function freeForm(
  base: Pick<PreparedMessage, 'to' | 'country' | 'type'>,
  content: MessageContent,
  stored: OutboundContent,
): PreparedMessage {
  return { ...base, content, stored, templateId: null, category: 'service', freeForm: true };
}

/** What preparing a message looks things up with, and how its errors name their fields. */
export interface PrepareContext {
  countryCode: string;
  lookup: TemplateLookup;
  toField?: string;
  whatsappUserIdField?: string;
  parametersField?: string;
  /** Where `media.id` is taken: the account's uploads. */
  media?: MediaLookup;
  /** How the messages a reaction or a quote names are found (a send to one chat only). */
  references?: MessageReferences;
}

/** Who a message goes to: a number (`to`, E.164 or the account's country's), or a WhatsApp user id. */
export type Recipient =
  | { to: string; whatsappUserId?: undefined }
  | { whatsappUserId: string; to?: undefined };

/** The address of the recipient, or the issue of its field. */
function addressOfRecipient(input: Recipient, ctx: Omit<PrepareContext, 'references'>): string | FieldIssue {
  if (input.whatsappUserId !== undefined) {
    return isWhatsAppUserId(input.whatsappUserId)
      ? input.whatsappUserId
      : {
          field: ctx.whatsappUserIdField ?? 'whatsappUserId',
          issue: "is not a WhatsApp user id (Meta's business-scoped id, e.g. US.13491208655302741918)",
        };
  }
  return (
    normalizePhone(input.to, ctx.countryCode) ?? {
      field: ctx.toField ?? 'to',
      issue: 'is not a valid phone number (use E.164, e.g. +14155550123)',
    }
  );
}

/**
 * Prepares one message to `to`. `parametersField` names where the parameters came from, for
 * errors (`parameters`, or `recipients[3].parameters` in a batch). Throws the ApiError a send
 * would answer: 400, 404 (unknown template) or 422 (template not approved).
 */
export async function prepareMessage(
  input: ChatMessageInput & Recipient,
  ctx: PrepareContext,
): Promise<PreparedMessage> {
  const prepared = await prepareContent(input, ctx);
  if (input.context === undefined && prepared.type !== 'reaction') return prepared;
  const { reaction, quote } = await resolveReferences(input, prepared.to, ctx.references);
  if (prepared.type === 'reaction' && reaction) {
    const emoji = input.reaction!.emoji;
    return freeForm(
      prepared,
      { type: 'reaction', reaction: { providerMessageId: reaction.providerMessageId ?? '', emoji } },
      { reaction: { ...reaction, emoji } },
    );
  }
  if (!quote) return prepared;
  return { ...prepared, stored: { ...prepared.stored, context: quote } as StoredContent };
}

async function prepareContent(
  input: ChatMessageInput & Recipient,
  ctx: Omit<PrepareContext, 'references'>,
): Promise<PreparedMessage> {
  const issues: FieldIssue[] = [];
  const address = addressOfRecipient(input, ctx);
  if (typeof address !== 'string') issues.push(address);
  const checked = checkContent(input, issues);
  if (issues.length > 0 || !checked || typeof address !== 'string') throw invalidFields(issues);
  const to = address;
  const country = isPhoneAddress(to) ? countryOf(to) : countryOfUserId(to);
  const base = { to, country, type: checked.type };
  switch (checked.type) {
    case 'template': {
      const { row, definition, body } = await prepareTemplate(
        checked,
        ctx.lookup,
        ctx.parametersField ?? 'parameters',
      );
      return {
        ...base,
        content: {
          type: 'template',
          template: {
            ...definition,
            parameters: checked.parameters,
            ...(checked.buttonPayloads.length > 0 ? { buttonPayloads: checked.buttonPayloads } : {}),
          },
        },
        stored: {
          template: {
            id: row.id,
            name: row.name,
            language: row.language,
            category: row.category,
            parameters: checked.parameters,
            body,
            // Kept with the message: a retry of its hand-over sends the same payloads.
            ...(checked.buttonPayloads.length > 0 ? { buttonPayloads: checked.buttonPayloads } : {}),
          },
        },
        templateId: row.id,
        category: categoryOf(row.category as TemplateCategory),
        freeForm: false,
      };
    }
    case 'text':
      return {
        ...base,
        content: { type: 'text', text: { body: checked.body, previewUrl: checked.previewUrl } },
        stored: { text: { body: checked.body, previewUrl: checked.previewUrl } },
        templateId: null,
        category: 'service',
        freeForm: true,
      };
    case 'media': {
      const media = await withUpload(checked.media, ctx.media);
      const { id, ...sent } = media;
      return {
        ...base,
        content: { type: 'media', media: id === undefined ? sent : { ...sent, mediaId: id } },
        stored: { media },
        templateId: null,
        category: 'service',
        freeForm: true,
      };
    }
    case 'interactive':
      return {
        ...base,
        content: { type: 'interactive', interactive: checked.interactive },
        stored: { interactive: checked.interactive as unknown as Record<string, unknown> },
        templateId: null,
        category: 'service',
        freeForm: true,
      };
    case 'location': {
      const { latitude, longitude, name, address } = checked.location;
      return freeForm(
        base,
        { type: 'location', location: checked.location },
        { location: { latitude, longitude, name: name ?? null, address: address ?? null, url: null } },
      );
    }
    case 'contacts':
      return freeForm(
        base,
        { type: 'contacts', contacts: checked.contacts },
        { contacts: checked.contacts as unknown as Record<string, unknown>[] },
      );
    case 'reaction':
      // Its message is found by prepareMessage: a placeholder until then.
      return freeForm(
        base,
        { type: 'reaction', reaction: { providerMessageId: '', emoji: checked.reaction.emoji } },
        { reaction: { messageId: checked.reaction.messageId, providerMessageId: null, emoji: '' } },
      );
  }
}
