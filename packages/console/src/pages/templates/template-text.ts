// A template's placeholders and its text with values filled in: the create form's preview and the
// inbox's template reply share them. Positional templates number their placeholders ({{1}}), named
// ones name them ({{first_name}}); a send gives the header's, then the body's, then each URL
// button's, in that order (parameterCount counts them).
import type { ItemOf } from '@tidings/sdk';

export type Template = ItemOf<'/api/v1/public/templates'>;
type Component = Template['components'][number];

const PLACEHOLDER = /\{\{\s*([a-z0-9_]+)\s*\}\}/g;

/** The placeholders of a text, in order of first appearance, without repeats. */
export function placeholdersIn(text: string | undefined): string[] {
  const out: string[] = [];
  for (const m of (text ?? '').matchAll(PLACEHOLDER)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

/** The text with each placeholder replaced by its value (left as {{x}} while it has none). */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => values[name] || whole);
}

export interface Slot {
  /** Where the value goes in a positional send's list, or its name in a named one. */
  key: string;
  label: string;
  part: 'header' | 'body' | 'button';
  placeholder: string;
}

function of<T extends Component['type']>(t: Template, type: T) {
  return t.components.find((c) => c.type === type) as Extract<Component, { type: T }> | undefined;
}

/** What a send of this template must give, in order. */
export function slotsOf(t: Template): Slot[] {
  const slots: Slot[] = [];
  const header = of(t, 'HEADER');
  for (const p of placeholdersIn(header?.format === 'TEXT' ? header.text : undefined))
    slots.push({ key: '', label: `Header {{${p}}}`, part: 'header', placeholder: p });
  const body = of(t, 'BODY');
  for (const p of placeholdersIn(body?.text))
    slots.push({ key: '', label: `Body {{${p}}}`, part: 'body', placeholder: p });
  for (const b of of(t, 'BUTTONS')?.buttons ?? [])
    if (b.type === 'URL' && placeholdersIn(b.url).length > 0)
      slots.push({ key: '', label: `Button “${b.text}” link {{1}}`, part: 'button', placeholder: '1' });
  return slots.map((s, i) => ({ ...s, key: t.parameterFormat === 'NAMED' ? s.placeholder : String(i) }));
}

/** The header, body, footer and button labels of a template with the values given. */
export function renderTemplate(t: Template, values: Record<string, string>) {
  const slots = slotsOf(t);
  const valuesOf = (part: Slot['part']) =>
    Object.fromEntries(slots.filter((s) => s.part === part).map((s) => [s.placeholder, values[s.key] ?? '']));
  const header = of(t, 'HEADER');
  return {
    header:
      header?.format === 'TEXT' && header.text
        ? fill(header.text, valuesOf('header'))
        : header
          ? `[${header.format.toLowerCase()}]`
          : null,
    body: fill(of(t, 'BODY')?.text ?? '', valuesOf('body')),
    footer: of(t, 'FOOTER')?.text ?? null,
    buttons: (of(t, 'BUTTONS')?.buttons ?? []).map((b) => b.text),
  };
}

/** The `parameters` of a send: a list (positional) or an object by name (named). */
export function parametersOf(t: Template, values: Record<string, string>): string[] | Record<string, string> {
  const slots = slotsOf(t);
  if (t.parameterFormat === 'NAMED')
    return Object.fromEntries(slots.map((s) => [s.key, values[s.key] ?? '']));
  return slots.map((s) => values[s.key] ?? '');
}
