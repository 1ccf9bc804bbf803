// Tidings' outbound message and template shapes turned into the JSON bodies the Graph API takes
// (POST /{phone-number-id}/messages and POST /{waba-id}/message_templates). Pure functions: no I/O,
// no validation beyond what the shapes need (content reaching here was validated when accepted).
import { isPhoneAddress } from '../../kernel/values/whatsapp-user-ids.ts';
import type {
  MessageContent,
  OutboundInteractive,
  OutboundMessage,
  QuickReplyPayload,
  TemplateComponent,
  TemplateDefinition,
} from '../types.ts';

type Json = Record<string, unknown>;

/** The distinct positional placeholders ({{1}}, {{2}}, …) in a template text. */
export function placeholderCount(text: string | undefined): number {
  if (!text) return 0;
  return new Set(Array.from(text.matchAll(/\{\{\s*(\d+)\s*\}\}/g), (m) => m[1])).size;
}

/** The body of POST /{phone-number-id}/messages for one message. */
export function messageBody(message: OutboundMessage): Json {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    // A number in `to`, E.164 with its +: without the +, Meta prepends the business number's own
    // country code. A business-scoped user id in `recipient` (Meta drops one put in `to` without a
    // word: docs/history/issue-45-meta-identity.md § 7), exactly as Meta gave it.
    ...(isPhoneAddress(message.to) ? { to: message.to } : { recipient: message.to }),
    ...contentFields(message.content),
    // A quoted reply: Meta shows the earlier message (its wamid) above this one.
    ...(message.replyTo ? { context: { message_id: message.replyTo } } : {}),
    // Meta echoes it in every status callback of the message: the callback names our message even
    // when the answer carrying Meta's id was lost (a crash or a timeout mid-send; dispatch.ts).
    biz_opaque_callback_data: message.id,
  };
}

function contentFields(content: MessageContent): Json {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: { body: content.text.body, preview_url: content.text.previewUrl } };
    case 'media': {
      const { kind, url, providerMediaId, caption, filename } = content.media;
      // An upload goes by Meta's id for it (modules/media gives one before the hand-over).
      const media: Json = providerMediaId ? { id: providerMediaId } : { link: url };
      // Meta takes a caption on image, video and document, a filename on document only.
      if (caption !== undefined && kind !== 'audio' && kind !== 'sticker') media.caption = caption;
      if (filename !== undefined && kind === 'document') media.filename = filename;
      return { type: kind, [kind]: media };
    }
    case 'interactive':
      return { type: 'interactive', interactive: interactiveObject(content.interactive) };
    case 'location': {
      const { latitude, longitude, name, address } = content.location;
      const location: Json = { latitude, longitude };
      if (name !== undefined) location.name = name;
      if (address !== undefined) location.address = address;
      return { type: 'location', location };
    }
    case 'contacts':
      // Stored in Meta's own shape (modules/messages/content.ts checked it).
      return { type: 'contacts', contacts: content.contacts };
    case 'reaction':
      return {
        type: 'reaction',
        reaction: { message_id: content.reaction.providerMessageId, emoji: content.reaction.emoji },
      };
    case 'template': {
      const { name, language, components, parameters, buttonPayloads } = content.template;
      const filled = [
        ...(Array.isArray(parameters)
          ? templateComponents(components, parameters)
          : namedTemplateComponents(components, parameters)),
        ...quickReplyComponents(buttonPayloads ?? []),
      ];
      const template: Json = { name, language: { code: language } };
      if (filled.length > 0) template.components = filled;
      return { type: 'template', template };
    }
  }
}

function interactiveObject(interactive: OutboundInteractive): Json {
  // Meta's request_contact_info (named contact_request until May 2026): the button's label is
  // WhatsApp's own, in the customer's language.
  if (interactive.kind === 'contact_request') {
    return {
      type: 'request_contact_info',
      body: { text: interactive.body },
      action: { name: 'request_contact_info' },
    };
  }
  if (interactive.kind === 'location_request') {
    return {
      type: 'location_request_message',
      body: { text: interactive.body },
      action: { name: 'send_location' },
    };
  }
  const common: Json = {};
  if (interactive.header !== undefined) common.header = { type: 'text', text: interactive.header };
  common.body = { text: interactive.body };
  if (interactive.footer !== undefined) common.footer = { text: interactive.footer };
  if (interactive.kind === 'cta_url') {
    return {
      type: 'cta_url',
      ...common,
      action: {
        name: 'cta_url',
        parameters: { display_text: interactive.button.text, url: interactive.button.url },
      },
    };
  }
  if (interactive.kind === 'buttons') {
    return {
      type: 'button',
      ...common,
      action: {
        buttons: interactive.buttons.map((b) => ({ type: 'reply', reply: { id: b.id, title: b.title } })),
      },
    };
  }
  return {
    type: 'list',
    ...common,
    action: {
      button: interactive.buttonText,
      sections: interactive.sections.map((section) => ({
        ...(section.title !== undefined ? { title: section.title } : {}),
        rows: section.rows.map((row) => ({
          id: row.id,
          title: row.title,
          ...(row.description !== undefined ? { description: row.description } : {}),
        })),
      })),
    },
  };
}

const text = (value: string) => ({ type: 'text', text: value });

/**
 * The template's send-time components: the flat positional parameters are dealt out in the order
 * Tidings documents them (a TEXT header's placeholder, the body's {{1}}..{{n}}, then one per URL
 * button with a {{1}} in its url). A media header takes its example URL rather than a parameter.
 * Components with nothing to fill are left out, as Meta expects.
 */
export function templateComponents(components: TemplateComponent[], parameters: string[]): Json[] {
  let next = 0;
  const take = (count: number) => {
    const taken = parameters.slice(next, next + count);
    next += count;
    return taken;
  };
  const header = components.find((c) => c.type === 'HEADER');
  const body = components.find((c) => c.type === 'BODY');
  const buttons = components.find((c) => c.type === 'BUTTONS');
  const out: Json[] = [];

  if (header?.format === 'TEXT') {
    const values = take(Math.min(1, placeholderCount(header.text)));
    if (values.length > 0) out.push({ type: 'header', parameters: values.map(text) });
  } else if (header) {
    // A media header's link is the send's first parameter (the template holds only Meta's sample).
    const kind = header.format.toLowerCase();
    const [link] = take(1);
    if (link !== undefined) out.push({ type: 'header', parameters: [{ type: kind, [kind]: { link } }] });
  }

  if (body) {
    const values = take(placeholderCount(body.text));
    if (values.length > 0) out.push({ type: 'body', parameters: values.map(text) });
  }

  buttons?.buttons.forEach((button, index) => {
    if (button.type !== 'URL' || placeholderCount(button.url) === 0) return;
    const values = take(1);
    if (values.length === 0) return;
    out.push({ type: 'button', sub_type: 'url', index: String(index), parameters: values.map(text) });
  });
  return out;
}

/** The distinct named placeholders ({{first_name}}) of a text, in order of first appearance. */
export function placeholderNames(text: string | undefined): string[] {
  if (!text) return [];
  return [...new Set(Array.from(text.matchAll(/\{\{\s*([a-z][a-z0-9_]*)\s*\}\}/g), (m) => m[1]!))];
}

/**
 * A NAMED template's send-time components: each of the header's and the body's placeholders by
 * its name, `{type: "text", parameter_name, text}`, as Meta takes them (the order does not matter
 * to Meta; the template's is kept).
 */
export function namedTemplateComponents(
  components: TemplateComponent[],
  parameters: Record<string, string>,
): Json[] {
  const out: Json[] = [];
  const named = (text: string | undefined) =>
    placeholderNames(text).flatMap((name) =>
      parameters[name] === undefined ? [] : [{ type: 'text', parameter_name: name, text: parameters[name] }],
    );
  const header = components.find((c) => c.type === 'HEADER');
  if (header?.format === 'TEXT') {
    const values = named(header.text);
    if (values.length > 0) out.push({ type: 'header', parameters: values });
  }
  const body = components.find((c) => c.type === 'BODY');
  const values = named(body?.text);
  if (values.length > 0) out.push({ type: 'body', parameters: values });
  return out;
}

/** The payloads a send gives quick-reply buttons, each by the button's index in the template. */
export function quickReplyComponents(payloads: QuickReplyPayload[]): Json[] {
  return payloads.map((p) => ({
    type: 'button',
    sub_type: 'quick_reply',
    index: String(p.index),
    parameters: [{ type: 'payload', payload: p.payload }],
  }));
}

/**
 * The body of POST /{waba-id}/message_templates: our stored components are Meta's own JSON; a
 * NAMED template says so (`parameter_format`), POSITIONAL being Meta's default.
 */
export function templateSubmissionBody(template: TemplateDefinition): Json {
  return {
    name: template.name,
    language: template.language,
    category: template.category,
    ...(template.parameterFormat === 'NAMED' ? { parameter_format: 'NAMED' } : {}),
    components: template.components,
  };
}
