// Templates of an account: create, edit, replace, delete, submit for review, and the provider's
// decisions (applyTemplateStatus, used by the WhatsApp callback and the sandbox's review job alike).
// Every change of status emits template.status_changed in the transaction that makes it.
import { ChannelNotConfigured, type Channels, providerFor, type SendMode } from '../../channels/registry.ts';
import type { ChannelConfig } from '../../channels/settings.ts';
import type {
  ParameterFormat,
  Provider,
  ProviderUpdate,
  SubmitOutcome,
  TemplateCategory,
  TemplateComponent,
  TemplateDefinition,
} from '../../channels/types.ts';
import { type Database, sqlState, type Tx, UNIQUE_VIOLATION } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import type { Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { loadChannel } from '../whatsapp-channel/index.ts';
import type { ApprovedTemplates } from './approved.ts';
import { type CheckedTemplate, checkTemplate } from './components.ts';
import {
  deleteTemplate,
  findTemplate,
  findTemplateByName,
  insertTemplate,
  lockTemplateForUpdate,
  type TemplateChange,
  type TemplateRow,
  type TemplateStatus,
  toDefinition,
  updateTemplate,
} from './repo.ts';
import { toTemplate } from './schemas.ts';

export const TEMPLATE_REVIEW_JOB = 'templates.sandbox-review';

export interface TemplateReviewJobData {
  templateId: string;
  providerTemplateId: string;
}

export interface TemplateServices {
  db: Database;
  events: EventOutbox;
  jobs: Jobs;
  channels: Channels;
  now: () => Date;
  /** The sends' cache of approved templates: told of every change made here. */
  approvedTemplates: ApprovedTemplates;
}

export type StatusDeps = Pick<TemplateServices, 'events' | 'now' | 'approvedTemplates'>;

export interface TemplateInput {
  name: string;
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
  parameterFormat?: ParameterFormat;
}

/** Editing and submitting start only from these; anything else is with or decided by the provider. */
const EDITABLE: readonly TemplateStatus[] = ['DRAFT', 'REJECTED'];

function duplicate(templateId: string): ApiError {
  return conflict('This account already has a template with this name and language.', [
    { field: 'name', issue: 'is taken in this language', templateId },
  ]);
}

function wrongState(row: TemplateRow, action: string): ApiError {
  return conflict(`The template is ${row.status}; it can be ${action} only while DRAFT or REJECTED.`, [
    { field: 'status', issue: `is ${row.status}`, templateId: row.id },
  ]);
}

/** Writes a change and, if it alters the status, its template.status_changed event. */
export async function write(
  deps: StatusDeps,
  tx: Tx,
  row: TemplateRow,
  change: TemplateChange,
): Promise<TemplateRow> {
  const updated = await updateTemplate(tx, row.account_id, row.id, change, deps.now());
  deps.approvedTemplates.forget(row);
  // A replace may rename it: the sends' cache forgets what the new name answered too.
  if (updated.name !== row.name || updated.language !== row.language) deps.approvedTemplates.forget(updated);
  if (updated.status !== row.status) {
    await deps.events.emit(tx, {
      type: 'template.status_changed',
      accountId: row.account_id,
      data: { ...toTemplate(updated), previousStatus: row.status },
    });
  }
  return updated;
}

/** 403 for an action a sandbox key may not take (it would reach a real provider). */
function liveOnly(action: string): ApiError {
  return new ApiError(
    'FORBIDDEN',
    `A sandbox key may not ${action}: that is a live-only action; use a live key.`,
  );
}

/** 503 for a provider that could not be reached: nothing changed, the client may retry. */
function providerUnavailable(message: string): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', `${message}; nothing changed. Retry shortly.`, {
    headers: { 'retry-after': '5' },
  });
}

/** The channel's adapter for `provider`; 409 (saying what could not be done) if it is not usable. */
function adapterOf(s: TemplateServices, channel: ChannelConfig, provider: Provider, cannot: string) {
  try {
    return s.channels.adapter(channel, provider);
  } catch (err) {
    if (!(err instanceof ChannelNotConfigured)) throw err;
    throw conflict(`The account's channel cannot ${cannot}: ${err.message}.`);
  }
}

/** Submitted to the WhatsApp Cloud API: Meta holds it under its name and language. */
const heldByMeta = (row: TemplateRow) =>
  row.provider === 'whatsapp_cloud' && row.provider_template_id !== null;

/**
 * 409 for a new name or language of a template Meta holds: Meta edits only a template's category
 * and components, and deletes it by name, so the two would no longer name the same template.
 */
function keepsItsName(row: TemplateRow, next: TemplateDefinition): ApiError {
  const changed = (['name', 'language'] as const).filter((field) => next[field] !== row[field]);
  return conflict(
    `The template was submitted to the WhatsApp Cloud API as ${row.name} (${row.language}), and Meta keeps a template's name and language; create a new template for another name or language.`,
    changed.map((field) => ({
      field,
      issue: 'cannot change once submitted to the WhatsApp Cloud API',
      templateId: row.id,
    })),
  );
}

async function lockOwn(tx: Tx, accountId: string, id: string): Promise<TemplateRow> {
  const row = await findTemplate(tx, accountId, id, { forUpdate: true });
  if (!row) throw notFound('template');
  return row;
}

export async function createTemplate(s: TemplateServices, accountId: string, input: TemplateInput) {
  const { definition, parameterCount } = checkTemplate(input);
  return s.db.transaction(async (tx) => {
    const inserted = await insertTemplate(tx, {
      id: newId('template'),
      accountId,
      definition,
      parameterCount,
      now: s.now(),
    });
    if ('existingId' in inserted) throw duplicate(inserted.existingId);
    return inserted.row;
  });
}

export async function getTemplate(s: TemplateServices, accountId: string, id: string): Promise<TemplateRow> {
  const row = await findTemplate(s.db, accountId, id);
  if (!row) throw notFound('template');
  return row;
}

/**
 * PATCH and PUT: the template becomes what `next` makes of it (checked by the rules, with its
 * parameter count), while DRAFT or REJECTED; a REJECTED template becomes a DRAFT again, without its
 * reason. A new name and language taken by another template is the 409 a create gets.
 */
async function rewrite(
  s: TemplateServices,
  accountId: string,
  id: string,
  action: 'edited' | 'replaced',
  next: (row: TemplateRow) => CheckedTemplate,
): Promise<TemplateRow> {
  let wanted: TemplateDefinition | undefined;
  try {
    return await s.db.transaction(async (tx) => {
      const row = await lockOwn(tx, accountId, id);
      if (!EDITABLE.includes(row.status)) throw wrongState(row, action);
      const { definition, parameterCount } = next(row);
      if (heldByMeta(row) && (definition.name !== row.name || definition.language !== row.language)) {
        throw keepsItsName(row, definition);
      }
      wanted = definition;
      return await write(s, tx, row, {
        name: definition.name,
        language: definition.language,
        category: definition.category,
        components: definition.components,
        parameterCount,
        parameterFormat: definition.parameterFormat,
        status: 'DRAFT',
        rejectionReason: null,
      });
    });
  } catch (err) {
    // The unique index judges (two requests racing cannot both win); the other template's id is
    // looked up once the failed transaction is gone.
    if (sqlState(err) !== UNIQUE_VIOLATION || !wanted) throw err;
    const existing = await findTemplateByName(s.db, accountId, wanted.name, wanted.language);
    throw duplicate(existing?.id ?? 'unknown');
  }
}

/** PATCH: category and components, while DRAFT or REJECTED; a REJECTED template becomes a DRAFT again. */
export async function editTemplate(
  s: TemplateServices,
  accountId: string,
  id: string,
  input: { category?: TemplateCategory; components?: TemplateComponent[] },
): Promise<TemplateRow> {
  return rewrite(s, accountId, id, 'edited', (row) =>
    checkTemplate({
      ...toDefinition(row),
      ...(input.category ? { category: input.category } : {}),
      ...(input.components ? { components: input.components } : {}),
    }),
  );
}

/**
 * PUT: every field replaced, checked exactly as a create is (the rules first, so a faulty body is
 * a 400 whatever the template's state), while DRAFT or REJECTED. The name and language may change
 * until the template is submitted to the WhatsApp Cloud API (409 after: Meta keeps them).
 */
export async function replaceTemplate(
  s: TemplateServices,
  accountId: string,
  id: string,
  input: TemplateInput,
): Promise<TemplateRow> {
  const checked = checkTemplate(input);
  return rewrite(s, accountId, id, 'replaced', () => checked);
}

/**
 * Deletes a template. One submitted to the WhatsApp Cloud API is deleted at Meta first (a template
 * left there would keep its name and language taken, and stay sendable from anywhere else): only
 * once Meta no longer has it is it deleted here. Meta unreachable: 503, nothing changed; Meta
 * refusing (a revoked token): 409 with Meta's reason, nothing changed. An account no longer on the
 * WhatsApp Cloud API has no way to reach Meta: its template is deleted here only.
 */
export async function removeTemplate(
  s: TemplateServices,
  accountId: string,
  id: string,
  mode: SendMode,
): Promise<void> {
  const row = await getTemplate(s, accountId, id);
  if (heldByMeta(row)) {
    if (mode === 'sandbox') throw liveOnly('delete a template submitted to the WhatsApp Cloud API');
    await deleteAtMeta(s, accountId, row);
  }
  const deleted = await deleteTemplate(s.db, accountId, id);
  if (!deleted) throw notFound('template');
  s.approvedTemplates.forget(deleted);
}

async function deleteAtMeta(s: TemplateServices, accountId: string, row: TemplateRow): Promise<void> {
  const channel = await loadChannel(s.db, accountId);
  if (channel.provider !== 'whatsapp_cloud') return;
  const outcome = await adapterOf(s, channel, 'whatsapp_cloud', 'delete the template at Meta').deleteTemplate(
    {
      providerTemplateId: row.provider_template_id!,
      name: row.name,
    },
  );
  if (outcome.kind === 'retry') {
    throw providerUnavailable(
      `The WhatsApp Cloud API could not delete the template now (${outcome.error.message})`,
    );
  }
  if (outcome.kind === 'rejected') {
    throw conflict(
      `The WhatsApp Cloud API refused to delete the template (${outcome.error.message}); it is kept, here and at Meta.`,
      [{ field: 'provider', issue: outcome.error.message, templateId: row.id }],
    );
  }
}

/** Meta says NONE when it gives no reason. */
const reasonOf = (reason: string | null | undefined) => (reason && reason !== 'NONE' ? reason : null);

function submissionChange(
  outcome: Exclude<SubmitOutcome, { kind: 'retry' }>,
  provider: TemplateChange['provider'],
) {
  if (outcome.kind === 'rejected') {
    return { status: 'REJECTED' as const, rejectionReason: outcome.error.message, provider };
  }
  return {
    status: outcome.status,
    rejectionReason: outcome.status === 'REJECTED' ? reasonOf(outcome.reason) : null,
    provider,
    providerTemplateId: outcome.providerTemplateId,
  };
}

/** Whether a template is as it was read: content, status and submission (the clock may not have moved). */
function unchanged(before: TemplateRow, now: TemplateRow): boolean {
  return (
    now.updated_at.getTime() === before.updated_at.getTime() &&
    now.status === before.status &&
    now.category === before.category &&
    JSON.stringify(now.components) === JSON.stringify(before.components) &&
    now.provider_template_id === before.provider_template_id &&
    now.submitted_at?.getTime() === before.submitted_at?.getTime()
  );
}

/**
 * Submits a DRAFT or REJECTED template for review through the channel a key of this mode uses.
 * The provider is called outside any transaction (it may be an HTTP call); its answer is then
 * recorded only if the template has not moved meanwhile (409 otherwise).
 */
export async function submitTemplate(
  s: TemplateServices,
  accountId: string,
  id: string,
  mode: SendMode,
): Promise<TemplateRow> {
  const channel = await loadChannel(s.db, accountId);
  if (mode === 'sandbox' && channel.provider !== 'sandbox') {
    throw liveOnly('submit templates of an account on the WhatsApp Cloud API');
  }
  const provider = providerFor(channel.provider, mode);
  const before = await getTemplate(s, accountId, id);
  if (!EDITABLE.includes(before.status)) throw wrongState(before, 'submitted');

  // Submitted to this provider before (rejected, then edited): the provider edits its template,
  // since it refuses a second one of the same name and language.
  const previous =
    before.provider === provider && before.provider_template_id
      ? { providerTemplateId: before.provider_template_id }
      : undefined;
  const outcome = await adapterOf(s, channel, provider, 'submit templates').submitTemplate(
    toDefinition(before),
    previous,
  );
  if (outcome.kind === 'retry') {
    throw providerUnavailable(`The provider could not take the template now (${outcome.error.message})`);
  }

  return s.db.transaction(async (tx) => {
    const row = await lockOwn(tx, accountId, id);
    // Edited or submitted by another request while the provider answered: what it reviews is
    // not (or no longer) this template's content.
    if (!unchanged(before, row)) {
      throw conflict('The template changed while it was being submitted; fetch it and submit again.', [
        { field: 'status', issue: `is ${row.status}`, templateId: row.id },
      ]);
    }
    const now = s.now();
    const updated = await write(s, tx, row, { ...submissionChange(outcome, provider), submittedAt: now });
    if (provider === 'sandbox' && updated.status === 'PENDING') {
      const data: TemplateReviewJobData = {
        templateId: id,
        providerTemplateId: updated.provider_template_id!,
      };
      await s.jobs.enqueue(tx, TEMPLATE_REVIEW_JOB, data, {
        startAfterSeconds: Math.ceil(channel.sandbox.reviewAfterMs / 1000),
      });
    }
    return updated;
  });
}

type TemplateStatusUpdate = Extract<ProviderUpdate, { kind: 'template_status' }>;

const STATUS_OF: Record<TemplateStatusUpdate['event'], TemplateStatus> = {
  APPROVED: 'APPROVED',
  REJECTED: 'REJECTED',
  PAUSED: 'PAUSED',
  DISABLED: 'DISABLED',
  REINSTATED: 'APPROVED',
};

/**
 * Applies a provider's decision about a template (WhatsApp's message_template_status_update, or
 * the sandbox review) in the caller's transaction. The template is found by the provider's id,
 * else by name and language among WhatsApp templates. A DRAFT is left alone: its content was
 * edited after the submission the decision is about. Answers whether anything changed.
 */
export async function applyTemplateStatus(
  deps: StatusDeps,
  tx: Tx,
  accountId: string,
  update: TemplateStatusUpdate,
): Promise<boolean> {
  const row = await lockTemplateForUpdate(tx, accountId, update);
  if (!row || row.status === 'DRAFT') return false;
  const status = STATUS_OF[update.event];
  if (status === row.status) return false;
  await write(deps, tx, row, {
    status,
    rejectionReason: status === 'REJECTED' ? reasonOf(update.reason) : null,
    providerTemplateId: update.providerTemplateId,
  });
  return true;
}
