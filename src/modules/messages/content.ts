// What a request asks to send, checked beyond its schema: which type it is, that the fields of that
// type (and only those) are there, and WhatsApp's own rules that a schema cannot say (unique button
// ids, at most 10 list rows in all, template parameters without new lines, …). Every problem is
// reported at once, with its field.
import type {
  ContactCard,
  MediaKind,
  OutboundInteractive,
  QuickReplyPayload,
  TemplateParameters,
} from '../../channels/types.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { contactsIssues, emojiIssue, interactiveKindIssues, stickerIssues } from './kinds.ts';

/** What any send takes (bulk sends and automations too). */
export interface MessageFieldsInput {
  type?: 'template' | 'text' | 'media' | 'interactive' | 'location' | 'contacts';
  templateName?: string;
  templateLanguage?: string;
  parameters?: string[];
  text?: string;
  previewUrl?: boolean;
  /** `url`, or `id` (an upload, med_…): exactly one. */
  media?: { kind: MediaKind; url?: string; id?: string; caption?: string; filename?: string };
  interactive?: {
    kind: 'buttons' | 'list' | 'cta_url' | 'location_request' | 'contact_request';
    header?: string;
    body: string;
    footer?: string;
    buttons?: { id: string; title: string }[];
    buttonText?: string;
    sections?: { title?: string; rows: { id: string; title: string; description?: string }[] }[];
    button?: { text: string; url: string };
  };
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: ContactCard[];
}

/** What a send to one chat takes besides: a reaction and a quote name an earlier message of it. */
export interface ChatMessageInput extends Omit<SendFieldsInput, 'type'> {
  type?: MessageFieldsInput['type'] | 'reaction';
  /** The message reacted to (Tidings' id; prepare.ts finds its provider id) and the emoji. */
  reaction?: { messageId: string; emoji: string };
  /** The message quoted (Tidings' id), on any type but a reaction. */
  context?: { messageId: string };
}

/**
 * What POST /messages and bulk sends take beyond the shared fields: `parameters` as an object by
 * name for a NAMED template, and quick-reply payloads.
 */
export type SendFieldsInput = Omit<MessageFieldsInput, 'parameters'> & {
  parameters?: TemplateParameters;
  buttonPayloads?: QuickReplyPayload[];
};

export type CheckedContent =
  | {
      type: 'template';
      name: string;
      language: string;
      parameters: TemplateParameters;
      buttonPayloads: QuickReplyPayload[];
    }
  | { type: 'text'; body: string; previewUrl: boolean }
  | {
      type: 'media';
      media: { kind: MediaKind; url?: string; id?: string; caption?: string; filename?: string };
    }
  | { type: 'interactive'; interactive: OutboundInteractive }
  | { type: 'location'; location: NonNullable<MessageFieldsInput['location']> }
  | { type: 'contacts'; contacts: ContactCard[] }
  | { type: 'reaction'; reaction: { messageId: string; emoji: string } };

const TYPE_FIELDS = {
  template: ['templateName', 'templateLanguage', 'parameters', 'buttonPayloads'],
  text: ['text', 'previewUrl'],
  media: ['media'],
  interactive: ['interactive'],
  location: ['location'],
  contacts: ['contacts'],
  reaction: ['reaction'],
} as const;

/** WhatsApp refuses template parameters with new lines, tabs or more than four spaces in a row. */
const BAD_PARAMETER = /[\n\r\t]| {5}/;

export function parameterIssues(parameters: TemplateParameters, field: string): FieldIssue[] {
  const entries: [string, string][] = Array.isArray(parameters)
    ? parameters.map((p, i) => [`${field}[${i}]`, p])
    : Object.entries(parameters).map(([name, p]) => [`${field}.${name}`, p]);
  return entries.flatMap(([at, p]) =>
    typeof p !== 'string'
      ? [{ field: at, issue: 'must be a string' }]
      : BAD_PARAMETER.test(p)
        ? [{ field: at, issue: 'must not hold new lines, tabs or more than 4 spaces in a row' }]
        : p.trim() === ''
          ? [{ field: at, issue: 'must not be blank' }]
          : [],
  );
}

function duplicates(values: string[]): string[] {
  return values.filter((v, i) => values.indexOf(v) !== i);
}

function checkInteractive(
  input: NonNullable<MessageFieldsInput['interactive']>,
  issues: FieldIssue[],
): OutboundInteractive {
  if (input.kind === 'cta_url' || input.kind === 'location_request' || input.kind === 'contact_request') {
    return interactiveKindIssues({ ...input, kind: input.kind }, issues);
  }
  if (input.button !== undefined)
    issues.push({ field: 'interactive.button', issue: 'is only for kind cta_url' });
  const common = {
    ...(input.header ? { header: input.header } : {}),
    body: input.body,
    ...(input.footer ? { footer: input.footer } : {}),
  };
  if (input.kind === 'buttons') {
    if (!input.buttons) issues.push({ field: 'interactive.buttons', issue: 'is required with kind buttons' });
    for (const f of ['buttonText', 'sections'] as const) {
      if (input[f] !== undefined) issues.push({ field: `interactive.${f}`, issue: 'is only for kind list' });
    }
    if (input.body.length > 1024)
      issues.push({ field: 'interactive.body', issue: 'must be at most 1024 characters with buttons' });
    const buttons = input.buttons ?? [];
    if (duplicates(buttons.map((b) => b.id)).length)
      issues.push({ field: 'interactive.buttons', issue: 'ids must be distinct' });
    if (duplicates(buttons.map((b) => b.title)).length)
      issues.push({ field: 'interactive.buttons', issue: 'titles must be distinct' });
    return { kind: 'buttons', ...common, buttons };
  }
  if (input.buttons !== undefined)
    issues.push({ field: 'interactive.buttons', issue: 'is only for kind buttons' });
  if (!input.buttonText)
    issues.push({ field: 'interactive.buttonText', issue: 'is required with kind list' });
  if (!input.sections) issues.push({ field: 'interactive.sections', issue: 'is required with kind list' });
  const sections = input.sections ?? [];
  const rows = sections.flatMap((s) => s.rows);
  if (rows.length > 10)
    issues.push({ field: 'interactive.sections', issue: 'must hold at most 10 rows in all' });
  if (duplicates(rows.map((r) => r.id)).length)
    issues.push({ field: 'interactive.sections', issue: 'row ids must be distinct' });
  if (sections.length > 1) {
    sections.forEach((s, i) => {
      if (!s.title)
        issues.push({
          field: `interactive.sections[${i}].title`,
          issue: 'is required when there are several sections',
        });
    });
  }
  return { kind: 'list', ...common, buttonText: input.buttonText ?? '', sections };
}

/** The content asked for, or null with the problems added to `issues`. */
export function checkContent(input: ChatMessageInput, issues: FieldIssue[]): CheckedContent | null {
  const before = issues.length;
  const type = input.type ?? (input.templateName !== undefined ? 'template' : undefined);
  if (!type) {
    issues.push({
      field: 'type',
      issue:
        'is required unless templateName is given (template, text, media, interactive, location, contacts or reaction)',
    });
    return null;
  }
  for (const [other, fields] of Object.entries(TYPE_FIELDS)) {
    if (other === type) continue;
    for (const field of fields) {
      if (input[field] !== undefined) issues.push({ field, issue: `is not for type ${type}` });
    }
  }
  let content: CheckedContent | null = null;
  switch (type) {
    case 'template': {
      if (!input.templateName) issues.push({ field: 'templateName', issue: 'is required' });
      if (!input.templateLanguage) issues.push({ field: 'templateLanguage', issue: 'is required' });
      const parameters = input.parameters ?? [];
      issues.push(...parameterIssues(parameters, 'parameters'));
      content = {
        type,
        name: input.templateName ?? '',
        language: input.templateLanguage ?? '',
        parameters,
        buttonPayloads: input.buttonPayloads ?? [],
      };
      break;
    }
    case 'text':
      if (input.text === undefined) issues.push({ field: 'text', issue: 'is required with type text' });
      else if (input.text.trim() === '') issues.push({ field: 'text', issue: 'must not be blank' });
      content = { type, body: input.text ?? '', previewUrl: input.previewUrl ?? false };
      break;
    case 'media': {
      const media = input.media;
      if (!media) {
        issues.push({ field: 'media', issue: 'is required with type media' });
        break;
      }
      issues.push(...mediaSourceIssues(media));
      if (media.kind === 'audio' && media.caption !== undefined)
        issues.push({ field: 'media.caption', issue: 'is not for audio' });
      if (media.kind === 'sticker') issues.push(...stickerIssues(media));
      if (media.kind !== 'document' && media.filename !== undefined) {
        issues.push({ field: 'media.filename', issue: 'is only for documents' });
      }
      content = { type, media };
      break;
    }
    case 'interactive':
      if (!input.interactive) {
        issues.push({ field: 'interactive', issue: 'is required with type interactive' });
        break;
      }
      content = { type, interactive: checkInteractive(input.interactive, issues) };
      break;
    case 'location': {
      const location = input.location;
      if (!location) {
        issues.push({ field: 'location', issue: 'is required with type location' });
        break;
      }
      if (!(Math.abs(location.latitude) <= 90))
        issues.push({ field: 'location.latitude', issue: 'must be between -90 and 90' });
      if (!(Math.abs(location.longitude) <= 180))
        issues.push({ field: 'location.longitude', issue: 'must be between -180 and 180' });
      content = { type, location };
      break;
    }
    case 'contacts':
      if (!input.contacts) {
        issues.push({ field: 'contacts', issue: 'is required with type contacts' });
        break;
      }
      issues.push(...contactsIssues(input.contacts));
      content = { type, contacts: input.contacts };
      break;
    case 'reaction': {
      const reaction = input.reaction;
      if (!reaction) {
        issues.push({ field: 'reaction', issue: 'is required with type reaction' });
        break;
      }
      const problem = emojiIssue(reaction.emoji);
      if (problem) issues.push({ field: 'reaction.emoji', issue: problem });
      // A reaction shows on the message it names: it quotes nothing.
      if (input.context !== undefined) issues.push({ field: 'context', issue: 'is not for type reaction' });
      content = { type, reaction };
      break;
    }
  }
  return issues.length > before ? null : content;
}

/** A media send names its file by `url` or by `id` (an upload, med_…), exactly one of the two. */
function mediaSourceIssues(media: { url?: string; id?: string }): FieldIssue[] {
  if (media.url !== undefined && media.id !== undefined)
    return [{ field: 'media.id', issue: 'give either media.url or media.id, not both' }];
  if (media.id !== undefined)
    return /^med_[0-9a-z]{26}$/.test(media.id)
      ? []
      : [{ field: 'media.id', issue: 'must be a media id (med_…)' }];
  if (media.url === undefined)
    return [{ field: 'media.url', issue: 'is required unless media.id names an upload' }];
  return /^https?:\/\//i.test(media.url)
    ? []
    : [{ field: 'media.url', issue: 'must be an http or https link' }];
}
