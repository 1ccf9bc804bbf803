// Text templating of automation (Liquid): `{{ contact.name }}`, `{{ contact.attributes.plan }}`,
// `{{ event.data.… }}`, `{{ run.vars.… }}`. Strict: an unknown variable or filter is an error, which
// fails the action or step with its reason rather than sending "Hi ," to a customer. A template is
// parsed when the rule or sequence is saved (a syntax error is a 400 there) and again, from a
// cache, when it runs. No file system: `include` and `render` find no templates. Bounded: a
// template renders within RENDER_LIMIT_MS and a limited allocation, so a loop cannot hold a worker,
// and its output is counted while it is written (render-budget.ts), so a loop over a long value stops at
// the size its field takes instead of building the whole text first.
import { Context, Liquid, type Template, toPromise } from 'liquidjs';
import { registerDateFilters } from './liquid-dates.ts';
import { OutputBudget, OutputEmitter } from './render-budget.ts';

export { OutputBudget } from './render-budget.ts';

const RENDER_LIMIT_MS = 100;
const MAX_TEMPLATE_LENGTH = 4096;
/** What one rendering may allocate, its output included (every emitter's, captures too). */
const MEMORY_LIMIT = 1e6;
const CACHE_SIZE = 1000;

const engine = new Liquid({
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  // In-memory partials, and none of them: no template reads a file.
  templates: {},
  parseLimit: MAX_TEMPLATE_LENGTH,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: MEMORY_LIMIT,
});
registerDateFilters(engine);

// liquidjs gives a block rendered into a value of its own (`{% capture %}`) a plain emitter that
// counts nothing, and its memoryLimit charges filters only: every emitter it makes is one that
// charges what it is written to the rendering's memory limit.
const renderTemplates = engine.renderer.renderTemplates.bind(engine.renderer);
engine.renderer.renderTemplates = (templates, ctx, emitter) =>
  renderTemplates(templates, ctx, emitter ?? new OutputEmitter(ctx.memoryLimit));

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

/** A rendering stopped as it passed its field's budget: `field` and `issue` say which and how. */
export class RenderLimitError extends TemplateError {
  readonly field: string;
  readonly issue: string;

  constructor(budget: OutputBudget) {
    super(`${budget.field} ${budget.issue()}`);
    this.field = budget.field;
    this.issue = budget.issue();
  }
}

/**
 * Renders a text with the scope into `budget` (the size its field takes; several texts that make one
 * whole, a webhook body, share one). Throws RenderLimitError as soon as the output passes the
 * budget, TemplateError naming what was missing or wrong otherwise.
 */
export async function render(
  text: string,
  scope: object,
  budget: OutputBudget = OutputBudget.default(),
): Promise<string> {
  if (!isTemplated(text)) {
    if (!budget.spend(text)) throw new RenderLimitError(budget);
    return text;
  }
  const templates = parse(text);
  const ctx = new Context(scope, engine.options, {}, { liquid: engine });
  const emitter = new OutputEmitter(ctx.memoryLimit, budget);
  try {
    await toPromise(engine.renderer.renderTemplates(templates, ctx, emitter));
    return emitter.buffer;
  } catch (err) {
    if (emitter.overBudget) throw new RenderLimitError(budget);
    throw new TemplateError(firstLine(err));
  }
}

function firstLine(err: unknown): string {
  return String((err as Error).message ?? err).split('\n')[0]!;
}
