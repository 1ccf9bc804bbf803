import { Type } from 'typebox';
import { MoneySchema, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { money } from './money.ts';
import type { WalletRow, WalletTransactionRow } from './wallet.ts';

export const TransactionTypeSchema = Type.Union(
  [Type.Literal('credit'), Type.Literal('debit'), Type.Literal('refund'), Type.Literal('adjustment')],
  {
    description:
      'credit: money added; debit: a charge; refund: a charge given back; adjustment: a correction.',
  },
);

export const WalletSchema = Type.Object(
  {
    accountId: Type.String(),
    balance: MoneySchema,
    lowBalanceThreshold: Type.Union([MoneySchema, Type.Null()], {
      description: 'A charge taking the balance below this emits wallet.low_balance; null: never.',
    }),
    updatedAt: Timestamp,
  },
  { title: 'Wallet' },
);

export const UpdateWalletBody = Type.Object(
  {
    lowBalanceThreshold: Type.Union(
      [
        Type.Object(
          {
            amount: Type.String({ description: 'Decimal string, e.g. "10.00".', examples: ['10.00'] }),
            currency: Type.Optional(Type.String({ description: "Must be the account's currency." })),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'null stops wallet.low_balance events.' },
    ),
  },
  { additionalProperties: false },
);

export const WalletTransactionSchema = Type.Object(
  {
    id: Type.String(),
    type: TransactionTypeSchema,
    amount: Type.Object(MoneySchema.properties, { description: 'Signed: negative for debits.' }),
    balanceAfter: MoneySchema,
    reference: nullable(Type.String()),
    description: nullable(Type.String()),
    createdAt: Timestamp,
  },
  { title: 'WalletTransaction' },
);

export const CreditBody = Type.Object(
  {
    amount: Type.String({
      description: 'Decimal string, up to 6 decimals, e.g. "25.00".',
      examples: ['25.00'],
    }),
    currency: Type.Optional(Type.String({ description: "Must be the account's currency (USD)." })),
    reference: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Your reference, e.g. an invoice.' }),
    ),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export function toWallet(row: WalletRow) {
  return {
    accountId: row.id,
    balance: money(row.wallet_balance_micros, row.currency),
    lowBalanceThreshold:
      row.low_balance_threshold_micros === null
        ? null
        : money(row.low_balance_threshold_micros, row.currency),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toTransaction(row: WalletTransactionRow) {
  return {
    id: row.id,
    type: row.type,
    amount: money(row.amount_micros, row.currency),
    balanceAfter: money(row.balance_after_micros, row.currency),
    reference: row.reference,
    description: row.description,
    createdAt: row.created_at.toISOString(),
  };
}
