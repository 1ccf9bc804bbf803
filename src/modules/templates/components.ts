// The rules a WhatsApp message template must follow before it can be submitted, as the WhatsApp
// Cloud API applies them: its name, language and category, and its components (HEADER, BODY,
// FOOTER, BUTTONS, in that order) with their limits and placeholder rules. checkTemplate reports
// every problem at once, each with its exact field (`components[1].text`).
//
// The parameters a send gives fill the placeholders positionally, in this order: the header's
// {{1}}, then the body's {{1}}…{{n}}, then each URL button's {{1}} in button order.
import type {
  TemplateButton,
  TemplateCategory,
  TemplateComponent,
  TemplateDefinition,
} from '../../channels/types.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { invalidFields } from '../contacts/index.ts';
import { languageHint, TEMPLATE_LANGUAGES } from './languages.ts';
import { checkNamedBody, checkNamedHeader, type NamedContext, positionalMisuse } from './named.ts';

export const LIMITS = {
  name: 512,
  headerText: 60,
  body: 1024,
  footer: 60,
  buttons: 10,
  buttonText: 25,
  urlButtons: 2,
  url: 2000,
  phoneButtons: 1,
  phoneNumber: 20,
  exampleValue: 1024,
} as const;

export const CATEGORIES: readonly TemplateCategory[] = ['MARKETING', 'UTILITY', 'AUTHENTICATION'];
export const NAME_PATTERN = /^[a-z0-9_]+$/;
const ORDER = ['HEADER', 'BODY', 'FOOTER', 'BUTTONS'] as const;

export interface CheckedTemplate {
  definition: TemplateDefinition;
  /** Header, body and URL-button placeholders: how many `parameters` a send must give. */
  parameterCount: number;
}

/** Characters as Meta (and JSON Schema's maxLength) count them: code points. */
const lengthOf = (text: string) => [...text].length;

const VALID = /\{\{([1-9][0-9]*)\}\}/g;
// What may stand between a text's edge and a placeholder for it still to count as at the edge.
const AT_START = /^[\s\p{P}~]*?\{\{[1-9][0-9]*\}\}/u;
const AT_END = /\{\{[1-9][0-9]*\}\}[\s\p{P}~]*$/u;
const ADJACENT = /\{\{([1-9][0-9]*)\}\}\s*\{\{([1-9][0-9]*)\}\}/;

interface Placeholders {
  /** The numbers of the well-formed placeholders, in order of appearance. */
  numbers: number[];
  /** Why the text's curly braces are not all well-formed placeholders, or null. */
  malformed: string | null;
}

function placeholdersOf(text: string): Placeholders {
  const numbers = [...text.matchAll(VALID)].map((m) => Number(m[1]));
  const rest = text.replace(VALID, '\uE000');
  let malformed: string | null = null;
  const token = /\{\{([^{}]*)\}\}/.exec(rest);
  if (token) {
    const inner = token[1]!.trim();
    malformed = /^[A-Za-z_][A-Za-z0-9_]*$/.test(inner)
      ? `uses the named placeholder "${token[0]}" in a POSITIONAL template: number it ({{1}}, {{2}}, …) or set parameterFormat NAMED`
      : `has a malformed placeholder "${token[0]}": write placeholders as {{1}}, {{2}}, … (digits from 1, no spaces)`;
  } else if (/\{\{|\}\}|\{\uE000|\uE000\}/.test(rest)) {
    malformed = 'has unbalanced curly braces: write placeholders as {{1}}, {{2}}, …';
  }
  return { numbers, malformed };
}

/** Problems with the numbering of placeholders: from 1, in order, each once, without gaps. */
function numberingProblem(numbers: number[]): string | null {
  const repeated = numbers.find((n, i) => numbers.indexOf(n) !== i);
  if (repeated !== undefined)
    return `uses {{${repeated}}} more than once: each placeholder may appear only once`;
  const sorted = [...numbers].sort((a, b) => a - b);
  if (sorted.some((n, i) => n !== i + 1)) {
    return `must number its placeholders from {{1}} without gaps (it has ${sorted.map((n) => `{{${n}}}`).join(', ')})`;
  }
  if (numbers.some((n, i) => n !== i + 1))
    return 'must use its placeholders in order: {{1}} first, then {{2}}, …';
  return null;
}

interface Context {
  issues: FieldIssue[];
  category: TemplateCategory;
  parameters: number;
  /** Set for a NAMED template: its rules (named.ts) replace the positional ones. */
  named: NamedContext | null;
}

function add(ctx: Context, field: string, issue: string) {
  ctx.issues.push({ field, issue });
}

function isUrl(text: string, protocols: string[]): boolean {
  try {
    const url = new URL(text);
    return protocols.includes(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}

function checkHeader(ctx: Context, c: Extract<TemplateComponent, { type: 'HEADER' }>, at: string) {
  const example = c.example ?? {};
  if (c.format !== 'TEXT') {
    if (ctx.category === 'AUTHENTICATION') {
      add(ctx, `${at}.format`, 'must be TEXT: AUTHENTICATION templates may not have a media header');
    }
    if (c.text !== undefined) add(ctx, `${at}.text`, 'is only for TEXT headers');
    if (example.header_text !== undefined) add(ctx, `${at}.example.header_text`, 'is only for TEXT headers');
    // Meta wants a sample of the media for review: an upload handle from its Resumable Upload
    // API (the sandbox also takes an https URL). The media each message shows is its own: the
    // link is the first of a send's parameters.
    const handle = example.header_handle?.[0];
    if (handle === undefined) {
      add(
        ctx,
        `${at}.example.header_handle`,
        `is required: a sample ${c.format.toLowerCase()} (a Meta upload handle, or an https URL in the sandbox)`,
      );
    } else if (handle.trim() === '' || handle.length > 2000) {
      add(ctx, `${at}.example.header_handle[0]`, 'must be 1–2000 characters');
    }
    ctx.parameters += 1;
    return;
  }
  if (example.header_handle !== undefined) {
    add(ctx, `${at}.example.header_handle`, 'is only for IMAGE, VIDEO and DOCUMENT headers');
  }
  if (c.text === undefined || c.text.trim() === '') {
    add(ctx, `${at}.text`, 'is required for a TEXT header');
    return;
  }
  const field = `${at}.text`;
  if (lengthOf(c.text) > LIMITS.headerText)
    add(ctx, field, `must be at most ${LIMITS.headerText} characters`);
  if (/[\r\n]/.test(c.text)) add(ctx, field, 'may not contain line breaks');
  const { numbers, malformed } = placeholdersOf(c.text);
  if (malformed) return add(ctx, field, malformed);
  if (numbers.length > 1) return add(ctx, field, 'may hold at most one placeholder, {{1}}');
  if (numbers.length === 1 && numbers[0] !== 1) return add(ctx, field, 'may only use the placeholder {{1}}');
  if (numbers.length === 1 && ctx.category === 'AUTHENTICATION') {
    return add(
      ctx,
      field,
      'may not hold a placeholder: in AUTHENTICATION templates the code is the only parameter',
    );
  }
  const values = example.header_text;
  if (numbers.length === 0) {
    if (values !== undefined)
      add(ctx, `${at}.example.header_text`, 'must be left out: the header has no placeholder');
  } else if (values?.length !== 1) {
    add(ctx, `${at}.example.header_text`, 'is required: one example value for {{1}}, e.g. ["Summer sale"]');
  }
  ctx.parameters += numbers.length;
}

function checkBody(ctx: Context, c: Extract<TemplateComponent, { type: 'BODY' }>, at: string) {
  const field = `${at}.text`;
  if (c.text.trim() === '') return add(ctx, field, 'may not be empty');
  if (lengthOf(c.text) > LIMITS.body) add(ctx, field, `must be at most ${LIMITS.body} characters`);
  const { numbers, malformed } = placeholdersOf(c.text);
  if (malformed) return add(ctx, field, malformed);
  const numbering = numberingProblem(numbers);
  if (numbering) add(ctx, field, numbering);
  // Meta's own one-time-password body is "{{1}} is your verification code.": exempt from the edges rule.
  if (ctx.category !== 'AUTHENTICATION') {
    if (AT_START.test(c.text)) add(ctx, field, 'may not start with a placeholder: begin with fixed text');
    if (AT_END.test(c.text)) add(ctx, field, 'may not end with a placeholder: end with fixed text');
  }
  const adjacent = ADJACENT.exec(c.text);
  if (adjacent) {
    add(
      ctx,
      field,
      `has {{${adjacent[1]}}} and {{${adjacent[2]}}} side by side: put fixed text between placeholders`,
    );
  }
  if (ctx.category === 'AUTHENTICATION' && numbers.length !== 1) {
    add(ctx, field, 'must hold exactly one placeholder, {{1}}, in an AUTHENTICATION template: the code');
  }
  const examples = c.example?.body_text;
  if (numbering) {
    // How many example values it needs is unclear until its placeholders are numbered right.
  } else if (numbers.length === 0) {
    if (c.example !== undefined) add(ctx, `${at}.example`, 'must be left out: the body has no placeholders');
  } else if (!examples?.[0]) {
    add(
      ctx,
      `${at}.example.body_text`,
      `is required: one list with an example value per placeholder, e.g. [[${numbers.map((n) => `"value ${n}"`).join(', ')}]]`,
    );
  } else {
    if (examples.length > 1)
      add(ctx, `${at}.example.body_text`, 'must hold exactly one list of example values');
    if (examples[0].length !== numbers.length) {
      add(
        ctx,
        `${at}.example.body_text[0]`,
        `must hold exactly ${numbers.length} value(s), one per placeholder (it holds ${examples[0].length})`,
      );
    }
  }
  ctx.parameters += numbers.length;
}

function checkFooter(ctx: Context, c: Extract<TemplateComponent, { type: 'FOOTER' }>, at: string) {
  const field = `${at}.text`;
  if (c.text.trim() === '') return add(ctx, field, 'may not be empty');
  if (lengthOf(c.text) > LIMITS.footer) add(ctx, field, `must be at most ${LIMITS.footer} characters`);
  if (/[\r\n]/.test(c.text)) add(ctx, field, 'may not contain line breaks');
  if (/\{\{|\}\}/.test(c.text)) add(ctx, field, 'may not contain placeholders');
}

function checkUrlButton(ctx: Context, b: Extract<TemplateButton, { type: 'URL' }>, at: string) {
  const field = `${at}.url`;
  if (lengthOf(b.url) > LIMITS.url) add(ctx, field, `must be at most ${LIMITS.url} characters`);
  const { numbers, malformed } = placeholdersOf(b.url);
  if (malformed) return add(ctx, field, malformed);
  if (numbers.length > 1 || (numbers.length === 1 && numbers[0] !== 1)) {
    return add(ctx, field, 'may hold only one placeholder, {{1}}, at its end');
  }
  if (numbers.length === 1 && !b.url.endsWith('{{1}}')) {
    return add(ctx, field, 'may hold its placeholder {{1}} only at its end');
  }
  const fixed = b.url.replace(VALID, '');
  if (!isUrl(numbers.length === 1 ? `${fixed}a` : fixed, ['http:', 'https:'])) {
    return add(ctx, field, 'must be an http or https URL');
  }
  if (numbers.length === 1 && ctx.named) {
    return add(
      ctx,
      field,
      'may not hold a placeholder in a NAMED template: Tidings fills URL buttons by position; use POSITIONAL',
    );
  }
  if (numbers.length === 1) {
    // The value may complete a path or a query, never the host: the link must show where it goes.
    if (new URL(`${fixed}a`).host !== new URL(`${fixed}b`).host) {
      return add(
        ctx,
        field,
        'must name its host before the placeholder, e.g. https://example.com/orders/{{1}}',
      );
    }
    if (ctx.category === 'AUTHENTICATION') {
      add(
        ctx,
        field,
        'may not hold a placeholder: in AUTHENTICATION templates the code is the only parameter',
      );
    }
    if (b.example?.length !== 1) {
      add(
        ctx,
        `${at}.example`,
        'is required: the full URL with an example value, e.g. ["https://example.com/orders/123"]',
      );
    } else if (!isUrl(b.example[0]!, ['http:', 'https:'])) {
      add(ctx, `${at}.example[0]`, 'must be the full http or https URL with an example value');
    }
    ctx.parameters += 1;
  } else if (b.example !== undefined) {
    add(ctx, `${at}.example`, 'must be left out: the URL has no placeholder');
  }
}

function checkButtons(ctx: Context, c: Extract<TemplateComponent, { type: 'BUTTONS' }>, at: string) {
  const buttons = c.buttons;
  if (buttons.length < 1 || buttons.length > LIMITS.buttons) {
    add(ctx, `${at}.buttons`, `must hold 1–${LIMITS.buttons} buttons`);
  }
  const count = (type: TemplateButton['type']) => buttons.filter((b) => b.type === type).length;
  if (count('URL') > LIMITS.urlButtons)
    add(ctx, `${at}.buttons`, `may hold at most ${LIMITS.urlButtons} URL buttons`);
  if (count('PHONE_NUMBER') > LIMITS.phoneButtons) {
    add(ctx, `${at}.buttons`, `may hold at most ${LIMITS.phoneButtons} PHONE_NUMBER button`);
  }
  // Quick replies form one group, before or after the other buttons, never mixed in between.
  const isReply = (b: TemplateButton) => b.type === 'QUICK_REPLY';
  const split = buttons.findIndex(
    (b, j) =>
      j > 1 &&
      isReply(b) !== isReply(buttons[j - 1]!) &&
      buttons.slice(0, j - 1).some((a) => isReply(a) === isReply(b)),
  );
  if (split > 0) {
    add(
      ctx,
      `${at}.buttons[${split}]`,
      'must not split the quick replies: group them before or after the other buttons',
    );
  }
  buttons.forEach((b, j) => {
    const field = `${at}.buttons[${j}]`;
    if (b.text.trim() === '') add(ctx, `${field}.text`, 'may not be empty');
    if (lengthOf(b.text) > LIMITS.buttonText)
      add(ctx, `${field}.text`, `must be at most ${LIMITS.buttonText} characters`);
    if (/\{\{|\}\}/.test(b.text)) add(ctx, `${field}.text`, 'may not contain placeholders');
    if (b.type === 'URL') checkUrlButton(ctx, b, field);
    if (b.type === 'PHONE_NUMBER') {
      if (ctx.category === 'AUTHENTICATION') {
        add(ctx, field, 'is not allowed: AUTHENTICATION templates may not have PHONE_NUMBER buttons');
      } else if (
        lengthOf(b.phone_number) > LIMITS.phoneNumber ||
        !/^\+?[1-9][0-9]{6,18}$/.test(b.phone_number)
      ) {
        add(ctx, `${field}.phone_number`, 'must be a phone number with its country code, e.g. +14155550123');
      }
    }
  });
}

/**
 * Checks a template as the WhatsApp Cloud API would before accepting it for review. Throws
 * INVALID_REQUEST listing every problem, each with its field; answers the definition and how many
 * parameters a send must give.
 */
export function checkTemplate(input: TemplateDefinition): CheckedTemplate {
  const issues: FieldIssue[] = [];
  if (lengthOf(input.name) > LIMITS.name || !NAME_PATTERN.test(input.name)) {
    issues.push({
      field: 'name',
      issue: `must be 1–${LIMITS.name} lowercase letters, digits or underscores, e.g. order_update`,
    });
  }
  if (!TEMPLATE_LANGUAGES.has(input.language)) {
    const hint = languageHint(input.language);
    issues.push({
      field: 'language',
      issue: hint
        ? `is not written as Meta writes template language codes: use ${hint}`
        : 'is not a language code the WhatsApp Cloud API supports for templates (e.g. en, en_US, pt_BR)',
    });
  }
  if (!CATEGORIES.includes(input.category)) {
    issues.push({ field: 'category', issue: `must be one of ${CATEGORIES.join(', ')}` });
  }
  const format = input.parameterFormat ?? 'POSITIONAL';
  if (format === 'NAMED' && input.category === 'AUTHENTICATION') {
    issues.push({
      field: 'parameterFormat',
      issue: 'must be POSITIONAL for an AUTHENTICATION template: its one parameter is the code, {{1}}',
    });
  }
  const ctx: Context = {
    issues,
    category: input.category,
    parameters: 0,
    named: format === 'NAMED' ? { issues, names: [] } : null,
  };
  const seen = new Set<string>();
  let rank = -1;
  for (const [i, c] of input.components.entries()) {
    const at = `components[${i}]`;
    const position = ORDER.indexOf(c.type);
    if (position < 0) {
      add(ctx, `${at}.type`, `must be one of ${ORDER.join(', ')}`);
      continue;
    }
    if (seen.has(c.type)) {
      add(ctx, `${at}.type`, `is repeated: a template has at most one ${c.type}`);
      continue;
    }
    seen.add(c.type);
    if (position < rank) add(ctx, `${at}.type`, `is out of order: components go ${ORDER.join(', ')}`);
    rank = Math.max(rank, position);
    if (!ctx.named) issues.push(...positionalMisuse(c, at));
    if (c.type === 'HEADER' && ctx.named) ctx.parameters += checkNamedHeader(ctx.named, c, at);
    else if (c.type === 'BODY' && ctx.named) ctx.parameters += checkNamedBody(ctx.named, c, at);
    else if (c.type === 'HEADER') checkHeader(ctx, c, at);
    else if (c.type === 'BODY') checkBody(ctx, c, at);
    else if (c.type === 'FOOTER') checkFooter(ctx, c, at);
    else checkButtons(ctx, c, at);
  }
  if (!seen.has('BODY')) add(ctx, 'components', 'must include a BODY');
  if (issues.length > 0) throw invalidFields(issues);
  return {
    definition: {
      name: input.name,
      language: input.language,
      category: input.category,
      components: input.components,
      parameterFormat: format,
    },
    parameterCount: ctx.parameters,
  };
}
