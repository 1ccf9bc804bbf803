// Calls per second, per account, held exactly across any number of processes (docs/voice.md §
// Calls per second): a row per (account, second) counts the calls started in it, and a slot is
// taken by one atomic statement that adds one only while the count is below the plan's rate, so
// two processes can never both take the last slot. A call without a slot stays queued (its
// queuedAt says how long it has waited) and is looked at again the next round.
import type { Tx } from '../../kernel/db.ts';
import { planOf } from '../../kernel/plans.ts';

/** Takes a slot of the account's calls per second for `call`, now; false when the second is full. */
export async function takeSlot(
  tx: Tx,
  call: { account_id: string },
  planCode: string,
  now: Date,
  perSecond: number = planOf(planCode).voiceCallsPerSecond,
): Promise<boolean> {
  const second = Math.floor(now.getTime() / 1000);
  const { rows } = await tx.query(
    `INSERT INTO voice_cps_slots (account_id, second, used) VALUES ($1, $2, 1)
     ON CONFLICT (account_id, second) DO UPDATE SET used = voice_cps_slots.used + 1
      WHERE voice_cps_slots.used < $3
     RETURNING used`,
    [call.account_id, second, perSecond],
  );
  return rows.length === 1;
}

/** Forgets the seconds gone by (kept a minute, for anyone reading them). */
export async function pruneSlots(tx: Tx, now: Date): Promise<void> {
  await tx.query('DELETE FROM voice_cps_slots WHERE second < $1', [Math.floor(now.getTime() / 1000) - 60]);
}
