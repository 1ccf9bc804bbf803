// The campaign pacer (docs/voice.md § Campaigns), run by the dialler each round before it places
// calls: for each running campaign (each locked by one process at a time, FOR UPDATE SKIP LOCKED),
// it starts a scheduled one whose time came, then makes calls for its due contacts while fewer than
// `maxConcurrent` of its calls are under way. A contact outside its calling hours (its own time
// zone) is put off to the next opening; a contact whose call cannot be made (the script archived, a
// text that cannot render) is done, failed, with the reason; a wallet that cannot pay a minute
// pauses the campaign. A call is made in the transaction that marks its contact `calling`, so a
// crash never calls a contact twice; the dialler then places it within the campaign's calls per
// second. A running campaign with no contact left pending or calling is completed.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { countryOf } from '../../kernel/values/phones.ts';
import { contactZone, nextOpening, WEEKDAYS } from '../automation/index.ts';
import { NO_PHONE, placeCallIn } from '../calls/index.ts';
import type { ContactRow } from '../contacts/index.ts';
import { holdAgainstErasure } from '../erasure/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import type { CampaignRow } from './repo.ts';
import { moveCampaign } from './service.ts';

export interface PacerServices {
  db: Database;
  events: EventOutbox;
  prices: PriceTable;
  now: () => Date;
}

/** Due contacts looked at per campaign and round (those outside their hours are put off). */
const DUE_BATCH = 200;

/** Advances every running (or due scheduled) campaign; answers how many calls it made. */
export async function advanceCampaigns(s: PacerServices): Promise<number> {
  const { rows } = await s.db.query<{ id: string }>(
    `SELECT id FROM voice_campaigns
      WHERE status = 'running' OR (status = 'scheduled' AND start_at <= $1) ORDER BY id LIMIT 50`,
    [s.now()],
  );
  let made = 0;
  for (const { id } of rows) {
    made += await s.db.transaction(async (tx) => {
      const { rows: locked } = await tx.query<CampaignRow>(
        `SELECT * FROM voice_campaigns WHERE id = $1 AND (status = 'running' OR (status = 'scheduled' AND start_at <= $2))
          FOR UPDATE SKIP LOCKED`,
        [id, s.now()],
      );
      if (!locked[0]) return 0;
      // Its contacts are read after any erasure under way (erasure/lock.ts).
      await holdAgainstErasure(tx, [locked[0].account_id]);
      return advance(tx, s, locked[0]);
    });
  }
  return made;
}

async function advance(tx: Tx, s: PacerServices, found: CampaignRow): Promise<number> {
  const now = s.now();
  const campaign =
    found.status === 'scheduled' ? await moveCampaign(tx, s, found, 'running', { started_at: now }) : found;
  const { rows: counts } = await tx.query<{ calling: number; open: number }>(
    `SELECT count(*) FILTER (WHERE state = 'calling')::int AS calling,
            count(*) FILTER (WHERE state IN ('pending', 'calling'))::int AS open
       FROM voice_campaign_contacts WHERE campaign_id = $1`,
    [campaign.id],
  );
  if (counts[0]!.open === 0) {
    await moveCampaign(tx, s, campaign, 'completed', { ended_at: now });
    return 0;
  }
  const free = campaign.max_concurrent - counts[0]!.calling;
  if (free <= 0) return 0;
  const { rows: due } = await tx.query<{ contact_id: string; attempts: number; contact: ContactRow | null }>(
    `SELECT r.contact_id, r.attempts,
            (SELECT row_to_json(c) FROM contact_rows c WHERE c.account_id = $2 AND c.id = r.contact_id) AS contact
       FROM voice_campaign_contacts r
      WHERE r.campaign_id = $1 AND r.state = 'pending' AND r.next_attempt_at <= $3
      ORDER BY r.next_attempt_at, r.contact_id LIMIT ${DUE_BATCH} FOR UPDATE OF r SKIP LOCKED`,
    [campaign.id, campaign.account_id, now],
  );
  const hours = {
    timezone: 'contact',
    days: [...WEEKDAYS],
    from: campaign.calling_from,
    until: campaign.calling_until,
  };
  let made = 0;
  for (const row of due) {
    if (made >= free) break;
    const done = (outcome: string, code: string) =>
      tx.query(
        `UPDATE voice_campaign_contacts SET state = 'done', outcome = $3, error_code = $4 WHERE campaign_id = $1 AND contact_id = $2`,
        [campaign.id, row.contact_id, outcome, code],
      );
    if (!row.contact) {
      await done('failed', 'CONTACT_DELETED');
      continue;
    }
    const { phone } = row.contact;
    if (!phone) {
      await done('skipped', NO_PHONE.code);
      continue;
    }
    const contact = {
      ...row.contact,
      phone,
      created_at: new Date(row.contact.created_at),
      updated_at: new Date(row.contact.updated_at),
    };
    const zone = contactZone({ attributes: contact.attributes, country: countryOf(phone) }, 'UTC');
    const opening = nextOpening(now, hours, zone);
    if (opening > now) {
      await tx.query(
        'UPDATE voice_campaign_contacts SET next_attempt_at = $3 WHERE campaign_id = $1 AND contact_id = $2',
        [campaign.id, row.contact_id, opening],
      );
      continue;
    }
    try {
      const { maxDurationSeconds, ...settings } = campaign.call_settings;
      const call = await placeCallIn(
        tx,
        s,
        campaign.account_id,
        contact,
        { scriptId: campaign.script_id, ...settings, maxDurationSeconds },
        { sandbox: campaign.mode === 'sandbox', campaign: { id: campaign.id, attempt: row.attempts + 1 } },
      );
      await tx.query(
        `UPDATE voice_campaign_contacts SET state = 'calling', attempts = attempts + 1, last_call_id = $3
          WHERE campaign_id = $1 AND contact_id = $2`,
        [campaign.id, row.contact_id, call.id],
      );
      made++;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'INSUFFICIENT_BALANCE') {
        // Topping up the wallet and resuming goes on where it stopped.
        await moveCampaign(tx, s, campaign, 'paused');
        break;
      }
      await done('failed', err.code);
    }
  }
  return made;
}
