// Broadcast campaigns from the API (docs/messaging.md § Campaigns). The status machine is the
// campaign engine's (campaign-shared/states.ts; a move from a wrong state is 409). Saving checks
// every field at once (400, each fault at its field). Estimating walks the audience as the start
// will; starting fixes it (a row per contact, opted-out contacts skipped), stores the estimate,
// and refuses (402, with the shortfall) when the wallet cannot pay it. The sender (sender.ts) then
// sends; counters are counted from the rows and their messages.
import { providerFor, type SendMode } from '../../channels/registry.ts';
import type { Provider, TemplateCategory } from '../../channels/types.ts';
import type { Database, Sql, Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict, type FieldIssue, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { templateProblem } from '../automation/index.ts';
import {
  type Audience,
  assertAllowed,
  audienceProblems,
  type CampaignAction,
  goingStatus,
  unknownContactIds,
} from '../campaign-shared/index.ts';
import { invalidFields } from '../contacts/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { findTemplateByName, namedParameterIssues, type TemplateRow } from '../templates/index.ts';
import { walkAudience } from './audience-walk.ts';
import {
  type CampaignMessage,
  type CampaignRow,
  type CampaignValues,
  type CampaignWindow,
  countCampaigns,
  countersOf,
  deleteCampaign,
  findCampaign,
  insertCampaign,
  type StatusChange,
  setCampaignStatus,
  updateCampaignValues,
} from './repo.ts';
import { toCampaign } from './schemas.ts';

export const MAX_CAMPAIGNS_PER_ACCOUNT = 1000;

export interface CampaignServices {
  db: Database;
  events: EventOutbox;
  prices: PriceTable;
  now: () => Date;
}

export interface CampaignInput {
  name: string;
  message: CampaignMessage;
  audience: Audience;
  schedule?: { startAt?: string; sendWindow?: CampaignWindow };
  pacing?: { messagesPerSecond?: number };
}

/** Who acts: the account (its channel's provider) and the key's mode. */
export interface CampaignActor {
  id: string;
  channelProvider: Provider;
  mode: SendMode;
}

function valuesOf(input: CampaignInput): CampaignValues {
  return {
    name: input.name.trim(),
    message: { ...input.message, parameters: input.message.parameters ?? [] },
    audience: input.audience,
    start_at: input.schedule?.startAt ? new Date(input.schedule.startAt) : null,
    send_window: input.schedule?.sendWindow ?? null,
    messages_per_second: input.pacing?.messagesPerSecond ?? null,
  };
}

function inputOf(row: CampaignRow): CampaignInput {
  return {
    name: row.name,
    message: row.message,
    audience: row.audience,
    schedule: {
      ...(row.start_at ? { startAt: row.start_at.toISOString() } : {}),
      ...(row.send_window ? { sendWindow: row.send_window } : {}),
    },
    pacing: row.messages_per_second === null ? {} : { messagesPerSecond: row.messages_per_second },
  };
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** Every fault of a campaign as saved, each with its field. */
async function check(sql: Sql, accountId: string, v: CampaignValues): Promise<void> {
  const issues: FieldIssue[] = [];
  if (!v.name) issues.push({ field: 'name', issue: 'must not be blank' });
  issues.push(...audienceProblems(v.audience));
  const unknown = await unknownContactIds(sql, accountId, v.audience);
  if (unknown.length > 0) {
    issues.push({
      field: 'audience.contactIds',
      issue: `are not contacts of this account: ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ', …' : ''}`,
    });
  }
  const { templateName: name, templateLanguage: language } = v.message;
  const parameters = v.message.parameters ?? [];
  const template = await findTemplateByName(sql, accountId, name, language);
  if (!template) {
    issues.push({ field: 'message.templateName', issue: `no template ${name} in ${language}` });
  } else if (template.parameter_format === 'NAMED') {
    // Every placeholder by name, and no other (the values are Liquid, rendered per recipient).
    issues.push(...namedParameterIssues(template, parameters, 'message.parameters'));
  } else if (!Array.isArray(parameters)) {
    issues.push({
      field: 'message.parameters',
      issue: `must be a list for the POSITIONAL template ${name}: its values in order`,
    });
  } else if (parameters.length !== template.parameter_count) {
    issues.push({
      field: 'message.parameters',
      issue: `must hold ${template.parameter_count} value(s) for template ${name}, not ${parameters.length}`,
    });
  }
  const entries = Array.isArray(parameters)
    ? parameters.map((p, i) => [`message.parameters[${i}]`, p] as const)
    : Object.entries(parameters).map(([k, p]) => [`message.parameters.${k}`, p] as const);
  for (const [field, p] of entries) {
    const problem = templateProblem(p);
    if (problem) issues.push({ field, issue: problem });
  }
  const w = v.send_window;
  if (w && minutes(w.until) <= minutes(w.from)) {
    issues.push({ field: 'schedule.sendWindow.until', issue: 'must be later in the day than from' });
  }
  if (issues.length > 0) throw invalidFields(issues);
}

export async function viewOf(s: { db: Sql; prices: PriceTable }, row: CampaignRow) {
  const { counters, chargedMicros } = (await countersOf(s.db, [row.id])).get(row.id)!;
  return toCampaign(row, counters, chargedMicros, s.prices.currency);
}

/** Moves a campaign's status and tells it (campaign.status_changed, kind "message"). */
export async function moveCampaign(
  tx: Tx,
  s: CampaignServices,
  before: CampaignRow,
  change: StatusChange,
): Promise<CampaignRow> {
  const row = await setCampaignStatus(tx, before.id, change, s.now());
  await s.events.emit(tx, {
    type: 'campaign.status_changed',
    accountId: row.account_id,
    data: { kind: 'message', ...(await viewOf({ ...s, db: tx }, row)), previousStatus: before.status },
  });
  return row;
}

export async function createCampaign(s: CampaignServices, accountId: string, input: CampaignInput) {
  const values = valuesOf(input);
  await check(s.db, accountId, values);
  return s.db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('campaigns:' || $1, 0))`, [accountId]);
    if ((await countCampaigns(tx, accountId)) >= MAX_CAMPAIGNS_PER_ACCOUNT) {
      throw conflict(`At most ${MAX_CAMPAIGNS_PER_ACCOUNT} campaigns are kept; delete one first.`);
    }
    return insertCampaign(tx, newId('campaign'), accountId, values, s.now());
  });
}

export async function getCampaign(s: { db: Sql }, accountId: string, id: string): Promise<CampaignRow> {
  const row = await findCampaign(s.db, accountId, id);
  if (!row) throw notFound('campaign');
  return row;
}

async function locked(tx: Tx, accountId: string, id: string, action: CampaignAction): Promise<CampaignRow> {
  const row = await findCampaign(tx, accountId, id, { forUpdate: true });
  if (!row) throw notFound('campaign');
  assertAllowed(row.status, action);
  return row;
}

/** PUT (a full replacement) or PATCH (the fields given) of a draft. */
export async function changeCampaign(
  s: CampaignServices,
  accountId: string,
  id: string,
  change: { replace: CampaignInput } | { patch: Partial<CampaignInput> },
) {
  const before = await getCampaign(s, accountId, id);
  assertAllowed(before.status, 'change');
  const input = 'replace' in change ? change.replace : { ...inputOf(before), ...change.patch };
  const values = valuesOf(input);
  await check(s.db, accountId, values);
  return s.db.transaction(async (tx) => {
    await locked(tx, accountId, id, 'change');
    return updateCampaignValues(tx, id, values, s.now());
  });
}

/** Deletes a campaign not under way (draft, completed, canceled); its messages stay in the history. */
export async function removeCampaign(s: CampaignServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    await locked(tx, accountId, id, 'delete');
    await deleteCampaign(tx, id);
  });
}

/** The campaign's template, approved (422 otherwise, as a send would answer). */
async function sendableTemplate(sql: Sql, row: CampaignRow): Promise<TemplateRow> {
  const { templateName: name, templateLanguage: language } = row.message;
  const template = await findTemplateByName(sql, row.account_id, name, language);
  if (!template) throw conflict(`The campaign's template ${name} (${language}) was deleted.`);
  if (template.status !== 'APPROVED') {
    throw new ApiError(
      'TEMPLATE_NOT_APPROVED',
      `Template ${name} (${language}) is ${template.status}; a campaign sends only an APPROVED template.`,
      {
        details: [{ field: 'message.templateName', issue: `is ${template.status}`, templateId: template.id }],
      },
    );
  }
  return template;
}

async function balanceOf(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ balance: string }>(
    'SELECT wallet_balance_micros AS balance FROM accounts WHERE id = $1',
    [accountId],
  );
  return Number(rows[0]?.balance ?? 0);
}

/** POST …/estimate: what the campaign would cost if it started now, by country and category; stored. */
export async function estimateCampaign(s: CampaignServices, actor: CampaignActor, id: string) {
  const row = await getCampaign(s, actor.id, id);
  assertAllowed(row.status, 'estimate');
  const template = await sendableTemplate(s.db, row);
  const now = s.now();
  const walked = await walkAudience(
    s.db,
    s.prices,
    row,
    { category: template.category as TemplateCategory },
    providerFor(actor.channelProvider, actor.mode),
    now,
    false,
  );
  await s.db.query(
    `UPDATE campaigns SET estimated_micros = $2, estimated_at = $3 WHERE id = $1 AND status = 'draft'`,
    [id, walked.totalMicros, now],
  );
  const balance = await balanceOf(s.db, actor.id);
  return { campaignId: id, ...walked, balanceMicros: balance, estimatedAt: now };
}

export function shortfallError(requiredMicros: number, balanceMicros: number): ApiError {
  return new ApiError(
    'INSUFFICIENT_BALANCE',
    `The campaign is estimated at ${requiredMicros / 1e6} and the wallet holds ${balanceMicros / 1e6}: top it up by ${(requiredMicros - balanceMicros) / 1e6} to start.`,
    {
      details: [
        {
          field: 'wallet',
          issue: 'cannot pay the campaign’s estimate',
          requiredMicros,
          balanceMicros,
          shortfallMicros: requiredMicros - balanceMicros,
        },
      ],
    },
  );
}

/**
 * Starts a draft: fixes its audience and its estimate in one transaction, refused (402, nothing
 * written) when the wallet cannot pay the estimate. The key's mode is the campaign's from now on.
 */
export async function startCampaign(s: CampaignServices, actor: CampaignActor, id: string) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, actor.id, id, 'start');
    const template = await sendableTemplate(tx, row);
    const now = s.now();
    const walked = await walkAudience(
      tx,
      s.prices,
      row,
      { category: template.category as TemplateCategory },
      providerFor(actor.channelProvider, actor.mode),
      now,
      true,
    );
    if (walked.recipients + walked.skipped === 0) throw conflict('The audience has no contacts.');
    const balance = await balanceOf(tx, actor.id);
    if (walked.totalMicros > balance) throw shortfallError(walked.totalMicros, balance);
    const going = goingStatus(row.start_at, now);
    return moveCampaign(tx, s, row, {
      status: going,
      mode: actor.mode,
      estimated_micros: walked.totalMicros,
      estimated_at: now,
      ...(going === 'running' ? { started_at: now } : {}),
    });
  });
}

export async function pauseCampaign(s: CampaignServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) =>
    moveCampaign(tx, s, await locked(tx, accountId, id, 'pause'), { status: 'paused' }),
  );
}

export async function resumeCampaign(s: CampaignServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, accountId, id, 'resume');
    const going = goingStatus(row.start_at, s.now());
    return moveCampaign(tx, s, row, {
      status: going,
      ...(going === 'running' && !row.started_at ? { started_at: s.now() } : {}),
    });
  });
}

/** Cancels: nobody more is messaged; recipients not yet messaged are skipped (`canceled`). */
export async function cancelCampaign(s: CampaignServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, accountId, id, 'cancel');
    await tx.query(
      `UPDATE campaign_recipients SET state = 'skipped', reason = 'canceled' WHERE campaign_id = $1 AND state = 'pending'`,
      [id],
    );
    return moveCampaign(tx, s, row, { status: 'canceled', completed_at: s.now() });
  });
}
