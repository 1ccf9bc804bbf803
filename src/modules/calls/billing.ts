// What a call costs, in the wallet's ledger (docs/voice.md § Billing):
// - its rate is the called country's voice price per started minute, fixed when the call is made;
//   a call on the sandbox (a sandbox key, or the sandbox channel) is free;
// - POST /voice/calls is refused with 402 when the wallet cannot pay one minute;
// - when the dialler places it, the estimate (maxDurationSeconds in started minutes × rate) is held:
//   a `debit` referenced `hold:<call>`, as much of it as the wallet has (at least a minute, or the
//   call fails INSUFFICIENT_BALANCE without being placed);
// - when it ends, each started minute connected is charged: what the hold over-took is given back
//   (`refund`, referenced by the call), and a call longer than its hold pays the rest as far as the
//   wallet goes (`debit`). `charged` is what the call cost in the end.
import type { Tx } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { changeBalance, formatMicros } from '../billing/index.ts';
import type { CallRow } from './repo.ts';
import { billableMinutes } from './transition.ts';

export function estimateMicros(call: Pick<CallRow, 'max_duration_seconds' | 'rate_micros'>): number {
  return billableMinutes(call.max_duration_seconds) * Number(call.rate_micros);
}

async function balanceOf(tx: Tx, accountId: string): Promise<number> {
  const { rows } = await tx.query<{ b: string }>(
    'SELECT wallet_balance_micros AS b FROM accounts WHERE id = $1',
    [accountId],
  );
  return Number(rows[0]?.b ?? 0);
}

/** Refuses a call the wallet cannot pay one minute of (402). */
export async function requireFirstMinute(tx: Tx, accountId: string, rateMicros: number): Promise<void> {
  if (rateMicros === 0) return;
  const balance = await balanceOf(tx, accountId);
  if (balance < rateMicros) {
    throw new ApiError(
      'INSUFFICIENT_BALANCE',
      `The wallet holds ${formatMicros(balance)}; a call's first minute costs ${formatMicros(rateMicros)}.`,
    );
  }
}

/**
 * Takes the hold for a call about to be placed; answers the amount held, or null when the wallet
 * cannot pay a minute (the call is then failed, not placed).
 */
export async function holdForCall(tx: Tx, events: EventOutbox, call: CallRow): Promise<number | null> {
  const rate = Number(call.rate_micros);
  if (rate === 0) return 0;
  const balance = await balanceOf(tx, call.account_id);
  if (balance < rate) return null;
  // Whole minutes only: what is held is what many minutes the call can surely pay.
  const held = Math.min(estimateMicros(call), Math.floor(balance / rate) * rate);
  const txn = await changeBalance(tx, events, call.account_id, {
    type: 'debit',
    amountMicros: -held,
    reference: `hold:${call.id}`,
    description: `Hold for call ${call.id} to ${call.to_number} (${held / rate} min)`,
  });
  return txn ? held : null;
}

/** Settles an ended call: its billable minutes, what it is charged, the hold's rest given back. */
export async function settleCall(
  tx: Tx,
  s: { events: EventOutbox },
  call: CallRow,
): Promise<Pick<CallRow, 'billable_minutes' | 'charged_micros' | 'held_micros'>> {
  const minutes = call.status === 'completed' ? billableMinutes(call.duration_seconds ?? 0) : 0;
  const rate = Number(call.rate_micros);
  const held = Number(call.held_micros);
  const due = minutes * rate;
  let charged = due;
  if (due < held) {
    await changeBalance(tx, s.events, call.account_id, {
      type: 'refund',
      amountMicros: held - due,
      reference: call.id,
      description: `Rest of the hold for call ${call.id}: ${minutes} min charged`,
    });
  } else if (due > held) {
    // Longer than its hold (the wallet could not hold every minute): the rest, as far as it goes.
    const extra = Math.min(due - held, await balanceOf(tx, call.account_id));
    if (extra > 0) {
      await changeBalance(tx, s.events, call.account_id, {
        type: 'debit',
        amountMicros: -extra,
        reference: call.id,
        description: `Call ${call.id}: minutes beyond its hold`,
      });
    }
    charged = held + extra;
  }
  return { billable_minutes: minutes, charged_micros: charged, held_micros: held };
}
