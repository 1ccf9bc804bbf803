// Voice campaigns from the API (docs/voice.md § Campaigns), on the campaign engine shared with
// broadcast campaigns: its status machine (campaign-shared/states.ts: a move from a wrong state is
// 409) and its audience (campaign-shared/audience.ts: a tag, tags, contact ids or conditions, read a
// page at a time). Starting fixes the audience (a row per contact) and the estimate; the pacer
// (pacer.ts) makes the calls. Saving checks every field at once.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { countryOf } from '../../kernel/values/phones.ts';
import { durationMs, durationProblem, liquidDataIssue } from '../automation/index.ts';
import type { CallRow } from '../calls/index.ts';
import { applyCallUpdate, billableMinutes } from '../calls/index.ts';
import {
  assertAllowed,
  audienceProblems,
  type CampaignAction,
  eachAudiencePage,
  goingStatus,
  unknownContactIds,
} from '../campaign-shared/index.ts';
import { invalidFields } from '../contacts/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { loadVoiceChannel } from '../voice-channel/index.ts';
import { callableScriptProblem } from '../voice-scripts/index.ts';
import {
  type Audience,
  type CampaignRow,
  type CampaignStatus,
  type CampaignValues,
  countCampaigns,
  countersOf,
  deleteCampaign,
  findCampaign,
  insertAudience,
  insertCampaign,
  setCampaignStatus,
  updateCampaignValues,
} from './repo.ts';
import { CAMPAIGN_DEFAULTS, toCampaign } from './schemas.ts';

export const MAX_CAMPAIGNS_PER_ACCOUNT = 500;

export interface CampaignServices {
  db: Database;
  events: EventOutbox;
  prices: PriceTable;
  now: () => Date;
}

export interface CampaignInput {
  name: string;
  scriptId: string;
  audience: Audience;
  schedule?: { startAt?: string; callingHours?: { from: string; until: string } };
  pacing?: { callsPerSecond?: number; maxConcurrent?: number };
  retry?: { on?: string[]; maxAttempts?: number; after?: string };
  call?: {
    variables?: Record<string, unknown>;
    machineDetection?: boolean;
    ringTimeoutSeconds?: number;
    maxDurationSeconds?: number;
  };
}

function valuesOf(input: CampaignInput, before?: CampaignRow): Omit<CampaignValues, 'estimated_cost_micros'> {
  const hours =
    input.schedule?.callingHours ??
    (before ? { from: before.calling_from, until: before.calling_until } : CAMPAIGN_DEFAULTS.callingHours);
  const startAt = input.schedule ? input.schedule.startAt : before?.start_at?.toISOString();
  return {
    name: input.name.trim(),
    script_id: input.scriptId,
    audience: input.audience,
    start_at: startAt ? new Date(startAt) : null,
    calling_from: hours.from,
    calling_until: hours.until,
    calls_per_second:
      input.pacing?.callsPerSecond ?? before?.calls_per_second ?? CAMPAIGN_DEFAULTS.pacing.callsPerSecond,
    max_concurrent:
      input.pacing?.maxConcurrent ?? before?.max_concurrent ?? CAMPAIGN_DEFAULTS.pacing.maxConcurrent,
    retry_on: input.retry?.on ?? before?.retry_on ?? [...CAMPAIGN_DEFAULTS.retry.on],
    max_attempts: input.retry?.maxAttempts ?? before?.max_attempts ?? CAMPAIGN_DEFAULTS.retry.maxAttempts,
    retry_after: input.retry?.after ?? before?.retry_after ?? CAMPAIGN_DEFAULTS.retry.after,
    call_settings: {
      ...(before?.call_settings ?? {}),
      ...(input.call ?? {}),
      maxDurationSeconds:
        input.call?.maxDurationSeconds ??
        before?.call_settings.maxDurationSeconds ??
        CAMPAIGN_DEFAULTS.maxDurationSeconds,
    },
  };
}

/** Every fault of a campaign as saved, each with its field. */
async function check(
  s: CampaignServices,
  accountId: string,
  v: Omit<CampaignValues, 'estimated_cost_micros'>,
  planCps: number,
) {
  const issues: FieldIssue[] = [];
  if (!v.name) issues.push({ field: 'name', issue: 'must not be blank' });
  const script = await callableScriptProblem(s.db, accountId, v.script_id);
  if (script) issues.push({ field: 'scriptId', issue: script });
  if (v.calling_from >= v.calling_until)
    issues.push({ field: 'schedule.callingHours', issue: 'from must be before until' });
  if (v.calling_from < '08:00' || v.calling_until > '21:00') {
    issues.push({
      field: 'schedule.callingHours',
      issue: 'must lie within 08:00–21:00, the contact’s local time',
    });
  }
  if (v.calls_per_second > planCps) {
    issues.push({ field: 'pacing.callsPerSecond', issue: `exceeds the plan’s ${planCps} calls per second` });
  }
  const after = durationProblem(v.retry_after);
  if (after) issues.push({ field: 'retry.after', issue: after });
  else if (durationMs(v.retry_after) > 86_400_000)
    issues.push({ field: 'retry.after', issue: 'must be at most a day (P1D)' });
  issues.push(...audienceProblems(v.audience));
  const variables = liquidDataIssue(v.call_settings.variables, 'call.variables');
  if (variables) issues.push(variables);
  const missing = await unknownContactIds(s.db, accountId, v.audience);
  if (missing.length > 0) {
    issues.push({
      field: 'audience.contactIds',
      issue: `are not contacts of this account: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`,
    });
  }
  if (issues.length > 0) throw invalidFields(issues);
}

/**
 * What the audience's calls would cost at most: each contact's rate × the call's minutes
 * (unanswered calls are free). With `fix` (a start), each page of the audience also becomes rows.
 */
async function walk(
  s: CampaignServices,
  sql: Database | Tx,
  accountId: string,
  v: Pick<CampaignValues, 'call_settings' | 'audience'>,
  options: { sandbox: boolean; fix?: { campaignId: string; now: Date } },
): Promise<{ contacts: number; costMicros: number }> {
  const channel = await loadVoiceChannel(sql, accountId);
  const free = options.sandbox || channel.provider === 'sandbox';
  const minutes = billableMinutes(v.call_settings.maxDurationSeconds);
  const out = { contacts: 0, costMicros: 0 };
  await eachAudiencePage(sql, accountId, v.audience, s.now(), async (contacts) => {
    out.contacts += contacts.length;
    if (!free) {
      // A contact without a phone is skipped (insertAudience): it costs nothing.
      for (const c of contacts)
        if (c.phone) out.costMicros += s.prices.voicePerMinute(countryOf(c.phone)) * minutes;
    }
    if (options.fix && contacts.length > 0) {
      await insertAudience(sql, options.fix.campaignId, contacts, options.fix.now);
    }
  });
  return out;
}

export async function viewOf(s: CampaignServices, row: CampaignRow) {
  const counters = (await countersOf(s.db, [row.id])).get(row.id)!;
  return toCampaign(row, counters, s.prices.currency);
}

async function emitStatus(tx: Tx, s: CampaignServices, before: CampaignRow) {
  const row = (await findCampaign(tx, before.account_id, before.id))!;
  const counters = (await countersOf(tx, [row.id])).get(row.id)!;
  await s.events.emit(tx, {
    type: 'campaign.status_changed',
    accountId: row.account_id,
    data: { kind: 'voice', ...toCampaign(row, counters, s.prices.currency), previousStatus: before.status },
  });
  return row;
}

/** Moves a campaign's status and tells it (campaign.status_changed). */
export async function moveCampaign(
  tx: Tx,
  s: CampaignServices,
  before: CampaignRow,
  status: CampaignStatus,
  extra: Omit<Parameters<typeof setCampaignStatus>[2], 'status'> = {},
): Promise<CampaignRow> {
  await setCampaignStatus(tx, before.id, { status, ...extra }, s.now());
  return emitStatus(tx, s, before);
}

export async function createCampaign(
  s: CampaignServices,
  account: { id: string; planCps: number },
  input: CampaignInput,
) {
  const values = valuesOf(input);
  await check(s, account.id, values, account.planCps);
  const cost = (await walk(s, s.db, account.id, values, { sandbox: false })).costMicros;
  return s.db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('voice_campaigns:' || $1, 0))`, [
      account.id,
    ]);
    if ((await countCampaigns(tx, account.id)) >= MAX_CAMPAIGNS_PER_ACCOUNT) {
      throw conflict(`At most ${MAX_CAMPAIGNS_PER_ACCOUNT} voice campaigns are allowed; delete one first.`);
    }
    return insertCampaign(
      tx,
      newId('voiceCampaign'),
      account.id,
      { ...values, estimated_cost_micros: cost },
      s.now(),
    );
  });
}

async function locked(tx: Tx, accountId: string, id: string, action: CampaignAction): Promise<CampaignRow> {
  const row = await findCampaign(tx, accountId, id, { forUpdate: true });
  if (!row) throw notFound('voice campaign');
  assertAllowed(row.status, action);
  return row;
}

export async function getCampaign(s: { db: Database }, accountId: string, id: string): Promise<CampaignRow> {
  const row = await findCampaign(s.db, accountId, id);
  if (!row) throw notFound('voice campaign');
  return row;
}

export async function patchCampaign(
  s: CampaignServices,
  account: { id: string; planCps: number },
  id: string,
  patch: Partial<CampaignInput>,
) {
  const before = await getCampaign(s, account.id, id);
  const input: CampaignInput = {
    name: before.name,
    scriptId: before.script_id,
    audience: before.audience,
    ...patch,
  };
  const values = valuesOf(input, before);
  await check(s, account.id, values, account.planCps);
  const cost = (await walk(s, s.db, account.id, values, { sandbox: false })).costMicros;
  return s.db.transaction(async (tx) => {
    await locked(tx, account.id, id, 'change');
    await updateCampaignValues(tx, id, { ...values, estimated_cost_micros: cost }, s.now());
    return (await findCampaign(tx, account.id, id))!;
  });
}

/** Deletes a campaign not under way (draft, completed, canceled); its calls stay in the history. */
export async function removeCampaign(s: CampaignServices, accountId: string, id: string): Promise<void> {
  await s.db.transaction(async (tx) => {
    await locked(tx, accountId, id, 'delete');
    await deleteCampaign(tx, id);
  });
}

export async function startCampaign(s: CampaignServices, accountId: string, id: string, sandbox: boolean) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, accountId, id, 'start');
    const script = await callableScriptProblem(tx, accountId, row.script_id);
    if (script) throw conflict(`The campaign's script ${script}.`);
    const now = s.now();
    const fixed = await walk(s, tx, accountId, row, { sandbox, fix: { campaignId: id, now } });
    if (fixed.contacts === 0) throw conflict('The audience has no contacts.');
    const going = goingStatus(row.start_at, now);
    return moveCampaign(tx, s, row, going, {
      mode: sandbox ? 'sandbox' : 'live',
      estimated_cost_micros: fixed.costMicros,
      ...(going === 'running' ? { started_at: now } : {}),
    });
  });
}

export async function pauseCampaign(s: CampaignServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, accountId, id, 'pause');
    return moveCampaign(tx, s, row, 'paused');
  });
}

export async function resumeCampaign(s: CampaignServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, accountId, id, 'resume');
    const going = goingStatus(row.start_at, s.now());
    return moveCampaign(
      tx,
      s,
      row,
      going,
      going === 'scheduled' || row.started_at ? {} : { started_at: s.now() },
    );
  });
}

/** Cancels: no new call; calls not yet placed are canceled; calls under way end as they will. */
export async function cancelCampaign(s: CampaignServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    const row = await locked(tx, accountId, id, 'cancel');
    const moved = await moveCampaign(tx, s, row, 'canceled', { ended_at: s.now() });
    const { rows: queued } = await tx.query<CallRow>(
      `SELECT * FROM calls WHERE campaign_id = $1 AND status = 'queued' AND lease_until IS NULL FOR UPDATE`,
      [id],
    );
    for (const call of queued) await applyCallUpdate(tx, s, call, { status: 'canceled', at: s.now() });
    await tx.query(
      `UPDATE voice_campaign_contacts SET state = 'done', outcome = 'canceled' WHERE campaign_id = $1 AND state = 'pending'`,
      [id],
    );
    return moved;
  });
}
