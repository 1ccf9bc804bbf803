// Templates from Meta: POST /templates/sync and the hourly job read every template of the account's
// WABA (GET /{waba-id}/message_templates, page after page by Meta's cursors) and bring Tidings' copy
// in line: a template Meta has and Tidings does not is created with Meta's id; one Tidings has (by
// Meta's id, else by name and language) takes Meta's status, category, components, quality score,
// parameter format and rejection reason. Changes emit the events a callback's would
// (template.status_changed, template.category_changed, template.quality_changed).
//
// Every page is read before anything is written, and everything is written in one transaction: a
// Meta failure on any page (or a crash) leaves every template as it was, and the answer is the
// provider error a submit gets (503 with Retry-After when Meta could not answer, 409 with Meta's
// reason when it refused). A sync of the sandbox channel has no Meta to read: it answers at once,
// with nothing changed (`provider: "sandbox"`, `pages: 0`).
//
// What is left as it is, and reported in `skipped` with why: a template Tidings holds as a DRAFT
// (edited here and not submitted again: Meta's copy would overwrite the edit), one whose status
// Tidings does not keep (PENDING_DELETION, DELETED, ARCHIVED, LIMIT_EXCEEDED, …), and one whose
// components Tidings does not model (a LOCATION header, one-time-password, copy-code, flow or catalog
// buttons, carousels; a NAMED template with a media header or a URL placeholder). A template Tidings
// has and Meta no longer lists is left alone (deleting is the API's DELETE's to do).
import { Value } from 'typebox/value';
import { ChannelNotConfigured, type Channels, type SendMode } from '../../channels/registry.ts';
import type { ChannelConfig } from '../../channels/settings.ts';
import type { ParameterFormat, TemplateCategory, TemplateComponent } from '../../channels/types.ts';
import type { WhatsAppCloudAdapter } from '../../channels/whatsapp-cloud/client.ts';
import type { MetaTemplate } from '../../channels/whatsapp-cloud/templates.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict } from '../../kernel/http/errors.ts';
import { canonicalJson } from '../../kernel/values/canonical-json.ts';
import { newId } from '../../kernel/values/ids.ts';
import { loadChannel } from '../whatsapp-channel/index.ts';
import { CATEGORIES, NAME_PATTERN } from './components.ts';
import { qualityChange, writeFromMeta } from './meta.ts';
import { namesIn, templateNames } from './named.ts';
import { insertTemplate, type TemplateChange, type TemplateRow, type TemplateStatus } from './repo.ts';
import { Components } from './schemas.ts';
import type { StatusDeps } from './service.ts';

/** Templates asked for per page (Meta's default is 25). */
export const SYNC_PAGE_SIZE = 100;
/** Pages read at most: 10,000 templates, beyond any WABA's limit (6,000). */
export const SYNC_MAX_PAGES = 100;

export interface SyncServices extends StatusDeps {
  db: Database;
  channels: Channels;
}

export interface SkippedTemplate {
  name: string;
  language: string;
  providerTemplateId: string;
  reason: string;
}

export interface SyncSummary {
  provider: 'sandbox' | 'whatsapp_cloud';
  /** Pages read from Meta. */
  pages: number;
  /** Templates Meta listed. */
  seen: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: SkippedTemplate[];
}

/** Meta's statuses, as Tidings keeps them; any other is not kept (the template is skipped). */
const STATUS_OF_META: Record<string, TemplateStatus> = {
  APPROVED: 'APPROVED',
  PENDING: 'PENDING',
  IN_APPEAL: 'PENDING',
  REJECTED: 'REJECTED',
  PAUSED: 'PAUSED',
  DISABLED: 'DISABLED',
};

const pick = (from: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]]));

/**
 * Meta's components in the shape Tidings stores (only the fields it models; a body's examples
 * reduced to their first list), or why they cannot be.
 */
function componentsOf(meta: MetaTemplate): TemplateComponent[] | string {
  const out: Record<string, unknown>[] = [];
  for (const raw of meta.components) {
    if (typeof raw !== 'object' || raw === null) return 'a component is not an object';
    const c = raw as Record<string, unknown>;
    const type = typeof c.type === 'string' ? c.type.toUpperCase() : '';
    const example =
      typeof c.example === 'object' && c.example !== null ? (c.example as Record<string, unknown>) : null;
    if (type === 'HEADER') {
      if (!['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT'].includes(String(c.format))) {
        return `its ${String(c.format)} header is not one Tidings models`;
      }
      const header: Record<string, unknown> = pick(c, ['format', 'text']);
      header.type = 'HEADER';
      if (example)
        header.example = pick(example, ['header_text', 'header_handle', 'header_text_named_params']);
      out.push(header);
    } else if (type === 'BODY') {
      const body: Record<string, unknown> = { type: 'BODY', text: c.text };
      if (example) {
        const kept = pick(example, ['body_text', 'body_text_named_params']);
        if (Array.isArray(kept.body_text)) kept.body_text = kept.body_text.slice(0, 1);
        body.example = kept;
      }
      out.push(body);
    } else if (type === 'FOOTER') {
      out.push({ type: 'FOOTER', text: c.text });
    } else if (type === 'BUTTONS') {
      const buttons = Array.isArray(c.buttons) ? c.buttons : [];
      out.push({
        type: 'BUTTONS',
        buttons: buttons.map((b) => {
          const button = (typeof b === 'object' && b !== null ? b : {}) as Record<string, unknown>;
          return pick(button, ['type', 'text', 'url', 'phone_number', 'example']);
        }),
      });
    } else {
      return `its ${type || 'unnamed'} component is not one Tidings models`;
    }
  }
  if (!Value.Check(Components, out)) {
    const first = Value.Errors(Components, out)[0];
    return `its components are not ones Tidings models (${first ? `${first.instancePath || '/'} ${first.message}` : 'unknown shape'})`;
  }
  return out as TemplateComponent[];
}

const NUMBERED = /\{\{\s*([1-9][0-9]*)\s*\}\}/g;
const distinctNumbers = (text: string | undefined) =>
  new Set([...(text ?? '').matchAll(NUMBERED)].map((m) => m[1])).size;

/** How many values a send gives this template, or why Tidings cannot send it. */
function parameterCountOf(components: TemplateComponent[], format: ParameterFormat): number | string {
  const header = components.find((c) => c.type === 'HEADER');
  const buttons = components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
  const urlPlaceholders = buttons.filter((b) => b.type === 'URL' && distinctNumbers(b.url) > 0).length;
  if (format === 'NAMED') {
    if (header && header.format !== 'TEXT')
      return 'a NAMED template with a media header is not one Tidings sends';
    if (urlPlaceholders > 0) return 'a NAMED template with a URL placeholder is not one Tidings sends';
    for (const c of components) {
      if ((c.type === 'BODY' || c.type === 'HEADER') && namesIn(c.text ?? '').malformed) {
        return 'its placeholders are not all names';
      }
    }
    return templateNames(components).length;
  }
  const body = components.find((c) => c.type === 'BODY');
  const headerCount = !header ? 0 : header.format === 'TEXT' ? Math.min(1, distinctNumbers(header.text)) : 1;
  return headerCount + distinctNumbers(body?.text) + urlPlaceholders;
}

interface Judged {
  category: TemplateCategory;
  components: TemplateComponent[];
  parameterCount: number;
  status: TemplateStatus;
}

/** Meta's template as Tidings would keep it, or why it is not kept. */
function judge(meta: MetaTemplate): Judged | string {
  const status = STATUS_OF_META[meta.status];
  if (!status) return `Meta's status ${meta.status || '(none)'} is not one Tidings keeps`;
  const category = CATEGORIES.find((c) => c === meta.category);
  if (!category) return `Meta's category ${meta.category || '(none)'} is not one Tidings keeps`;
  if (!NAME_PATTERN.test(meta.name)) return 'its name is not one Tidings takes';
  const components = componentsOf(meta);
  if (typeof components === 'string') return components;
  const parameterCount = parameterCountOf(components, meta.parameterFormat);
  if (typeof parameterCount === 'string') return parameterCount;
  return { category, components, parameterCount, status };
}

/** What of Meta's template differs from the row, as a change (empty: nothing). */
function changeOf(row: TemplateRow, meta: MetaTemplate, judged: Judged, now: Date): TemplateChange {
  const change: TemplateChange = {};
  if (row.status !== judged.status) change.status = judged.status;
  const reason = judged.status === 'REJECTED' ? meta.rejectedReason : null;
  if (row.rejection_reason !== reason) change.rejectionReason = reason;
  if (row.category !== judged.category) change.category = judged.category;
  if (canonicalJson(row.components) !== canonicalJson(judged.components))
    change.components = judged.components;
  if (row.parameter_count !== judged.parameterCount) change.parameterCount = judged.parameterCount;
  if (row.parameter_format !== meta.parameterFormat) change.parameterFormat = meta.parameterFormat;
  if (row.provider !== 'whatsapp_cloud') change.provider = 'whatsapp_cloud';
  if (row.provider_template_id !== meta.providerTemplateId)
    change.providerTemplateId = meta.providerTemplateId;
  Object.assign(change, qualityChange(row, meta.qualityScore, meta.qualityAt ?? now) ?? {});
  return change;
}

/** 503 or 409 for a page Meta did not give: nothing was written. */
function pageFailed(kind: 'retry' | 'rejected', message: string, page: number): ApiError {
  if (kind === 'retry') {
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      `The WhatsApp Cloud API could not list the templates now (page ${page}: ${message}); nothing changed. Retry shortly.`,
      { headers: { 'retry-after': '5' } },
    );
  }
  return conflict(
    `The WhatsApp Cloud API refused to list the templates (page ${page}: ${message}); nothing changed.`,
    [{ field: 'provider', issue: message }],
  );
}

function adapterOf(s: SyncServices, channel: ChannelConfig): WhatsAppCloudAdapter {
  try {
    if (!channel.whatsapp) throw new ChannelNotConfigured('the channel has no WhatsApp number');
    return s.channels.whatsapp(channel.whatsapp, s.channels.secretsOf(channel).accessToken);
  } catch (err) {
    if (!(err instanceof ChannelNotConfigured)) throw err;
    throw conflict(`The account's channel cannot list templates at Meta: ${err.message}.`);
  }
}

/** Every page of the WABA's templates, or the error of the first page Meta did not give. */
async function readAll(adapter: WhatsAppCloudAdapter): Promise<{ templates: MetaTemplate[]; pages: number }> {
  const templates: MetaTemplate[] = [];
  let after: string | null = null;
  for (let page = 1; page <= SYNC_MAX_PAGES; page++) {
    const outcome = await adapter.listTemplatePage(after, SYNC_PAGE_SIZE);
    if (outcome.kind !== 'page') throw pageFailed(outcome.kind, outcome.error.message, page);
    templates.push(...outcome.page.templates);
    after = outcome.page.after;
    if (after === null) return { templates, pages: page };
  }
  throw pageFailed('retry', `more than ${SYNC_MAX_PAGES} pages`, SYNC_MAX_PAGES + 1);
}

async function accountTemplates(tx: Tx, accountId: string): Promise<TemplateRow[]> {
  const { rows } = await tx.query<TemplateRow>(
    `SELECT id, account_id, name, language, category, components, parameter_count, status, rejection_reason,
            provider, provider_template_id, submitted_at, created_at, updated_at, quality_score,
            quality_updated_at, parameter_format
       FROM templates WHERE account_id = $1 ORDER BY id FOR UPDATE`,
    [accountId],
  );
  return rows;
}

/** Applies what Meta listed to the account's templates, in the caller's transaction. */
export async function applyMetaTemplates(
  s: StatusDeps,
  tx: Tx,
  accountId: string,
  listed: MetaTemplate[],
): Promise<Omit<SyncSummary, 'provider' | 'pages'>> {
  // One sync of an account at a time: two would both create what Meta has and Tidings lacks.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('templates.sync:' || $1, 0))`, [accountId]);
  const rows = await accountTemplates(tx, accountId);
  const byMetaId = new Map(
    rows.flatMap((r) => (r.provider_template_id ? [[r.provider_template_id, r]] : [])),
  );
  const byName = new Map(rows.map((r) => [`${r.name}\u0000${r.language}`, r]));
  const summary = {
    seen: listed.length,
    created: 0,
    updated: 0,
    unchanged: 0,
    skipped: [] as SkippedTemplate[],
  };
  const now = s.now();
  for (const meta of listed) {
    const skip = (reason: string) =>
      summary.skipped.push({
        name: meta.name,
        language: meta.language,
        providerTemplateId: meta.providerTemplateId,
        reason,
      });
    const judged = judge(meta);
    if (typeof judged === 'string') {
      skip(judged);
      continue;
    }
    const row = byMetaId.get(meta.providerTemplateId) ?? byName.get(`${meta.name}\u0000${meta.language}`);
    if (row?.status === 'DRAFT') {
      skip('a DRAFT here (edited and not submitted again): left as it is');
      continue;
    }
    if (row) {
      const change = changeOf(row, meta, judged, now);
      if (Object.keys(change).length === 0) {
        summary.unchanged++;
        continue;
      }
      await writeFromMeta(s, tx, row, change);
      summary.updated++;
      continue;
    }
    const inserted = await insertTemplate(tx, {
      id: newId('template'),
      accountId,
      definition: {
        name: meta.name,
        language: meta.language,
        category: judged.category,
        components: judged.components,
        parameterFormat: meta.parameterFormat,
      },
      parameterCount: judged.parameterCount,
      now,
      fromProvider: {
        status: judged.status,
        rejectionReason: judged.status === 'REJECTED' ? meta.rejectedReason : null,
        provider: 'whatsapp_cloud',
        providerTemplateId: meta.providerTemplateId,
        ...(meta.qualityScore
          ? { qualityScore: meta.qualityScore, qualityUpdatedAt: meta.qualityAt ?? now }
          : {}),
      },
    });
    if ('row' in inserted) {
      s.approvedTemplates.forget(inserted.row);
      summary.created++;
    } else {
      // Meta listed the same name and language twice (it does not): the first one is kept.
      skip('Meta listed this name and language twice; the first is kept');
    }
  }
  return summary;
}

/**
 * Syncs the account's templates with Meta. `mode` is the key's: a sandbox key may not read a live
 * channel's templates (403, as it may not submit them).
 */
export async function syncTemplates(
  s: SyncServices,
  accountId: string,
  mode: SendMode,
): Promise<SyncSummary> {
  const channel = await loadChannel(s.db, accountId);
  if (channel.provider !== 'whatsapp_cloud') {
    return { provider: 'sandbox', pages: 0, seen: 0, created: 0, updated: 0, unchanged: 0, skipped: [] };
  }
  if (mode === 'sandbox') {
    throw new ApiError(
      'FORBIDDEN',
      'A sandbox key may not sync templates of an account on the WhatsApp Cloud API: that reads Meta; use a live key.',
    );
  }
  const { templates, pages } = await readAll(adapterOf(s, channel));
  const applied = await s.db.transaction((tx) => applyMetaTemplates(s, tx, accountId, templates));
  return { provider: 'whatsapp_cloud', pages, ...applied };
}
