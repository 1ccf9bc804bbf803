// The wallet: a balance in integer micro-units that the database keeps from going negative (a CHECK
// constraint), and an append-only list of transactions, each recording the balance it left.
// Every change of balance and its transaction row are written in one statement.
import type { Sql, Tx } from '../../kernel/db.ts';
import { newId } from '../../kernel/ids.ts';
import type { Page } from '../../kernel/pagination.ts';

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
 * Applies a change to the balance and records it. Returns null, changing nothing, when the balance
 * would go negative: the caller decides whether that is a 402 or a bug.
 */
export async function changeBalance(
  tx: Tx,
  accountId: string,
  change: WalletChange,
): Promise<WalletTransactionRow | null> {
  // Take the account's row lock before making the transaction id: ids are time-ordered, so an id
  // made while waiting for a concurrent change could sort before that change, and the newest-first
  // list would show balances out of the order they were applied.
  await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  const { rows } = await tx.query<WalletTransactionRow>(
    `WITH moved AS (
       UPDATE accounts SET wallet_balance_micros = wallet_balance_micros + $2, updated_at = now()
        WHERE id = $1 AND wallet_balance_micros + $2 >= 0
       RETURNING wallet_balance_micros, currency
     )
     INSERT INTO wallet_transactions
       (id, account_id, type, amount_micros, balance_after_micros, currency, reference, description)
     SELECT $3, $1, $4, $2, wallet_balance_micros, currency, $5, $6 FROM moved
     RETURNING *`,
    [
      accountId,
      change.amountMicros,
      newId('walletTransaction'),
      change.type,
      change.reference ?? null,
      change.description ?? null,
    ],
  );
  return rows[0] ?? null;
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
