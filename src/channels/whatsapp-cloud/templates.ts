// Reading the WABA's templates from Meta: GET /{waba-id}/message_templates, one page at a time.
// Meta pages with cursors, as every Graph list: `paging.cursors.after` names where the next page
// starts, and `paging.next` (the full URL of that page) is there only while one follows, so the last
// page is the one without `next`. A page is read whole or not at all; what a template is made of is
// left as Meta wrote it for the caller to judge (modules/templates/meta-sync.ts).
import type { ParameterFormat, TemplateQualityScore } from '../types.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';

/** The fields a sync asks for. */
export const TEMPLATE_FIELDS =
  'id,name,language,status,category,components,quality_score,parameter_format,rejected_reason';

/** A template as Meta lists it, its fields read but not judged. */
export interface MetaTemplate {
  providerTemplateId: string;
  name: string;
  language: string;
  /** Meta's status word: APPROVED, PENDING, REJECTED, PAUSED, DISABLED, IN_APPEAL, … */
  status: string;
  category: string;
  components: unknown[];
  qualityScore: TemplateQualityScore | null;
  /** When Meta scored it, if it says. */
  qualityAt: Date | null;
  parameterFormat: ParameterFormat;
  /** Meta's rejected_reason; null for none (Meta writes NONE). */
  rejectedReason: string | null;
}

export interface MetaTemplatePage {
  templates: MetaTemplate[];
  /** The cursor of the next page; null on the last page (no `paging.next`). */
  after: string | null;
  /** Entries of `data` that are not a template at all (no id, name or language). */
  unreadable: number;
}

const SCORES: readonly TemplateQualityScore[] = ['GREEN', 'YELLOW', 'RED', 'UNKNOWN'];

/** Meta writes the score as `{score, date}` (and has written it as a bare word). */
export function qualityOf(value: unknown): { score: TemplateQualityScore | null; at: Date | null } {
  const word = isRecord(value) ? value.score : value;
  const score = SCORES.find((s) => s === word) ?? null;
  return { score, at: isRecord(value) ? unixSeconds(value.date) : null };
}

const idOf = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : '';

function templateOf(entry: Json): MetaTemplate | null {
  const id = idOf(entry.id);
  if (!id || typeof entry.name !== 'string' || typeof entry.language !== 'string') return null;
  const quality = qualityOf(entry.quality_score);
  const reason = typeof entry.rejected_reason === 'string' ? entry.rejected_reason : '';
  return {
    providerTemplateId: id,
    name: entry.name,
    language: entry.language,
    status: typeof entry.status === 'string' ? entry.status : '',
    category: typeof entry.category === 'string' ? entry.category : '',
    components: Array.isArray(entry.components) ? entry.components : [],
    qualityScore: quality.score,
    qualityAt: quality.at,
    parameterFormat: entry.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL',
    rejectedReason: reason && reason !== 'NONE' ? reason : null,
  };
}

/** A page's body, or null when it is not a Graph list at all. */
export function readTemplatePage(body: unknown): MetaTemplatePage | null {
  if (!isRecord(body) || !Array.isArray(body.data)) return null;
  const entries = records(body.data);
  const templates = entries.flatMap((e) => templateOf(e) ?? []);
  const paging = isRecord(body.paging) ? body.paging : {};
  const cursors = isRecord(paging.cursors) ? paging.cursors : {};
  const after = typeof cursors.after === 'string' && cursors.after ? cursors.after : null;
  const hasNext = typeof paging.next === 'string' && paging.next !== '';
  return {
    templates,
    after: hasNext ? after : null,
    unreadable: body.data.length - templates.length,
  };
}
