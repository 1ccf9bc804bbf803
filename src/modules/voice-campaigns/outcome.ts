// A campaign call's end, recorded in the transaction that records the call's end (calls/status.ts):
// its contact is tried again after `retry.after` when the call ended by one of `retry.on` and an
// attempt is left (and the campaign is not canceled), else it is done with the call's outcome.
import type { Tx } from '../../kernel/database/db.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { durationMs } from '../automation/index.ts';
import type { CallRow } from '../calls/index.ts';

/** A campaign's call ended (calls' `calls.ended` hook), wired in app.ts. */
export function subscribeCampaignCallOutcomes(hooks: Hooks, now: () => Date): void {
  hooks.on('calls.ended', (tx, { call }) => campaignCallEnded(tx, call, now()));
}

export async function campaignCallEnded(tx: Tx, call: CallRow, now: Date): Promise<void> {
  if (!call.campaign_id || !call.contact_id) return;
  const { rows } = await tx.query<{
    attempts: number;
    last_call_id: string | null;
    retry_on: string[];
    max_attempts: number;
    retry_after: string;
    campaign_status: string;
  }>(
    `SELECT r.attempts, r.last_call_id, v.retry_on, v.max_attempts, v.retry_after, v.status AS campaign_status
       FROM voice_campaign_contacts r JOIN voice_campaigns v ON v.id = r.campaign_id
      WHERE r.campaign_id = $1 AND r.contact_id = $2 FOR UPDATE OF r`,
    [call.campaign_id, call.contact_id],
  );
  const row = rows[0];
  if (!row || row.last_call_id !== call.id) return;
  const again =
    row.retry_on.includes(call.status) &&
    row.attempts < row.max_attempts &&
    row.campaign_status !== 'canceled';
  if (again) {
    await tx.query(
      `UPDATE voice_campaign_contacts SET state = 'pending', next_attempt_at = $3 WHERE campaign_id = $1 AND contact_id = $2`,
      [call.campaign_id, call.contact_id, new Date(now.getTime() + durationMs(row.retry_after))],
    );
    return;
  }
  await tx.query(
    `UPDATE voice_campaign_contacts SET state = 'done', outcome = $3, answered = $4, error_code = $5
      WHERE campaign_id = $1 AND contact_id = $2`,
    [call.campaign_id, call.contact_id, call.status, call.answered_at !== null, call.error_code],
  );
}
