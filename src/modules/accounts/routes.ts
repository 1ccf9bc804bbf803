// GET /account and GET /account/usage: an account reads its own plan, limits and usage.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../app-context.ts';
import { accountOf } from '../../kernel/access.ts';
import { notFound } from '../../kernel/errors.ts';
import { usagePeriod } from '../../kernel/usage-meter.ts';
import { findAccount } from './repo.ts';
import { AccountSelf, toAccountSelf, UsageQuery, UsageReportSchema } from './schemas.ts';
import { accountWithMonthCalls, usageBetween } from './usage.ts';

export function accountRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
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
        const { id, channelProvider } = accountOf(request);
        const now = ctx.now();
        // A quota plan's lease gave the month's total as the call was admitted: the row alone.
        const leased = request.principal?.monthCalls;
        const found =
          leased === undefined
            ? await accountWithMonthCalls(ctx.db, ctx.usage, id, now)
            : await findAccount(ctx.db, id).then((row) => row && { row, monthCalls: leased });
        if (!found) throw notFound('account');
        return toAccountSelf(found.row, {
          monthCalls: found.monthCalls,
          period: usagePeriod(now),
          quotaOverride: ctx.config.monthlyQuotaOverride,
          rateOverride: ctx.config.rateLimitOverride,
          keyScope: request.principal!.keyScope,
          channelProvider,
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
