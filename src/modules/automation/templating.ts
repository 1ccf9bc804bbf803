// Text templating of automation (Liquid): `{{ contact.name }}`, `{{ contact.attributes.plan }}`,
// `{{ event.data.… }}`, `{{ run.vars.… }}`. Strict: an unknown variable or filter is an error, which
// fails the action or step with its reason rather than sending "Hi ," to a customer. A template is
// parsed when the rule or sequence is saved (a syntax error is a 400 there) and again, from a
// cache, when it runs. No file system: `include` and `render` find no templates. Bounded: a
// template renders within RENDER_LIMIT_MS and a limited allocation, so a loop cannot hold a worker.
import { Liquid, type Template } from 'liquidjs';
import { registerDateFilters } from './liquid-dates.ts';

const RENDER_LIMIT_MS = 100;
const MAX_TEMPLATE_LENGTH = 4096;
const CACHE_SIZE = 1000;

const engine = new Liquid({
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  // In-memory partials, and none of them: no template reads a file.
  templates: {},
  parseLimit: MAX_TEMPLATE_LENGTH,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: 1e6,
});
registerDateFilters(engine);

const parsed = new Map<string, Template[]>();

function parse(text: string): Template[] {
  let templates = parsed.get(text);
  if (!templates) {
    templates = engine.parse(text);
    if (parsed.size >= CACHE_SIZE) parsed.delete(parsed.keys().next().value!);
    parsed.set(text, templates);
  }
  return templates;
}

/** Whether a text uses Liquid at all (a plain text is sent as it is). */
export function isTemplated(text: string): boolean {
  return text.includes('{{') || text.includes('{%');
}

/** The syntax error of a template, or null. */
export function templateProblem(text: string): string | null {
  if (!isTemplated(text)) return null;
  try {
    parse(text);
    return null;
  } catch (err) {
    return `is not a valid Liquid template: ${firstLine(err)}`;
  }
}

export class TemplateError extends Error {}

/** Renders a text with the scope; throws TemplateError naming what was missing or wrong. */
export async function render(text: string, scope: object): Promise<string> {
  if (!isTemplated(text)) return text;
  try {
    return await engine.render(parse(text), scope);
  } catch (err) {
    throw new TemplateError(firstLine(err));
  }
}

function firstLine(err: unknown): string {
  return String((err as Error).message ?? err).split('\n')[0]!;
}
