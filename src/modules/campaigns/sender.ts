// The campaign sender (docs/messaging.md § Campaigns), loops in every process that runs workers
// (TIDINGS_CAMPAIGN_LANES of them, each on its own connection). A round of a running campaign is one
// transaction:
//   1. the campaign read FOR SHARE: rounds of many lanes and processes run side by side, while a
//      pause, resume or cancel (FOR UPDATE) waits for the rounds under way and every later round
//      sees it: once a pause has answered, nobody more is messaged;
//   2. its due pending recipients, FOR UPDATE SKIP LOCKED (each round its own): a deleted contact
//      is skipped, one outside the send window waits for its next opening;
//   3. how many may go this second: the campaign's own rate (and a throttling hold, pace.ts), the
//      account's channel throughput, both per-second slots in rate_slots (exact across lanes and
//      processes), and the messaging limit tier (unique recipients in 24 hours, counted under an
//      advisory lock of the account);
//   4. each recipient's template with its parameters rendered (Liquid over the contact), accepted
//      through acceptBatch, the send path of every message (price, charge, window rule, dispatch
//      job); in the same transaction the rows become `messaged` (or `failed` with the send path's
//      refusal, or `skipped` as `opted_out` when the contact opted out of marketing since the start).
//      A crash before the commit sends nobody, after it nobody again: exactly once per
//      (campaign, contact).
// What changes the campaign's own row is done apart, each in a short transaction that locks it:
// starting a scheduled campaign whose time came, lifting a throttling hold step by step, pausing
// it when the wallet cannot pay (`insufficient_balance`) or the template is no longer approved,
// completing it when no recipient is pending.
import type { FastifyBaseLogger } from 'fastify';
import type { Provider } from '../../channels/types.ts';
import { PollingLoop } from '../../kernel/async/polling-loop.ts';
import type { Tx } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { idAt } from '../../kernel/values/ids.ts';
import {
  contactZone,
  type FieldSchema,
  nextOpening,
  renderFields,
  scopeOf,
  TemplateError,
  WEEKDAYS,
} from '../automation/index.ts';
import { takeSlots } from '../campaign-shared/index.ts';
import type { ContactRow } from '../contacts/index.ts';
import { contactCountry, recipientOf } from '../contacts/index.ts';
import { holdAgainstErasure } from '../erasure/index.ts';
import type { AcceptServices } from '../messages/index.ts';
import {
  acceptBatch,
  type PreparedMessage,
  prepareMessage,
  type SendResult,
  templateLookup,
  wakeDispatchers,
} from '../messages/index.ts';
import { channelLimits } from './channel-limits.ts';
import { recoveredBackoff, setRate } from './pace.ts';
import type { CampaignRow } from './repo.ts';
import { MessageSchema } from './schemas.ts';
import { moveCampaign } from './service.ts';

/** Recipients a round looks at, at most. */
export const SEND_BATCH = 500;

/** How often a lane other than the first looks for work by itself (the first wakes it sooner). */
const IDLE_LANE_POLL_MS = 30_000;
const PARAMETERS_SCHEMA = MessageSchema.properties.parameters as FieldSchema;

export interface SenderDeps extends AcceptServices {
  log: FastifyBaseLogger;
  pollMs: number;
  /** Loops per process, each on its own connection. */
  lanes: number;
}

interface Live extends CampaignRow {
  account_status: string;
  country_code: string;
  provider: Provider | null;
  whatsapp: { throughputPerSecond?: number | null; messagingLimitTier?: string | null } | null;
}

/** Why a recipient was passed over mid-campaign (the start skips `opted_out` ones too). */
type SkipReason = 'contact_deleted' | 'opted_out';

type PauseReason = 'insufficient_balance' | 'template_not_approved';

interface Round {
  /** Recipients settled (messaged, failed or skipped). */
  settled: number;
  results: SendResult[];
  /** No recipient was due: the campaign may be complete. */
  idle: boolean;
  pause: PauseReason | null;
}

const NOTHING: Round = { settled: 0, results: [], idle: false, pause: null };

/** A due recipient and its contact's columns (contact_rows; all null when the contact was deleted). */
type Due = { contact_id: string } & { [K in keyof ContactRow]: ContactRow[K] | null };

function contactOf(due: Due): ContactRow | null {
  if (due.id === null) return null;
  const { contact_id: _, ...row } = due;
  return row as ContactRow;
}

export class CampaignSender {
  readonly #d: SenderDeps;
  readonly #loops: PollingLoop[];

  constructor(deps: SenderDeps) {
    this.#d = deps;
    // Lane 0 polls; the others sleep until it (or a start in this process) finds live campaigns,
    // so an idle process costs one statement a poll, not one a lane.
    this.#loops = Array.from(
      { length: Math.max(1, deps.lanes) },
      (_, lane) =>
        new PollingLoop({
          round: () => this.runOnce(lane),
          pollMs: () => (lane === 0 ? deps.pollMs : IDLE_LANE_POLL_MS),
          log: deps.log,
          failure: 'the campaign sender failed a round',
        }),
    );
  }

  start(): void {
    for (const loop of this.#loops) loop.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.#loops.map((loop) => loop.stop()));
  }

  /** A campaign started or resumed: look at once. */
  wake(): void {
    for (const loop of this.#loops) loop.wake();
  }

  /** One round of each live campaign; answers how many recipients it settled. */
  async runOnce(lane = 0): Promise<number> {
    const now = this.#d.now();
    const { rows } = await this.#d.db.query<{ id: string; status: string; backoff: boolean }>(
      `SELECT id, status, backoff_rate IS NOT NULL AS backoff FROM campaigns
        WHERE status = 'running' OR (status = 'scheduled' AND start_at <= $1) ORDER BY id LIMIT 100`,
      [now],
    );
    let settled = 0;
    for (const c of rows) {
      if (c.status === 'scheduled' || c.backoff) await this.#tend(c.id);
      settled += await this.#round(c.id);
    }
    // Recipients were due: the sleeping lanes join in (and go on while their rounds settle some).
    // A campaign waiting for its recipients' send window wakes nobody.
    if (lane === 0 && settled > 0) for (const loop of this.#loops.slice(1)) loop.wake();
    return settled;
  }

  /** Starts a scheduled campaign whose time came; lifts a throttling hold as time allows. */
  async #tend(id: string): Promise<void> {
    const d = this.#d;
    await d.db.transaction(async (tx) => {
      const { rows } = await tx.query<CampaignRow>(
        `SELECT * FROM campaigns WHERE id = $1 AND status IN ('scheduled', 'running') FOR UPDATE SKIP LOCKED`,
        [id],
      );
      const c = rows[0];
      if (!c) return;
      const now = d.now();
      if (c.status === 'scheduled') {
        if (c.start_at && c.start_at <= now)
          await moveCampaign(tx, d, c, { status: 'running', started_at: now });
        return;
      }
      const backoff = recoveredBackoff(c, now);
      if (backoff.rate !== c.backoff_rate) {
        await tx.query('UPDATE campaigns SET backoff_rate = $2, backoff_at = $3 WHERE id = $1', [
          id,
          backoff.rate,
          backoff.at,
        ]);
      }
    });
  }

  async #round(id: string): Promise<number> {
    const d = this.#d;
    const round = await d.db.transaction(async (tx) => {
      const { rows } = await tx.query<Live>(
        `SELECT c.*, a.status AS account_status, a.country_code, ch.provider, ch.settings->'whatsapp' AS whatsapp
           FROM campaigns c JOIN accounts a ON a.id = c.account_id
           LEFT JOIN account_channels ch ON ch.account_id = c.account_id
          WHERE c.id = $1 AND c.status = 'running'
          FOR SHARE OF c`,
        [id],
      );
      const live = rows[0];
      // No longer running; a suspended account's campaign waits.
      if (live?.account_status !== 'ACTIVE') return NOTHING;
      // The recipients and their contacts are read after any erasure under way (erasure/lock.ts).
      await holdAgainstErasure(tx, [live.account_id]);
      return sendRound(tx, d, live);
    });
    wakeDispatchers(d, round.results);
    if (round.pause) await this.#settleCampaign(id, round.pause);
    else if (round.idle) await this.#settleCampaign(id, null);
    return round.settled;
  }

  /** Pauses the campaign for `reason`, or (null) completes it if no recipient is pending any more. */
  async #settleCampaign(id: string, reason: PauseReason | null): Promise<void> {
    const d = this.#d;
    await d.db.transaction(async (tx) => {
      const { rows } = await tx.query<CampaignRow>(
        `SELECT * FROM campaigns WHERE id = $1 AND status = 'running' FOR UPDATE`,
        [id],
      );
      const c = rows[0];
      if (!c) return;
      if (reason) {
        await moveCampaign(tx, d, c, { status: 'paused', paused_reason: reason });
        return;
      }
      const pending = await tx.query(
        `SELECT 1 FROM campaign_recipients WHERE campaign_id = $1 AND state = 'pending' LIMIT 1`,
        [id],
      );
      if (pending.rows.length === 0)
        await moveCampaign(tx, d, c, { status: 'completed', completed_at: d.now() });
    });
  }
}

async function sendRound(tx: Tx, d: SenderDeps, campaign: Live): Promise<Round> {
  const now = d.now();
  const { rows: due } = await tx.query<Due>(
    `SELECT r.contact_id, c.*
       FROM campaign_recipients r LEFT JOIN contact_rows c ON c.account_id = $2 AND c.id = r.contact_id
      WHERE r.campaign_id = $1 AND r.state = 'pending' AND r.due_at <= $3
      ORDER BY r.due_at, r.contact_id LIMIT ${SEND_BATCH} FOR UPDATE OF r SKIP LOCKED`,
    [campaign.id, campaign.account_id, now],
  );
  if (due.length === 0) return { ...NOTHING, idle: true };

  const skipped: { id: string; reason: SkipReason }[] = [];
  const later: { id: string; at: Date }[] = [];
  let ready: { contactId: string; contact: ContactRow }[] = [];
  const window = campaign.send_window
    ? { timezone: 'contact', days: campaign.send_window.days ?? [...WEEKDAYS], ...campaign.send_window }
    : null;
  for (const r of due) {
    const contact = contactOf(r);
    if (!contact) {
      skipped.push({ id: r.contact_id, reason: 'contact_deleted' });
      continue;
    }
    if (window) {
      const zone = contactZone({ attributes: contact.attributes, country: contactCountry(contact) }, 'UTC');
      const opening = nextOpening(now, window, zone);
      if (opening > now) {
        later.push({ id: r.contact_id, at: opening });
        continue;
      }
    }
    ready.push({ contactId: r.contact_id, contact });
  }
  ready = ready.slice(0, await allowed(tx, campaign, ready.length, now));

  const failed: { id: string; error: { code: string; message: string } }[] = [];
  const requests: { contactId: string; message: PreparedMessage }[] = [];
  const lookup = templateLookup(tx, campaign.account_id, d.approvedTemplates);
  for (const { contactId, contact } of ready) {
    try {
      const scope = scopeOf(contact, null, { id: campaign.id, type: 'campaign', data: {} }, now);
      // A POSITIONAL template's values in order, a NAMED one's by name: each within 1,024 characters.
      const parameters = await renderFields(campaign.message.parameters ?? [], scope, PARAMETERS_SCHEMA, {
        field: 'message.parameters',
        path: 'parameters',
      });
      const message = await prepareMessage(
        {
          ...recipientOf(contact),
          templateName: campaign.message.templateName,
          templateLanguage: campaign.message.templateLanguage,
          parameters,
        },
        { countryCode: campaign.country_code, lookup },
      );
      requests.push({ contactId, message });
    } catch (err) {
      if (err instanceof TemplateError) {
        failed.push({ id: contactId, error: { code: 'TEMPLATE_RENDER_FAILED', message: err.message } });
      } else if (
        err instanceof ApiError &&
        (err.code === 'TEMPLATE_NOT_APPROVED' || err.code === 'RESOURCE_NOT_FOUND')
      ) {
        // The template was paused, disabled or deleted: nobody else can be sent it either.
        return { ...NOTHING, pause: 'template_not_approved' };
      } else if (err instanceof ApiError) {
        failed.push({ id: contactId, error: { code: err.code, message: err.message } });
      } else throw err;
    }
  }
  // The round's clock for the messages too: they are counted in the second they are stamped with.
  const results = await acceptBatch(
    { ...d, now: () => now },
    tx,
    requests.map((r) => ({
      sender: {
        account: { id: campaign.account_id, channelProvider: campaign.provider ?? 'sandbox' },
        mode: campaign.mode ?? 'live',
      },
      message: r.message,
      campaign: { id: campaign.id },
    })),
  );
  const messaged: { id: string; message: string }[] = [];
  let unpaid = false;
  results.forEach((result, i) => {
    const contactId = requests[i]!.contactId;
    if (result.kind === 'accepted') messaged.push({ id: contactId, message: result.message.id });
    else if (result.kind === 'refused' && result.error.code === 'INSUFFICIENT_BALANCE') unpaid = true;
    // Opted out of marketing after the start (by the API or WhatsApp's user_preferences): skipped, as at
    // the start, not failed; the send path's strict check is what sees it.
    else if (result.kind === 'refused' && result.error.code === 'CONTACT_OPTED_OUT') {
      skipped.push({ id: contactId, reason: 'opted_out' });
    } else if (result.kind === 'refused') {
      failed.push({ id: contactId, error: { code: result.error.code, message: result.error.message } });
    }
  });
  await settleRows(tx, campaign.id, now, { messaged, failed, skipped, later });
  return {
    settled: messaged.length + failed.length + skipped.length,
    results,
    idle: false,
    // Topping up the wallet and resuming goes on where it stopped.
    pause: unpaid ? 'insufficient_balance' : null,
  };
}

/** How many of `want` recipients may be sent now: the campaign's pace, the channel's throughput and tier. */
async function allowed(tx: Tx, campaign: Live, want: number, now: Date): Promise<number> {
  let may = want;
  const rate = Math.min(setRate(campaign), campaign.backoff_rate ?? Number.POSITIVE_INFINITY);
  if (may > 0 && Number.isFinite(rate)) may = await takeSlots(tx, `campaign:${campaign.id}`, now, may, rate);
  const live = campaign.mode !== 'sandbox' && (campaign.provider ?? 'sandbox') !== 'sandbox';
  if (!live) return may;
  const limits = channelLimits(campaign.provider ?? 'sandbox', campaign.whatsapp);
  if (may > 0 && limits.uniquePerDay !== null) {
    // One round of the account at a time counts and sends under the tier.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('campaign-tier:' || $1, 0))`, [
      campaign.account_id,
    ]);
    may = Math.min(
      may,
      Math.max(0, limits.uniquePerDay - (await uniqueRecipientsToday(tx, campaign.account_id, now))),
    );
  }
  if (may > 0 && limits.perSecond !== null) {
    may = await takeSlots(tx, `wa:${campaign.account_id}`, now, may, limits.perSecond);
  }
  return may;
}

/** Writes the round's outcome to the recipient rows: a statement per kind of outcome. */
async function settleRows(
  tx: Tx,
  campaignId: string,
  now: Date,
  o: {
    messaged: { id: string; message: string }[];
    failed: { id: string; error: { code: string; message: string } }[];
    skipped: { id: string; reason: SkipReason }[];
    later: { id: string; at: Date }[];
  },
): Promise<void> {
  if (o.messaged.length > 0) {
    await tx.query(
      `UPDATE campaign_recipients r SET state = 'messaged', message_id = m.message, messaged_at = $2
         FROM unnest($3::text[], $4::text[]) AS m (contact, message)
        WHERE r.campaign_id = $1 AND r.contact_id = m.contact`,
      [campaignId, now, o.messaged.map((m) => m.id), o.messaged.map((m) => m.message)],
    );
  }
  if (o.failed.length > 0) {
    await tx.query(
      `UPDATE campaign_recipients r SET state = 'failed', reason = f.code, error = f.error::jsonb
         FROM unnest($2::text[], $3::text[], $4::text[]) AS f (contact, code, error)
        WHERE r.campaign_id = $1 AND r.contact_id = f.contact`,
      [
        campaignId,
        o.failed.map((f) => f.id),
        o.failed.map((f) => f.error.code),
        o.failed.map((f) => JSON.stringify(f.error)),
      ],
    );
  }
  if (o.skipped.length > 0) {
    await tx.query(
      `UPDATE campaign_recipients r SET state = 'skipped', reason = s.reason
         FROM unnest($2::text[], $3::text[]) AS s (contact, reason)
        WHERE r.campaign_id = $1 AND r.contact_id = s.contact`,
      [campaignId, o.skipped.map((s) => s.id), o.skipped.map((s) => s.reason)],
    );
  }
  if (o.later.length > 0) {
    await tx.query(
      `UPDATE campaign_recipients r SET due_at = l.at
         FROM unnest($2::text[], $3::timestamptz[]) AS l (contact, at)
        WHERE r.campaign_id = $1 AND r.contact_id = l.contact`,
      [campaignId, o.later.map((l) => l.id), o.later.map((l) => l.at)],
    );
  }
}

/** Unique contacts the account's campaigns messaged in the last 24 hours (the newest message ids only). */
async function uniqueRecipientsToday(tx: Tx, accountId: string, now: Date): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(DISTINCT contact_id)::int AS n FROM messages
      WHERE account_id = $1 AND id >= $2 AND campaign_id IS NOT NULL`,
    [accountId, idAt('message', new Date(now.getTime() - 86_400_000))],
  );
  return rows[0]!.n;
}
