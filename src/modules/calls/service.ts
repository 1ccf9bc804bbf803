// Calls from the API (docs/voice.md § Calls): making one (checked, its texts rendered, its price
// fixed, queued for the dialler), cancelling or hanging one up, and the sandbox's key presses.
// A call is made `queued` and the dialler (dialer.ts) places it; everything after comes from the
// provider's callbacks (callbacks.ts) through the status machine (transition.ts, status.ts).
import type { Channels } from '../../channels/registry.ts';
import { endSimulation, type SimState } from '../../channels/sandbox/voice-simulator.ts';
import type { HangUpHow } from '../../channels/voice.ts';
import type { Sql, Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import type { CausedBy } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { countryOf, normalizePhone } from '../../kernel/values/phones.ts';
import { hasFeature, planOf } from '../accounts/index.ts';
import { liquidDataIssue, RenderLimitError, render, TemplateError } from '../automation/index.ts';
import type { ContactServices } from '../contacts/index.ts';
import { type ContactRow, contactIdNamedBy, findContact, toContact } from '../contacts/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { loadVoiceChannel } from '../voice-channel/index.ts';
import type { Definition } from '../voice-scripts/index.ts';
import { findScript, type ScriptWithTwiml, sayBudget } from '../voice-scripts/index.ts';
import { requireFirstMinute } from './billing.ts';
import { type CallRow, findCall, insertCall, type NewCall, type RenderedTexts, updateCall } from './repo.ts';
import { CALL_DEFAULTS, toCall } from './schemas.ts';
import { applyCallUpdate } from './status.ts';
import { ENDED } from './transition.ts';

export interface CallServices extends ContactServices {
  prices: PriceTable;
  channels: Channels;
  /** Wakes this process's dialler (a new call is due now). */
  voice: { wake(): void };
}

export interface CallInput {
  to: string;
  scriptId: string;
  variables?: Record<string, unknown>;
  machineDetection?: boolean;
  ringTimeoutSeconds?: number;
  maxDurationSeconds?: number;
}

export interface CallOrigin {
  /** Made with a sandbox key: the sandbox plays it, whatever the account's voice channel. */
  sandbox: boolean;
  campaign?: { id: string; attempt: number };
  causedBy?: CausedBy;
  /** A journey's place_call node: its run waits there for the call's end. */
  journeyNodeId?: string;
}

/** Every text a script says, with its field: the tts text, or each ivr node's. */
function textsOf(d: Definition): [string, string][] {
  if (d.type === 'tts') return d.tts ? [['tts.text', d.tts.text]] : [];
  return Object.entries(d.ivr?.nodes ?? {}).flatMap(([id, node]): [string, string][] =>
    node.say === undefined ? [] : [[`ivr.nodes.${id}.say`, node.say]],
  );
}

/**
 * The script's texts rendered for one contact and the call's variables, each within what its voice
 * speaks (400 naming `variables` when one cannot be rendered, or renders too long).
 */
export async function renderTexts(d: Definition, scope: object): Promise<RenderedTexts> {
  const rendered: RenderedTexts = {};
  for (const [field, text] of textsOf(d)) {
    try {
      rendered[text] = await render(text, scope, sayBudget(d.voice, field));
    } catch (err) {
      if (err instanceof RenderLimitError) {
        throw invalid('variables', `the script's ${err.field} ${err.issue} with these values`);
      }
      if (!(err instanceof TemplateError)) throw err;
      throw invalid(
        'variables',
        `the script's text ${JSON.stringify(text.slice(0, 60))} cannot be rendered: ${err.message}`,
      );
    }
  }
  return rendered;
}

/** The script a call plays: the account's, published (404, 409 otherwise). */
async function callableScript(sql: Sql, accountId: string, id: string): Promise<ScriptWithTwiml> {
  const script = await findScript(sql, accountId, id);
  if (!script) throw notFound('voice script');
  if (script.status !== 'published') {
    throw conflict(`The voice script is ${script.status}: only a published script can be called.`);
  }
  return script;
}

/** What a call is made of, read and rendered before the transaction that stores it. */
async function prepareCall(
  sql: Sql,
  s: Pick<CallServices, 'prices'>,
  accountId: string,
  script: ScriptWithTwiml,
  input: Omit<CallInput, 'to' | 'scriptId'>,
  to: { phone: string; contact: ContactRow | null },
  origin: CallOrigin,
): Promise<Omit<NewCall, 'id'>> {
  const channel = await loadVoiceChannel(sql, accountId);
  const provider = origin.sandbox ? 'sandbox' : channel.provider;
  const country = countryOf(to.phone);
  const variables = input.variables ?? {};
  const rendered = await renderTexts(script.definition, {
    contact: to.contact ? { ...toContact(to.contact), country: countryOf(to.phone) } : null,
    variables,
  });
  return {
    account_id: accountId,
    provider,
    mode: origin.sandbox ? 'sandbox' : 'live',
    to_number: to.phone,
    from_number: provider === 'twilio' ? (channel.twilio?.from ?? null) : null,
    country,
    contact_id: to.contact?.id ?? null,
    script_id: script.id,
    script_version: script.version,
    variables,
    rendered,
    machine_detection: input.machineDetection ?? false,
    ring_timeout_seconds: input.ringTimeoutSeconds ?? CALL_DEFAULTS.ringTimeoutSeconds,
    max_duration_seconds: input.maxDurationSeconds ?? CALL_DEFAULTS.maxDurationSeconds,
    rate_micros: provider === 'sandbox' ? 0 : s.prices.voicePerMinute(country),
    campaign_id: origin.campaign?.id ?? null,
    campaign_attempt: origin.campaign?.attempt ?? null,
    caused_by: origin.causedBy ?? null,
    journey_node_id: origin.journeyNodeId ?? null,
  };
}

/** Stores a prepared call, queued (402 when the wallet cannot pay its first minute). */
async function storeCall(
  tx: Tx,
  s: Pick<CallServices, 'events' | 'prices' | 'now'>,
  call: Omit<NewCall, 'id'>,
) {
  await requireFirstMinute(tx, call.account_id, Number(call.rate_micros));
  const row = await insertCall(tx, { id: newId('call'), ...call }, s.now());
  await emitQueued(tx, s, row);
  return row;
}

/** Makes a call (queued); the dialler places it. */
export async function createCall(
  s: CallServices,
  account: { id: string; countryCode: string },
  input: CallInput,
  origin: CallOrigin,
): Promise<CallRow> {
  const phone = normalizePhone(input.to, account.countryCode);
  if (!phone) throw invalid('to', 'is not a phone number (E.164, such as +14155550123)');
  const tooMuch = liquidDataIssue(input.variables, 'variables');
  if (tooMuch) throw invalid(tooMuch.field, tooMuch.issue);
  // The script first: a refused call makes no contact.
  const script = await callableScript(s.db, account.id, input.scriptId);
  const contactId = await contactIdNamedBy(s, account, { to: phone });
  const contact = await findContact(s.db, account.id, contactId);
  const prepared = await prepareCall(s.db, s, account.id, script, input, { phone, contact }, origin);
  const call = await s.db.transaction((tx) => storeCall(tx, s, prepared));
  s.voice.wake();
  return call;
}

/**
 * Why a contact is not called: it has no phone (WhatsApp knows the customer by their user id alone,
 * and a call goes to a number). Rules' place_call skips it, a journey's place_call node leaves by
 * its `failed` edge, a voice campaign counts it `skipped`: never an error of the run or the start.
 */
export const NO_PHONE = {
  code: 'no_phone',
  message: 'The contact has no phone number (WhatsApp knows them by their user id alone): a call needs one.',
} as const;

/**
 * Makes a call to a contact inside an automation's (or a campaign's) transaction: a rule's
 * place_call action, a journey's place_call node. Throws ApiError when the account's plan has no
 * voice, the script is not published, or the wallet cannot pay a minute.
 */
export async function placeCallIn(
  tx: Tx,
  s: Pick<CallServices, 'events' | 'prices' | 'now'>,
  accountId: string,
  contact: ContactRow & { phone: string },
  input: Omit<CallInput, 'to'>,
  origin: CallOrigin,
): Promise<CallRow> {
  const { rows } = await tx.query<{ plan_code: string; addons: string[] }>(
    'SELECT plan_code, addons FROM accounts WHERE id = $1',
    [accountId],
  );
  if (!rows[0] || !hasFeature(planOf(rows[0].plan_code), rows[0].addons, 'voice')) {
    throw new ApiError('PLAN_UPGRADE_REQUIRED', "The account's plan does not include voice.");
  }
  const script = await callableScript(tx, accountId, input.scriptId);
  const prepared = await prepareCall(
    tx,
    s,
    accountId,
    script,
    input,
    { phone: contact.phone, contact },
    origin,
  );
  return storeCall(tx, s, prepared);
}

async function emitQueued(tx: Tx, s: Pick<CallServices, 'events' | 'prices'>, row: CallRow): Promise<void> {
  await s.events.emit(tx, {
    type: 'call.status_changed',
    accountId: row.account_id,
    data: { ...toCall(row, s.prices.currency), previousStatus: null },
    ...(row.caused_by ? { causedBy: row.caused_by as CausedBy } : {}),
  });
}

export async function getCall(
  s: { db: CallServices['db'] },
  accountId: string,
  id: string,
): Promise<CallRow> {
  const row = await findCall(s.db, accountId, id);
  if (!row) throw notFound('call');
  return row;
}

/**
 * Cancels a call not yet answered, or hangs up one in progress (docs/voice.md § Cancel):
 *   queued (not being dialled) → canceled at once;
 *   queued while the dialler places it → canceled as soon as the provider has it;
 *   initiated, ringing → the provider cancels it → canceled;
 *   in_progress → the provider hangs up → completed (billed to the minute);
 *   ended → 409.
 */
export async function cancelCall(s: CallServices, accountId: string, id: string): Promise<CallRow> {
  const asked = await s.db.transaction<{ done: CallRow } | { call: CallRow; how: HangUpHow }>(async (tx) => {
    const call = await findCall(tx, accountId, id, { forUpdate: true });
    if (!call) throw notFound('call');
    if (ENDED.includes(call.status)) throw conflict(`The call has ended (${call.status}).`);
    if (call.status === 'queued' && !call.provider_call_id) {
      if (call.lease_until === null) {
        return { done: (await applyCallUpdate(tx, s, call, { status: 'canceled', at: s.now() })).call };
      }
      // Being placed now: the dialler cancels it when the provider has answered.
      await updateCall(tx, id, { hangup_requested_at: s.now() }, s.now());
      return { done: { ...call, hangup_requested_at: s.now() } };
    }
    await updateCall(tx, id, { hangup_requested_at: s.now() }, s.now());
    return { call, how: (call.status === 'in_progress' ? 'complete' : 'cancel') as HangUpHow };
  });
  if ('done' in asked) return asked.done;
  return hangUp(s, asked.call, asked.how);
}

/** Asks the provider to end a call it has, then records the end (unless a callback did first). */
export async function hangUp(s: CallServices, call: CallRow, how: HangUpHow): Promise<CallRow> {
  const channel = await loadVoiceChannel(s.db, call.account_id);
  if (call.provider_call_id) {
    const outcome = await s.channels
      .voice(call.provider, channel)
      .hangUp({ callId: call.id, providerCallId: call.provider_call_id }, how);
    if (outcome.kind === 'failed') {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        `The provider could not end the call: ${outcome.error.message}`,
      );
    }
  }
  return s.db.transaction(async (tx) => {
    const now = (await findCall(tx, call.account_id, call.id, { forUpdate: true }))!;
    if (now.provider === 'sandbox' && now.sim) {
      const sim = endSimulation(now.sim as SimState, how === 'cancel' ? 'canceled' : 'completed');
      await updateCall(tx, now.id, { sim, sim_due_at: s.now() }, s.now());
    }
    if (ENDED.includes(now.status)) return now;
    return (
      await applyCallUpdate(tx, s, now, { status: how === 'cancel' ? 'canceled' : 'completed', at: s.now() })
    ).call;
  });
}

/** Sandbox calls: keys pressed, taken by the call's next gather (at once if one is waiting). */
export async function pressKeys(
  s: CallServices,
  accountId: string,
  id: string,
  keys: string,
): Promise<CallRow> {
  return s.db.transaction(async (tx) => {
    const call = await findCall(tx, accountId, id, { forUpdate: true });
    if (!call) throw notFound('call');
    if (call.provider !== 'sandbox') throw conflict('Keys can be pressed on sandbox calls only.');
    if (ENDED.includes(call.status)) throw conflict(`The call has ended (${call.status}).`);
    const waiting = (call.sim as SimState | null)?.phase === 'gather';
    const { rows } = await tx.query<CallRow>(
      `UPDATE calls SET sim_keys = sim_keys || $2, sim_due_at = CASE WHEN $3 THEN $4 ELSE sim_due_at END, updated_at = $4
        WHERE id = $1 RETURNING *`,
      [id, keys, waiting, s.now()],
    );
    s.voice.wake();
    return rows[0] as CallRow;
  });
}
