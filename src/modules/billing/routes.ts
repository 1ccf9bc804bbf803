// GET /account/wallet and GET /account/wallet/transactions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { invalid, notFound } from '../../kernel/http/errors.ts';
import { listOf, PageQuery, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { parseAmount } from './money.ts';
import {
  TransactionTypeSchema,
  toTransaction,
  toWallet,
  UpdateWalletBody,
  WalletSchema,
  WalletTransactionSchema,
} from './schemas.ts';
import { findWallet, listTransactions, setLowBalanceThreshold } from './wallet.ts';

export function walletRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/account/wallet',
      {
        config: { access: 'account' },
        schema: {
          tags: ['account'],
          operationId: 'getWallet',
          summary: 'The wallet balance',
          response: { 200: WalletSchema },
        },
      },
      async (request) => {
        const row = await findWallet(ctx.db, accountOf(request).id);
        if (!row) throw notFound('account');
        return toWallet(row);
      },
    );

    app.patch(
      '/account/wallet',
      {
        config: { access: 'account' },
        schema: {
          tags: ['account'],
          operationId: 'updateWallet',
          summary: 'Set the low-balance threshold',
          body: UpdateWalletBody,
          response: { 200: WalletSchema },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        const current = await findWallet(ctx.db, accountId);
        if (!current) throw notFound('account');
        const threshold = request.body.lowBalanceThreshold;
        if (threshold?.currency && threshold.currency.toUpperCase() !== current.currency) {
          throw invalid(
            'lowBalanceThreshold.currency',
            `must be the account's currency, ${current.currency}`,
          );
        }
        const micros =
          threshold === null ? null : parseAmount('lowBalanceThreshold.amount', threshold.amount);
        await setLowBalanceThreshold(ctx.db, accountId, micros);
        return toWallet({ ...current, low_balance_threshold_micros: micros });
      },
    );

    app.get(
      '/account/wallet/transactions',
      {
        config: { access: 'account' },
        schema: {
          tags: ['account'],
          operationId: 'listWalletTransactions',
          summary: 'Wallet transactions, newest first',
          querystring: Type.Object(
            { ...PageQuery, type: Type.Optional(TransactionTypeSchema) },
            { additionalProperties: false },
          ),
          response: { 200: listOf(WalletTransactionSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listTransactions(ctx.db, accountOf(request).id, page, {
          type: request.query.type,
        });
        return pageOf(rows, page, toTransaction);
      },
    );
  };
}
