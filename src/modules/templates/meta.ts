// What Meta says of a template after its review, beyond its status: its quality score
// (message_template_quality_update) and its category (template_category_update). Each is applied
// in the caller's transaction (a callback's, or a sync's) and becomes its event in that same
// transaction: template.quality_changed with `previousQualityScore`, template.category_changed with
// `previousCategory` (and `upcoming` when Meta only announces a change it will make in a day).
import type { ProviderUpdate, TemplateQualityScore } from '../../channels/types.ts';
import type { Tx } from '../../kernel/database/db.ts';
import { CATEGORIES } from './components.ts';
import { lockTemplateForUpdate, type TemplateChange, type TemplateRow } from './repo.ts';
import { toTemplate } from './schemas.ts';
import { type StatusDeps, write } from './service.ts';

type QualityUpdate = Extract<ProviderUpdate, { kind: 'template_quality' }>;
type CategoryUpdate = Extract<ProviderUpdate, { kind: 'template_category' }>;

/** A category change Meta has announced and not yet made. */
export interface UpcomingCategory {
  category: string;
  at: Date | null;
}

/**
 * Writes a change Meta reported (a sync's, or a callback's) with every event it causes: the status
 * event (through write), then template.category_changed and template.quality_changed.
 */
export async function writeFromMeta(
  deps: StatusDeps,
  tx: Tx,
  row: TemplateRow,
  change: TemplateChange,
): Promise<TemplateRow> {
  const updated = await write(deps, tx, row, change);
  if (updated.category !== row.category) {
    await deps.events.emit(tx, {
      type: 'template.category_changed',
      accountId: row.account_id,
      data: { ...toTemplate(updated), previousCategory: row.category, upcoming: null },
    });
  }
  if (updated.quality_score !== row.quality_score) {
    await deps.events.emit(tx, {
      type: 'template.quality_changed',
      accountId: row.account_id,
      data: { ...toTemplate(updated), previousQualityScore: row.quality_score },
    });
  }
  return updated;
}

/** The quality change of a template: score and when; null when it is already so. */
export function qualityChange(
  row: TemplateRow,
  score: TemplateQualityScore | null,
  at: Date,
): Pick<TemplateChange, 'qualityScore' | 'qualityUpdatedAt'> | null {
  if (score === null || score === row.quality_score) return null;
  return { qualityScore: score, qualityUpdatedAt: at };
}

/**
 * message_template_quality_update: the template (by Meta's id, else name and language) takes the new
 * score. Answers whether anything changed (a repeat of the same score changes nothing).
 */
export async function applyTemplateQuality(
  deps: StatusDeps,
  tx: Tx,
  accountId: string,
  update: QualityUpdate,
): Promise<boolean> {
  const row = await lockTemplateForUpdate(tx, accountId, update);
  if (!row) return false;
  const change = qualityChange(row, update.score, deps.now());
  if (!change) return false;
  await writeFromMeta(deps, tx, row, change);
  return true;
}

/**
 * template_category_update: a change made sets the category; a change announced changes nothing
 * yet and is passed on as template.category_changed with `upcoming` (the template's category
 * unchanged), so a business can act before Meta recategorises it.
 */
export async function applyTemplateCategory(
  deps: StatusDeps,
  tx: Tx,
  accountId: string,
  update: CategoryUpdate,
): Promise<boolean> {
  const row = await lockTemplateForUpdate(tx, accountId, update);
  if (!row) return false;
  if (update.correctCategory) {
    const upcoming: UpcomingCategory = { category: update.correctCategory, at: update.scheduledAt };
    await deps.events.emit(tx, {
      type: 'template.category_changed',
      accountId,
      data: {
        ...toTemplate(row),
        previousCategory: row.category,
        upcoming: { category: upcoming.category, at: upcoming.at?.toISOString() ?? null },
      },
    });
    return true;
  }
  const category = CATEGORIES.find((c) => c === update.category);
  if (!category || category === row.category) return false;
  await writeFromMeta(deps, tx, row, { category });
  return true;
}
