// The campaign sender (docs/messaging.md § Campaigns), a loop in every process that runs workers.
// Each round, for each running campaign (or scheduled one whose time came), locked by one process
// at a time (FOR UPDATE SKIP LOCKED, so any number of processes share the work):
//   1. how many it may send this second (pace.ts: its rate, a throttling hold), within the
//      account's channel throughput (rate_slots, shared by all its campaigns and processes) and
//      the messaging limit tier (unique recipients in 24 hours);
//   2. its due pending recipients: a deleted contact is skipped, one outside the send window waits
//      for its next opening, the others get the template with their parameters rendered (Liquid
//      over the contact) and are accepted through acceptBatch, the send path of every message
//      (price, charge, window rule, dispatch job);
//   3. in the same transaction the rows become `messaged` (or `failed` with the send path's
//      refusal), so a crash before the commit sends nobody and after it nobody again: exactly once
//      per (campaign, contact). A wallet that cannot pay pauses the campaign (`insufficient_balance`),
//      a template no longer approved pauses it too; a campaign with no pending row is completed.
import type { FastifyBaseLogger } from 'fastify';
import type { Provider } from '../../channels/types.ts';
import type { Tx } from '../../kernel/db.ts';
import { ApiError } from '../../kernel/errors.ts';
import { countryOf } from '../../kernel/phones.ts';
import { PollingLoop } from '../../kernel/polling-loop.ts';
import { scopeOf } from '../automation/context.ts';
import { render, TemplateError } from '../automation/templating.ts';
import { contactZone, nextOpening, WEEKDAYS } from '../automation/time.ts';
import { takeSlots } from '../campaign-engine/rate-slots.ts';
import { CONTACT_COLUMNS, type ContactRow } from '../contacts/repo.ts';
import type { AcceptServices } from '../messages/accept.ts';
import { acceptBatch, type SendResult, wakeDispatchers } from '../messages/accept-batch.ts';
import { type PreparedMessage, prepareMessage, templateLookup } from '../messages/prepare.ts';
import { channelLimits } from './channel-limits.ts';
import { allowance, recoveredBackoff } from './pace.ts';
import type { CampaignRow } from './repo.ts';
import { moveCampaign } from './service.ts';

/** Recipients looked at per campaign and round, at most. */
export const SEND_BATCH = 500;

export interface SenderDeps extends AcceptServices {
  log: FastifyBaseLogger;
  pollMs: number;
}

interface Locked extends CampaignRow {
  account_status: string;
  country_code: string;
  provider: Provider | null;
  whatsapp: { throughputPerSecond?: number | null; messagingLimitTier?: string | null } | null;
}

interface Due {
  contact_id: string;
  contact:
    | (Omit<ContactRow, 'created_at' | 'updated_at' | 'last_inbound_at'> & Record<string, unknown>)
    | null;
}

const rowOf = (c: NonNullable<Due['contact']>): ContactRow => ({
  ...(c as unknown as ContactRow),
  created_at: new Date(c.created_at as string),
  updated_at: new Date(c.updated_at as string),
  last_inbound_at: c.last_inbound_at ? new Date(c.last_inbound_at as string) : null,
});

export class CampaignSender {
  readonly #d: SenderDeps;
  readonly #loop: PollingLoop;

  constructor(deps: SenderDeps) {
    this.#d = deps;
    this.#loop = new PollingLoop({
      round: () => this.runOnce(),
      pollMs: () => deps.pollMs,
      log: deps.log,
      failure: 'the campaign sender failed a round',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** A campaign started or resumed: look at once. */
  wake(): void {
    this.#loop.wake();
  }

  /** One round over the live campaigns; answers how many recipients it settled. */
  async runOnce(): Promise<number> {
    const now = this.#d.now();
    const { rows } = await this.#d.db.query<{ id: string }>(
      `SELECT id FROM campaigns
        WHERE status = 'running' OR (status = 'scheduled' AND start_at <= $1) ORDER BY id LIMIT 100`,
      [now],
    );
    let settled = 0;
    for (const { id } of rows) settled += await this.#advance(id);
    return settled;
  }

  async #advance(id: string): Promise<number> {
    const d = this.#d;
    const outcome = await d.db.transaction(async (tx) => {
      const { rows } = await tx.query<Locked>(
        `SELECT c.*, a.status AS account_status, a.country_code, ch.provider, ch.settings->'whatsapp' AS whatsapp
           FROM campaigns c JOIN accounts a ON a.id = c.account_id
           LEFT JOIN account_channels ch ON ch.account_id = c.account_id
          WHERE c.id = $1 AND (c.status = 'running' OR (c.status = 'scheduled' AND c.start_at <= $2))
          FOR UPDATE OF c SKIP LOCKED`,
        [id, d.now()],
      );
      const found = rows[0];
      // Taken by another process this round, or no longer live; a suspended account's waits.
      if (!found || found.account_status !== 'ACTIVE') return { settled: 0, results: [] };
      return advance(tx, d, found);
    });
    wakeDispatchers(d, outcome.results);
    return outcome.settled;
  }
}

async function advance(
  tx: Tx,
  d: SenderDeps,
  found: Locked,
): Promise<{ settled: number; results: SendResult[] }> {
  const now = d.now();
  const idle = { settled: 0, results: [] };
  const campaign =
    found.status === 'scheduled'
      ? { ...found, ...(await moveCampaign(tx, d, found, { status: 'running', started_at: now })) }
      : found;
  const backoff = recoveredBackoff(campaign, now);
  if (backoff.rate !== campaign.backoff_rate) {
    await tx.query('UPDATE campaigns SET backoff_rate = $2, backoff_at = $3 WHERE id = $1', [
      campaign.id,
      backoff.rate,
      backoff.at,
    ]);
  }
  const may = allowance(campaign, backoff.rate, now);
  if (may === 0) return idle;
  const { rows: due } = await tx.query<Due>(
    `SELECT r.contact_id,
            (SELECT row_to_json(c) FROM (SELECT ${CONTACT_COLUMNS} FROM contacts
                                          WHERE account_id = $2 AND id = r.contact_id) c) AS contact
       FROM campaign_recipients r
      WHERE r.campaign_id = $1 AND r.state = 'pending' AND r.due_at <= $3
      ORDER BY r.due_at, r.contact_id LIMIT ${Math.min(may, SEND_BATCH)}`,
    [campaign.id, campaign.account_id, now],
  );
  if (due.length === 0) {
    await completeIfDone(tx, d, campaign);
    return idle;
  }
  const skipped: string[] = [];
  const later: { id: string; at: Date }[] = [];
  let ready: { contactId: string; contact: ContactRow }[] = [];
  const window = campaign.send_window
    ? { timezone: 'contact', days: campaign.send_window.days ?? [...WEEKDAYS], ...campaign.send_window }
    : null;
  for (const r of due) {
    if (!r.contact) {
      skipped.push(r.contact_id);
      continue;
    }
    const contact = rowOf(r.contact);
    if (window) {
      const zone = contactZone({ attributes: contact.attributes, country: countryOf(contact.phone) }, 'UTC');
      const opening = nextOpening(now, window, zone);
      if (opening > now) {
        later.push({ id: r.contact_id, at: opening });
        continue;
      }
    }
    ready.push({ contactId: r.contact_id, contact });
  }
  const limits = channelLimits(campaign.provider ?? 'sandbox', campaign.whatsapp);
  const provider = campaign.mode === 'sandbox' ? 'sandbox' : (campaign.provider ?? 'sandbox');
  const live = provider !== 'sandbox';
  if (live && limits.uniquePerDay !== null && ready.length > 0) {
    const left = limits.uniquePerDay - (await uniqueRecipientsToday(tx, campaign.account_id, now));
    ready = ready.slice(0, Math.max(0, left));
  }
  if (live && limits.perSecond !== null && ready.length > 0) {
    const granted = await takeSlots(tx, `wa:${campaign.account_id}`, now, ready.length, limits.perSecond);
    ready = ready.slice(0, granted);
  }

  const failed: { id: string; error: { code: string; message: string } }[] = [];
  const requests: { contactId: string; message: PreparedMessage }[] = [];
  const lookup = templateLookup(tx, campaign.account_id, d.approvedTemplates);
  for (const { contactId, contact } of ready) {
    try {
      const scope = scopeOf(contact, null, { id: campaign.id, type: 'campaign', data: {} }, now);
      const parameters: string[] = [];
      for (const p of campaign.message.parameters ?? []) parameters.push(await render(p, scope));
      const message = await prepareMessage(
        {
          to: contact.phone,
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
        await moveCampaign(tx, d, campaign, { status: 'paused', paused_reason: 'template_not_approved' });
        return idle;
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
    else if (result.kind === 'refused') {
      failed.push({ id: contactId, error: { code: result.error.code, message: result.error.message } });
    }
  });
  await settleRows(tx, campaign.id, now, { messaged, failed, skipped, later });
  const second = Math.floor(now.getTime() / 1000);
  await tx.query(
    `UPDATE campaigns SET pace_used = CASE WHEN pace_second = $2 THEN pace_used + $3 ELSE $3 END, pace_second = $2
      WHERE id = $1`,
    [campaign.id, second, messaged.length],
  );
  // Topping up the wallet and resuming goes on where it stopped.
  if (unpaid)
    await moveCampaign(tx, d, campaign, { status: 'paused', paused_reason: 'insufficient_balance' });
  return { settled: messaged.length + failed.length + skipped.length, results };
}

/** Writes the round's outcome to the recipient rows: a statement per kind of outcome. */
async function settleRows(
  tx: Tx,
  campaignId: string,
  now: Date,
  o: {
    messaged: { id: string; message: string }[];
    failed: { id: string; error: { code: string; message: string } }[];
    skipped: string[];
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
      `UPDATE campaign_recipients SET state = 'skipped', reason = 'contact_deleted'
        WHERE campaign_id = $1 AND contact_id = ANY($2::text[])`,
      [campaignId, o.skipped],
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

/** Unique contacts the account's campaigns messaged in the last 24 hours. */
async function uniqueRecipientsToday(tx: Tx, accountId: string, now: Date): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(DISTINCT contact_id)::int AS n FROM campaign_recipients
      WHERE account_id = $1 AND messaged_at > $2`,
    [accountId, new Date(now.getTime() - 86_400_000)],
  );
  return rows[0]!.n;
}

async function completeIfDone(tx: Tx, d: SenderDeps, campaign: CampaignRow): Promise<void> {
  const { rows } = await tx.query(
    `SELECT 1 FROM campaign_recipients WHERE campaign_id = $1 AND state = 'pending' LIMIT 1`,
    [campaign.id],
  );
  if (rows.length === 0) await moveCampaign(tx, d, campaign, { status: 'completed', completed_at: d.now() });
}
