// What a message finally costs follows what the provider bills, not what Tidings guessed when it
// accepted it. The rule, applied each time a message's status is written (messages/status.ts):
//
// - Tidings charged `charged_micros` when it accepted the message (0 for anything free by its own
//   rules: the sandbox, the customer service window).
// - What it should end up costing, the target: nothing while it has failed without being
//   delivered (WhatsApp bills only delivered messages); once delivered, nothing if the provider
//   says it does not bill it (`pricing.billable: false`, e.g. a free entry point window), else
//   the charge. Before either, the charge stands.
// - What it costs now, the net: the charge, less the refund of a failure, plus the adjustments
//   made (and the part of a debit the wallet could not pay, which counts as settled).
// - A difference is one `adjustment` wallet transaction, made once: afterwards net and target
//   agree, and a repeated callback finds nothing to do. So a message refunded on `failed` that
//   Meta then reports delivered (and billed) is charged again, and a charged message Meta did not
//   bill is paid back.
// - A message Tidings priced free stays free whatever the provider bills: the price list, not the
//   provider's invoice, is what an account agreed to pay.
// The failure refund itself (status.ts) is unchanged: a `refund` transaction when a charged
// message fails undelivered.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { changeBalance } from '../billing/index.ts';
import type { MessageRow } from './repo.ts';

type Settled = Pick<
  MessageRow,
  | 'status'
  | 'charged_micros'
  | 'refunded_at'
  | 'delivered_at'
  | 'provider_pricing'
  | 'adjusted_micros'
  | 'unpaid_micros'
>;

/** What the message should cost by now, in micro-units. */
export function targetOf(row: Settled): number {
  if (row.delivered_at) return row.provider_pricing?.billable === false ? 0 : row.charged_micros;
  return row.status === 'failed' ? 0 : row.charged_micros;
}

/** What the message costs the wallet now (the unpaid part of an adjustment counts as settled). */
export function netOf(row: Settled): number {
  const refund = row.refunded_at ? row.charged_micros : 0;
  return row.charged_micros - refund + row.adjusted_micros + row.unpaid_micros;
}

/** The adjustment due: positive to take from the wallet, negative to give back, 0 when settled. */
export function adjustmentDue(row: Settled): number {
  return targetOf(row) - netOf(row);
}

/**
 * Moves `due` (positive: taken from the wallet) as one `adjustment` transaction referencing the
 * message, and answers the message's settlement columns after it. A debit the balance cannot pay
 * in full takes what there is and records the rest as unpaid; a credit first cancels what was
 * unpaid (it was never taken) and gives back only the rest.
 */
export async function settleCharge(
  tx: Tx,
  events: EventOutbox,
  row: MessageRow,
  due: number,
): Promise<Pick<MessageRow, 'adjusted_micros' | 'unpaid_micros'>> {
  const adjust = (amountMicros: number, description: string) =>
    changeBalance(tx, events, row.account_id, {
      type: 'adjustment',
      amountMicros,
      reference: row.id,
      description,
    });
  if (due < 0) {
    const forgiven = Math.min(row.unpaid_micros, -due);
    const credit = -due - forgiven;
    if (credit > 0) await adjust(credit, 'adjustment: the provider did not bill the message');
    return { adjusted_micros: row.adjusted_micros - credit, unpaid_micros: row.unpaid_micros - forgiven };
  }
  let taken = due;
  if (!(await adjust(-due, 'adjustment: the provider billed the message'))) {
    // changeBalance locked the account's row: the balance read here is the one it refused.
    const { rows } = await tx.query<{ balance: number }>(
      'SELECT wallet_balance_micros AS balance FROM accounts WHERE id = $1',
      [row.account_id],
    );
    taken = Math.min(rows[0]?.balance ?? 0, due);
    if (taken > 0)
      await adjust(-taken, 'adjustment: the provider billed the message (in part: the balance ran out)');
  }
  return { adjusted_micros: row.adjusted_micros + taken, unpaid_micros: row.unpaid_micros + (due - taken) };
}
