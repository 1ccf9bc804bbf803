// GET /account/wallet and GET /account/wallet/transactions.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.ts';
import { accountOf } from '../../kernel/access.ts';
import { notFound } from '../../kernel/errors.ts';
import { listOf, PageQuery, pageOf, readPage } from '../../kernel/pagination.ts';
import { findAccount } from '../accounts/repo.ts';
import {
  TransactionTypeSchema,
  toTransaction,
  toWallet,
  WalletSchema,
  WalletTransactionSchema,
} from './schemas.ts';
import { listTransactions } from './wallet.ts';

export function walletRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
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
        const row = await findAccount(ctx.db, accountOf(request).id);
        if (!row) throw notFound('account');
        return toWallet(row);
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
