// Template rows. Every query a request makes is scoped by account_id: another account's id finds
// nothing. The messages module reads templates through findTemplateByName and toDefinition.
import type {
  ParameterFormat,
  Provider,
  TemplateCategory,
  TemplateComponent,
  TemplateDefinition,
  TemplateQualityScore,
} from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';

export type TemplateStatus = 'DRAFT' | 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';

export const TEMPLATE_STATUSES: readonly TemplateStatus[] = [
  'DRAFT',
  'PENDING',
  'APPROVED',
  'REJECTED',
  'PAUSED',
  'DISABLED',
];

export interface TemplateRow {
  id: string;
  account_id: string;
  name: string;
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
  parameter_count: number;
  status: TemplateStatus;
  rejection_reason: string | null;
  provider: Provider | null;
  provider_template_id: string | null;
  submitted_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Meta's quality score (null until Meta gives one) and when it was last set. */
  quality_score: TemplateQualityScore | null;
  quality_updated_at: Date | null;
  parameter_format: ParameterFormat;
}

const COLUMNS = `id, account_id, name, language, category, components, parameter_count, status, rejection_reason,
  provider, provider_template_id, submitted_at, created_at, updated_at, quality_score, quality_updated_at,
  parameter_format`;

export function toDefinition(row: TemplateRow): TemplateDefinition {
  return {
    name: row.name,
    language: row.language,
    category: row.category,
    components: row.components,
    parameterFormat: row.parameter_format,
  };
}

/** Inserts a template, or answers the id of the account's template with this name and language. */
export async function insertTemplate(
  sql: Sql,
  row: {
    id: string;
    accountId: string;
    definition: TemplateDefinition;
    parameterCount: number;
    now: Date;
    /** A template read from Meta (a sync) comes with what Meta says of it; a create is a DRAFT. */
    fromProvider?: TemplateChange;
  },
): Promise<{ row: TemplateRow } | { existingId: string }> {
  const { definition: d } = row;
  const { rows } = await sql.query<TemplateRow>(
    `INSERT INTO templates (id, account_id, name, language, category, components, parameter_count, created_at, updated_at,
       parameter_format)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)
     ON CONFLICT (account_id, name, language) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      row.id,
      row.accountId,
      d.name,
      d.language,
      d.category,
      JSON.stringify(d.components),
      row.parameterCount,
      row.now,
      d.parameterFormat ?? 'POSITIONAL',
    ],
  );
  if (rows[0] && row.fromProvider) {
    return { row: await updateTemplate(sql, row.accountId, row.id, row.fromProvider, row.now) };
  }
  if (rows[0]) return { row: rows[0] };
  const existing = await findTemplateByName(sql, row.accountId, d.name, d.language);
  // Deleted between the two statements: rare enough to report as the conflict it nearly was.
  return { existingId: existing?.id ?? 'unknown' };
}

export async function findTemplate(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<TemplateRow | null> {
  const { rows } = await sql.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM templates WHERE account_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

/** The account's template with this name and language (what a send names), or null. */
export async function findTemplateByName(
  sql: Sql,
  accountId: string,
  name: string,
  language: string,
): Promise<TemplateRow | null> {
  const { rows } = await sql.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM templates WHERE account_id = $1 AND name = $2 AND language = $3`,
    [accountId, name, language],
  );
  return rows[0] ?? null;
}

/**
 * The template a provider's status update is about, locked: by the provider's id, else (for the
 * WhatsApp Cloud API, whose ids are only learnt at submission) by name and language.
 */
export async function lockTemplateForUpdate(
  sql: Sql,
  accountId: string,
  update: { providerTemplateId: string; name: string; language: string },
): Promise<TemplateRow | null> {
  const byId = await sql.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM templates WHERE account_id = $1 AND provider_template_id = $2 FOR UPDATE`,
    [accountId, update.providerTemplateId],
  );
  if (byId.rows[0]) return byId.rows[0];
  const byName = await sql.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM templates
      WHERE account_id = $1 AND name = $2 AND language = $3 AND provider = 'whatsapp_cloud' FOR UPDATE`,
    [accountId, update.name, update.language],
  );
  return byName.rows[0] ?? null;
}

/** The template a review job is about, locked; jobs carry the id alone (the row names its account). */
export async function lockTemplateById(sql: Sql, id: string): Promise<TemplateRow | null> {
  const { rows } = await sql.query<TemplateRow>(`SELECT ${COLUMNS} FROM templates WHERE id = $1 FOR UPDATE`, [
    id,
  ]);
  return rows[0] ?? null;
}

/** The fields a write may change. */
export interface TemplateChange {
  name?: string;
  language?: string;
  category?: TemplateCategory;
  components?: TemplateComponent[];
  parameterCount?: number;
  status?: TemplateStatus;
  rejectionReason?: string | null;
  provider?: Provider | null;
  providerTemplateId?: string | null;
  submittedAt?: Date | null;
  qualityScore?: TemplateQualityScore | null;
  qualityUpdatedAt?: Date | null;
  parameterFormat?: ParameterFormat;
}

const CHANGE_COLUMNS: Record<keyof TemplateChange, string> = {
  name: 'name',
  language: 'language',
  category: 'category',
  components: 'components',
  parameterCount: 'parameter_count',
  status: 'status',
  rejectionReason: 'rejection_reason',
  provider: 'provider',
  providerTemplateId: 'provider_template_id',
  submittedAt: 'submitted_at',
  qualityScore: 'quality_score',
  qualityUpdatedAt: 'quality_updated_at',
  parameterFormat: 'parameter_format',
};

/** A new name and language taken by another template fails the statement with UNIQUE_VIOLATION. */
export async function updateTemplate(
  sql: Sql,
  accountId: string,
  id: string,
  change: TemplateChange,
  now: Date,
): Promise<TemplateRow> {
  const params: unknown[] = [accountId, id, now];
  const sets = ['updated_at = $3'];
  for (const [key, value] of Object.entries(change) as [keyof TemplateChange, unknown][]) {
    if (value === undefined) continue;
    params.push(key === 'components' ? JSON.stringify(value) : value);
    sets.push(`${CHANGE_COLUMNS[key]} = $${params.length}`);
  }
  const { rows } = await sql.query<TemplateRow>(
    `UPDATE templates SET ${sets.join(', ')} WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    params,
  );
  if (!rows[0]) throw new Error(`template ${id} vanished while locked`);
  return rows[0];
}

export async function deleteTemplate(sql: Sql, accountId: string, id: string): Promise<TemplateRow | null> {
  const { rows } = await sql.query<TemplateRow>(
    `DELETE FROM templates WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export interface TemplateFilters {
  status?: TemplateStatus;
  name?: string;
  language?: string;
  category?: TemplateCategory;
}

export async function listTemplates(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: TemplateFilters,
): Promise<TemplateRow[]> {
  const params: unknown[] = [accountId];
  const where = ['account_id = $1'];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (page.before) where.push(`id < ${param(page.before)}`);
  if (filters.status) where.push(`status = ${param(filters.status)}`);
  if (filters.name) where.push(`name = ${param(filters.name)}`);
  if (filters.language) where.push(`language = ${param(filters.language)}`);
  if (filters.category) where.push(`category = ${param(filters.category)}`);
  const { rows } = await sql.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM templates WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${page.limit + 1}`,
    params,
  );
  return rows;
}
