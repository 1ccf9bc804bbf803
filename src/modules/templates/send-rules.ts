// What a send must give a template, beyond the positional count that prepare.ts checks: a NAMED
// template's values as an object holding every placeholder's name and no other, and quick-reply
// payloads naming QUICK_REPLY buttons of the template (each at most once). Every problem is
// reported with its field: `parameters.first_name`, `buttonPayloads[0].index`.
import type { QuickReplyPayload, TemplateComponent, TemplateParameters } from '../../channels/types.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { templateNames } from './named.ts';
import type { TemplateRow } from './repo.ts';

/** Problems with a NAMED template's values (`field` names where they came from). */
export function namedParameterIssues(
  row: Pick<TemplateRow, 'name' | 'components'>,
  parameters: TemplateParameters,
  field: string,
): FieldIssue[] {
  if (Array.isArray(parameters)) {
    return [
      {
        field,
        issue: `must be an object by placeholder name for the NAMED template ${row.name}, e.g. {"${templateNames(row.components)[0] ?? 'first_name'}": "…"}`,
      },
    ];
  }
  const names = templateNames(row.components);
  const issues: FieldIssue[] = [];
  for (const name of names) {
    if (parameters[name] === undefined)
      issues.push({ field: `${field}.${name}`, issue: `is required by template ${row.name}` });
  }
  for (const name of Object.keys(parameters)) {
    if (!names.includes(name))
      issues.push({ field: `${field}.${name}`, issue: `is not a placeholder of template ${row.name}` });
  }
  return issues;
}

/** The body with a NAMED template's placeholders filled. */
export function renderNamedBody(components: TemplateComponent[], parameters: Record<string, string>): string {
  const body = components.find((c) => c.type === 'BODY');
  return (body?.text ?? '').replace(
    /\{\{([a-z][a-z0-9_]*)\}\}/g,
    (_, name: string) => parameters[name] ?? '',
  );
}

/** Problems with quick-reply payloads: each names a QUICK_REPLY button of the template, once. */
export function buttonPayloadIssues(
  row: Pick<TemplateRow, 'name' | 'components'>,
  payloads: QuickReplyPayload[],
): FieldIssue[] {
  const buttons = row.components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
  const issues: FieldIssue[] = [];
  payloads.forEach((p, i) => {
    const field = `buttonPayloads[${i}].index`;
    const button = buttons[p.index];
    if (!button) {
      issues.push({
        field,
        issue: `names no button of template ${row.name} (it has ${buttons.length}, indexed from 0)`,
      });
    } else if (button.type !== 'QUICK_REPLY') {
      issues.push({ field, issue: `is a ${button.type} button of template ${row.name}, not a QUICK_REPLY` });
    } else if (payloads.findIndex((q) => q.index === p.index) !== i) {
      issues.push({ field, issue: 'repeats a button: one payload per button' });
    }
  });
  return issues;
}
