// The rules of a NAMED template (`parameterFormat: "NAMED"`), as the WhatsApp Cloud API applies
// them: placeholders are names, {{first_name}} (lowercase letters, digits and underscores, from a
// letter), each
// used once in the template, never at the very start or end of the body nor side by side, with one
// example each in Meta's `body_text_named_params` / `header_text_named_params` ({param_name,
// example}). A send gives their values as an object by name.
//
// What Tidings does not take in a NAMED template: a media header and a URL button with a
// placeholder (a send's values are all by name, and those two are filled by position), and the
// AUTHENTICATION category (Meta's one-time-password templates are positional).
import type { NamedExample, TemplateComponent } from '../../channels/types.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';

// A name starts with a letter: {{1}} stays a numbered placeholder, wrong in a NAMED template.
const NAMED = /\{\{([a-z][a-z0-9_]*)\}\}/g;
const AT_START = /^[\s\p{P}~]*?\{\{[a-z][a-z0-9_]*\}\}/u;
const AT_END = /\{\{[a-z][a-z0-9_]*\}\}[\s\p{P}~]*$/u;
const ADJACENT = /\{\{([a-z][a-z0-9_]*)\}\}\s*\{\{([a-z][a-z0-9_]*)\}\}/;

/** The placeholder names of a text in order of appearance (repeats kept), or why it is malformed. */
export function namesIn(text: string): { names: string[]; malformed: string | null } {
  const names = [...text.matchAll(NAMED)].map((m) => m[1]!);
  const rest = text.replace(NAMED, '\uE000');
  const token = /\{\{([^{}]*)\}\}/.exec(rest);
  if (token) {
    const inner = token[1]!.trim();
    const issue = /^[0-9]+$/.test(inner)
      ? `uses the numbered placeholder "${token[0]}" in a NAMED template: name it, e.g. {{first_name}}`
      : `has a malformed placeholder "${token[0]}": a name is lowercase letters, digits and underscores, starting with a letter, without spaces, e.g. {{first_name}}`;
    return { names, malformed: issue };
  }
  if (/\{\{|\}\}|\{\uE000|\uE000\}/.test(rest)) {
    return { names, malformed: 'has unbalanced curly braces: write placeholders as {{first_name}}' };
  }
  return { names, malformed: null };
}

export interface NamedContext {
  issues: FieldIssue[];
  /** Every name used so far in the template (header first, then body). */
  names: string[];
}

/** Checks the examples Meta wants for `names`: one {param_name, example} per name, nothing else. */
function checkExamples(
  ctx: NamedContext,
  names: string[],
  examples: NamedExample[] | undefined,
  field: string,
  what: string,
) {
  if (names.length === 0) {
    if (examples !== undefined)
      ctx.issues.push({ field, issue: `must be left out: the ${what} has no placeholder` });
    return;
  }
  if (!examples) {
    ctx.issues.push({
      field,
      issue: `is required: one {param_name, example} per placeholder, e.g. [${names.map((n) => `{"param_name": "${n}", "example": "…"}`).join(', ')}]`,
    });
    return;
  }
  const given = examples.map((e) => e.param_name);
  for (const [i, name] of given.entries()) {
    if (!names.includes(name)) {
      ctx.issues.push({
        field: `${field}[${i}].param_name`,
        issue: `names no placeholder of the ${what} ("${name}")`,
      });
    } else if (given.indexOf(name) !== i) {
      ctx.issues.push({
        field: `${field}[${i}].param_name`,
        issue: `repeats "${name}": one example per placeholder`,
      });
    }
  }
  for (const name of names) {
    if (!given.includes(name)) ctx.issues.push({ field, issue: `lacks an example for {{${name}}}` });
  }
}

/** Names used twice in the template: Meta wants each placeholder once. */
function checkUnique(ctx: NamedContext, names: string[], field: string) {
  for (const [i, name] of names.entries()) {
    if (names.indexOf(name) !== i || ctx.names.includes(name)) {
      ctx.issues.push({
        field,
        issue: `uses {{${name}}} more than once: each placeholder may appear only once`,
      });
      return;
    }
  }
}

export function checkNamedHeader(
  ctx: NamedContext,
  c: Extract<TemplateComponent, { type: 'HEADER' }>,
  at: string,
): number {
  if (c.format !== 'TEXT') {
    ctx.issues.push({
      field: `${at}.format`,
      issue: 'must be TEXT in a NAMED template: Tidings fills a media header by position; use POSITIONAL',
    });
    return 0;
  }
  if (c.example?.header_text !== undefined) {
    ctx.issues.push({
      field: `${at}.example.header_text`,
      issue: 'is for POSITIONAL templates: use header_text_named_params',
    });
  }
  if (c.text === undefined || c.text.trim() === '') {
    ctx.issues.push({ field: `${at}.text`, issue: 'is required for a TEXT header' });
    return 0;
  }
  if ([...c.text].length > 60)
    ctx.issues.push({ field: `${at}.text`, issue: 'must be at most 60 characters' });
  if (/[\r\n]/.test(c.text)) ctx.issues.push({ field: `${at}.text`, issue: 'may not contain line breaks' });
  const { names, malformed } = namesIn(c.text);
  if (malformed) {
    ctx.issues.push({ field: `${at}.text`, issue: malformed });
    return 0;
  }
  if (names.length > 1) ctx.issues.push({ field: `${at}.text`, issue: 'may hold at most one placeholder' });
  checkExamples(
    ctx,
    names,
    c.example?.header_text_named_params,
    `${at}.example.header_text_named_params`,
    'header',
  );
  ctx.names.push(...names);
  return names.length;
}

export function checkNamedBody(
  ctx: NamedContext,
  c: Extract<TemplateComponent, { type: 'BODY' }>,
  at: string,
): number {
  const field = `${at}.text`;
  if (c.text.trim() === '') {
    ctx.issues.push({ field, issue: 'may not be empty' });
    return 0;
  }
  if ([...c.text].length > 1024) ctx.issues.push({ field, issue: 'must be at most 1024 characters' });
  const { names, malformed } = namesIn(c.text);
  if (malformed) {
    ctx.issues.push({ field, issue: malformed });
    return 0;
  }
  checkUnique(ctx, names, field);
  if (AT_START.test(c.text))
    ctx.issues.push({ field, issue: 'may not start with a placeholder: begin with fixed text' });
  if (AT_END.test(c.text))
    ctx.issues.push({ field, issue: 'may not end with a placeholder: end with fixed text' });
  const adjacent = ADJACENT.exec(c.text);
  if (adjacent) {
    ctx.issues.push({
      field,
      issue: `has {{${adjacent[1]}}} and {{${adjacent[2]}}} side by side: put fixed text between placeholders`,
    });
  }
  if (c.example?.body_text !== undefined) {
    ctx.issues.push({
      field: `${at}.example.body_text`,
      issue: 'is for POSITIONAL templates: use body_text_named_params',
    });
  }
  const distinct = [...new Set(names)];
  checkExamples(
    ctx,
    distinct,
    c.example?.body_text_named_params,
    `${at}.example.body_text_named_params`,
    'body',
  );
  ctx.names.push(...distinct);
  return distinct.length;
}

/** The named examples belong to NAMED templates only. */
export function positionalMisuse(c: TemplateComponent, at: string): FieldIssue[] {
  if (c.type === 'HEADER' && c.example?.header_text_named_params !== undefined) {
    return [
      {
        field: `${at}.example.header_text_named_params`,
        issue: 'is only for NAMED templates (parameterFormat NAMED)',
      },
    ];
  }
  if (c.type === 'BODY' && c.example?.body_text_named_params !== undefined) {
    return [
      {
        field: `${at}.example.body_text_named_params`,
        issue: 'is only for NAMED templates (parameterFormat NAMED)',
      },
    ];
  }
  return [];
}

/** The placeholder names of a NAMED template (header first, then body), each once. */
export function templateNames(components: TemplateComponent[]): string[] {
  const names: string[] = [];
  for (const c of components) {
    if ((c.type === 'HEADER' && c.format === 'TEXT') || c.type === 'BODY') {
      for (const name of namesIn(c.text ?? '').names) if (!names.includes(name)) names.push(name);
    }
  }
  return names;
}
