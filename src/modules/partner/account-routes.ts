// /partner/accounts/*: the client sub-accounts a partner provisions, their keys, wallets and usage.
// Every route answers 404 for an account of another partner.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { partnerOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, PageQuery, pageOf, readPage } from '../../kernel/http/pagination.ts';
import {
  listAccounts,
  PartnerAccount,
  toPartnerAccount,
  UsageQuery,
  UsageReportSchema,
  usageBetween,
} from '../accounts/index.ts';
import { CreditBody, toTransaction, WalletTransactionSchema } from '../billing/index.ts';
import {
  ApiKeyInfo,
  CreateAccountKeyBody,
  CreatedApiKey,
  createKey,
  listKeys,
  revokeKey,
  toCreatedKey,
  toKeyInfo,
} from '../keys/index.ts';
import { eraseAccount } from './account-erasure.ts';
import {
  changePartnerAccount,
  creditWallet,
  getPartnerAccount,
  provisionAccount,
  setAccountStatus,
} from './accounts.ts';
import {
  AccountIdParams,
  AccountKeyParams,
  AccountListQuery,
  ProvisionBody,
  UpdateAccountBody,
} from './schemas.ts';

const tags = ['partner'];
const partner = { access: 'partner' } as const;

const STATUS_ACTIONS = [
  {
    path: '/partner/accounts/:accountId/suspend',
    operationId: 'suspendAccount',
    summary: 'Suspend a sub-account (its keys get 403 until reactivated)',
    to: 'SUSPENDED',
  },
  {
    path: '/partner/accounts/:accountId/reactivate',
    operationId: 'reactivateAccount',
    summary: 'Reactivate a suspended sub-account',
    to: 'ACTIVE',
  },
] as const;

export function partnerAccountRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const keyOptions = () => ({ keyPrefix: ctx.config.keyPrefix, now: ctx.now() });
  const changeStatus = async (
    partnerId: string,
    accountId: string,
    to: 'ACTIVE' | 'SUSPENDED' | 'CLOSED',
  ) => {
    const result = await ctx.db.transaction((tx) =>
      setAccountStatus(tx, ctx.events, partnerId, accountId, to),
    );
    ctx.auth.forgetAccount(accountId);
    return result.row;
  };

  return async (app) => {
    app.post(
      '/partner/accounts',
      {
        config: { ...partner, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'provisionAccount',
          summary: 'Provision a client sub-account',
          body: ProvisionBody,
          response: { 201: PartnerAccount },
        },
      },
      async (request, reply) => {
        const row = await provisionAccount(ctx.db, partnerOf(request), request.body);
        reply.status(201);
        return toPartnerAccount(row);
      },
    );

    app.get(
      '/partner/accounts',
      {
        config: partner,
        schema: {
          tags,
          operationId: 'listAccounts',
          summary: 'List your sub-accounts, newest first',
          querystring: AccountListQuery,
          response: { 200: listOf(PartnerAccount) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listAccounts(ctx.db, partnerOf(request), page, request.query);
        return pageOf(rows, page, toPartnerAccount);
      },
    );

    app.get(
      '/partner/accounts/:accountId',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'getAccountAsPartner',
          summary: 'Get a sub-account',
          params: AccountIdParams,
          response: { 200: PartnerAccount },
        },
      },
      async (request) =>
        toPartnerAccount(await getPartnerAccount(ctx.db, partnerOf(request), request.params.accountId)),
    );

    app.patch(
      '/partner/accounts/:accountId',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateAccount',
          summary: 'Change a sub-account: name, plan, add-ons, externalRef',
          params: AccountIdParams,
          body: UpdateAccountBody,
          response: { 200: PartnerAccount },
        },
      },
      async (request) => {
        const row = await ctx.db.transaction((tx) =>
          changePartnerAccount(tx, partnerOf(request), request.params.accountId, request.body),
        );
        ctx.auth.forgetAccount(row.id);
        return toPartnerAccount(row);
      },
    );

    for (const action of STATUS_ACTIONS) {
      app.post(
        action.path,
        {
          config: { ...partner, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
          schema: {
            tags,
            operationId: action.operationId,
            summary: action.summary,
            params: AccountIdParams,
            response: { 200: PartnerAccount },
          },
        },
        async (request) =>
          toPartnerAccount(await changeStatus(partnerOf(request), request.params.accountId, action.to)),
      );
    }

    app.delete(
      '/partner/accounts/:accountId',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'closeAccount',
          summary:
            'Close a sub-account for good (its data is kept; its keys get 403); with erase=true, erase its personal data',
          description:
            'With `erase=true` the account is closed (if it is not yet) and, in the same transaction, its personal data ' +
            "erased: every contact, messages' contents and numbers, files, events' payloads, runs' data, calls' numbers, " +
            "team members' names and emails, console logins. Its ledger keeps every amount (descriptions lose numbers), its " +
            'messages their statuses and prices. Irreversible (docs/operations.md, Erasure).',
          params: AccountIdParams,
          querystring: Type.Object({
            erase: Type.Optional(
              Type.Boolean({
                default: false,
                description: "Also erase the account's personal data, irreversibly.",
              }),
            ),
          }),
          response: { 204: Type.Null({ description: 'Closed.' }) },
        },
      },
      async (request, reply) => {
        if (request.query.erase) {
          await ctx.db.transaction((tx) =>
            eraseAccount(tx, ctx.events, partnerOf(request), request.params.accountId),
          );
          ctx.auth.forgetAccount(request.params.accountId);
        } else {
          await changeStatus(partnerOf(request), request.params.accountId, 'CLOSED');
        }
        reply.status(204);
      },
    );

    // A sub-account's keys.
    app.post(
      '/partner/accounts/:accountId/keys',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT', 'PLAN_UPGRADE_REQUIRED'] },
        schema: {
          tags,
          operationId: 'createAccountKey',
          summary: "Create a sub-account's API key (shown once); the plan limits how many",
          params: AccountIdParams,
          body: CreateAccountKeyBody,
          response: { 201: CreatedApiKey },
        },
      },
      async (request, reply) => {
        const partnerId = partnerOf(request);
        const { accountId } = request.params;
        const { row, apiKey } = await ctx.db.transaction(async (tx) => {
          await getPartnerAccount(tx, partnerId, accountId);
          return createKey(
            tx,
            { accountId },
            { ...request.body, scope: request.body.scope ?? 'live' },
            keyOptions(),
          );
        });
        reply.status(201);
        return toCreatedKey(row, apiKey);
      },
    );

    app.get(
      '/partner/accounts/:accountId/keys',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'listAccountKeys',
          summary: "List a sub-account's API keys",
          params: AccountIdParams,
          querystring: Type.Object(PageQuery, { additionalProperties: false }),
          response: { 200: listOf(ApiKeyInfo) },
        },
      },
      async (request) => {
        const { accountId } = request.params;
        await getPartnerAccount(ctx.db, partnerOf(request), accountId);
        const page = readPage(request.query);
        return pageOf(await listKeys(ctx.db, { accountId }, page), page, toKeyInfo);
      },
    );

    app.delete(
      '/partner/accounts/:accountId/keys/:keyId',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'revokeAccountKey',
          summary: "Revoke a sub-account's API key",
          params: AccountKeyParams,
          response: { 204: Type.Null({ description: 'Revoked.' }) },
        },
      },
      async (request, reply) => {
        const { accountId, keyId } = request.params;
        await getPartnerAccount(ctx.db, partnerOf(request), accountId);
        await revokeKey(ctx.db, { accountId }, keyId, ctx.now());
        ctx.auth.forgetKeys();
        reply.status(204);
      },
    );

    // Wallet and usage.
    app.post(
      '/partner/accounts/:accountId/wallet/credits',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'creditAccountWallet',
          summary: "Add money to a sub-account's wallet",
          params: AccountIdParams,
          body: CreditBody,
          response: { 201: WalletTransactionSchema },
        },
      },
      async (request, reply) => {
        const txn = await ctx.db.transaction((tx) =>
          creditWallet(tx, ctx.events, partnerOf(request), request.params.accountId, request.body),
        );
        reply.status(201);
        return toTransaction(txn);
      },
    );

    app.get(
      '/partner/accounts/:accountId/usage',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'getAccountUsageAsPartner',
          summary: "A sub-account's API calls per day",
          params: AccountIdParams,
          querystring: UsageQuery,
          response: { 200: UsageReportSchema },
        },
      },
      async (request) => {
        const { accountId } = request.params;
        await getPartnerAccount(ctx.db, partnerOf(request), accountId);
        return usageBetween(ctx.db, ctx.usage, accountId, request.query, ctx.now());
      },
    );
  };
}
