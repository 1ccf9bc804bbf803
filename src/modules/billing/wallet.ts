// The wallet: a balance in integer micro-units that the database keeps from going negative (a CHECK
// constraint), and an append-only list of transactions, each recording the balance it left.
// Every change of balance and its transaction row are written in one statement.
import type { Sql, Tx } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { money } from './money.ts';
import { toTransaction } from './schemas.ts';

export type TransactionType = 'credit' | 'debit' | 'refund' | 'adjustment';

export interface WalletTransactionRow {
  id: string;
  account_id: string;
  type: TransactionType;
  amount_micros: number;
  balance_after_micros: number;
  currency: string;
  reference: string | null;
  description: string | null;
  created_at: Date;
}

export interface WalletChange {
  type: TransactionType;
  /** Signed: positive adds to the balance, negative takes from it. */
  amountMicros: number;
  reference?: string | null;
  description?: string | null;
}

/**
 * Applies a change to the balance and records it, emitting `wallet.credited` for a credit and
 * `wallet.low_balance` when a charge takes the balance below the account's threshold. Returns null,
 * changing nothing, when the balance would go negative: the caller decides whether that is a 402 or
 * a bug.
 */
export async function changeBalance(
  tx: Tx,
  events: EventOutbox,
  accountId: string,
  change: WalletChange,
): Promise<WalletTransactionRow | null> {
  // Take the account's row lock before making the transaction id: ids are time-ordered, so an id
  // made while waiting for a concurrent change could sort before that change, and the newest-first
  // list would show balances out of the order they were applied.
  // NO KEY: the lock must not block other transactions inserting rows that reference the account
  // (their foreign-key checks take key-share locks on it).
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
  const { rows } = await tx.query<WalletTransactionRow & { threshold_micros: number | null }>(
    `WITH moved AS (
       UPDATE accounts SET wallet_balance_micros = wallet_balance_micros + $2, updated_at = now()
        WHERE id = $1 AND wallet_balance_micros + $2 >= 0
       RETURNING wallet_balance_micros, currency, low_balance_threshold_micros
     ), recorded AS (
       INSERT INTO wallet_transactions
         (id, account_id, type, amount_micros, balance_after_micros, currency, reference, description)
       SELECT $3, $1, $4, $2, wallet_balance_micros, currency, $5, $6 FROM moved
       RETURNING *
     )
     SELECT recorded.*, moved.low_balance_threshold_micros AS threshold_micros FROM recorded, moved`,
    [
      accountId,
      change.amountMicros,
      newId('walletTransaction'),
      change.type,
      change.reference ?? null,
      change.description ?? null,
    ],
  );
  const row = rows[0];
  if (!row) return null;
  const { threshold_micros: threshold, ...txn } = row;
  if (txn.type === 'credit') {
    await events.emit(tx, { type: 'wallet.credited', accountId, data: toTransaction(txn) });
  }
  await emitIfBelowThreshold(tx, events, accountId, txn, threshold);
  return txn;
}

/** Whether a balance going from `before` to `after` falls below the threshold (from at or above it). */
export function crossesBelow(before: number, after: number, threshold: number | null): boolean {
  return threshold !== null && after < before && before >= threshold && after < threshold;
}

/**
 * Emits `wallet.low_balance` when this charge took the balance from at or above the threshold to
 * below it: once per crossing, not on every charge below it.
 */
export async function emitIfBelowThreshold(
  tx: Tx,
  events: EventOutbox,
  accountId: string,
  txn: Pick<WalletTransactionRow, 'id' | 'amount_micros' | 'balance_after_micros' | 'currency'>,
  threshold: number | null,
): Promise<void> {
  const before = txn.balance_after_micros - txn.amount_micros;
  if (threshold === null || !crossesBelow(before, txn.balance_after_micros, threshold)) return;
  await events.emit(tx, {
    type: 'wallet.low_balance',
    accountId,
    data: {
      accountId,
      balance: money(txn.balance_after_micros, txn.currency),
      lowBalanceThreshold: money(threshold, txn.currency),
      transactionId: txn.id,
    },
  });
}

/** Sets (or with null, clears) the balance below which a charge emits `wallet.low_balance`. */
/** The wallet columns of an account row (billing owns them; modules/accounts owns the rest). */
export interface WalletRow {
  id: string;
  currency: string;
  wallet_balance_micros: number;
  low_balance_threshold_micros: number | null;
  updated_at: Date;
}

export async function findWallet(sql: Sql, accountId: string): Promise<WalletRow | null> {
  const { rows } = await sql.query<WalletRow>(
    `SELECT id, currency, wallet_balance_micros, low_balance_threshold_micros, updated_at
       FROM accounts WHERE id = $1`,
    [accountId],
  );
  return rows[0] ?? null;
}

export async function setLowBalanceThreshold(
  sql: Sql,
  accountId: string,
  micros: number | null,
): Promise<void> {
  await sql.query('UPDATE accounts SET low_balance_threshold_micros = $2, updated_at = now() WHERE id = $1', [
    accountId,
    micros,
  ]);
}

export async function listTransactions(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { type?: TransactionType },
): Promise<WalletTransactionRow[]> {
  const params: unknown[] = [accountId, page.limit + 1];
  let where = 'account_id = $1';
  if (page.before) where += ` AND id < $${params.push(page.before)}`;
  if (filters.type) where += ` AND type = $${params.push(filters.type)}`;
  const { rows } = await sql.query<WalletTransactionRow>(
    `SELECT * FROM wallet_transactions WHERE ${where} ORDER BY id DESC LIMIT $2`,
    params,
  );
  return rows;
}
