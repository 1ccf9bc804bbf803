// GET /account and GET /account/usage: an account reads its own plan, limits and usage.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOf } from '../../kernel/access/access.ts';
import { usagePeriod } from '../../kernel/access/usage-meter.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { AccountSelf, toAccountSelf, UsageQuery, UsageReportSchema } from './schemas.ts';
import { usageBetween } from './usage.ts';

export function accountRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/account',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags: ['account'],
          operationId: 'getAccount',
          summary: 'The account: plan, add-ons, features, limits, month usage, status and channel',
          response: { 200: AccountSelf },
        },
      },
      async (request) => {
        // Nothing to read: the account as the access policy has it (a second old at most, at once
        // after a change by this process), and the month's calls as the usage meter counts them (a
        // quota plan's lease gave them as the call was admitted).
        const account = accountOf(request);
        const now = ctx.now();
        const monthCalls = request.principal?.monthCalls ?? (await ctx.usage.monthCalls(account.id, now));
        return toAccountSelf(account, {
          monthCalls,
          period: usagePeriod(now),
          quotaOverride: ctx.config.monthlyQuotaOverride,
          rateOverride: ctx.config.rateLimitOverride,
          keyScope: request.principal!.keyScope,
        });
      },
    );

    app.get(
      '/account/usage',
      {
        config: { access: 'account' },
        schema: {
          tags: ['account'],
          operationId: 'getAccountUsage',
          summary: 'API calls per day over a date range',
          querystring: UsageQuery,
          response: { 200: UsageReportSchema },
        },
      },
      async (request) => usageBetween(ctx.db, ctx.usage, accountOf(request).id, request.query, ctx.now()),
    );
  };
}
