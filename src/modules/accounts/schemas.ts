// How accounts look on the wire: the partner's view of a sub-account, and an account's own view
// of itself (GET /account).
import { Type } from 'typebox';
import type { AccountSnapshot } from '../../kernel/access/auth.ts';
import { MoneySchema, NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import { money } from '../billing/index.ts';
import {
  ADDONS,
  type Addon,
  featuresOf,
  monthlyQuotaOf,
  PLAN_CODES,
  planOf,
  ratePerSecondOf,
} from './plans.ts';
import type { AccountRow } from './repo.ts';

export const AccountStatusSchema = Type.Union(
  [Type.Literal('ACTIVE'), Type.Literal('SUSPENDED'), Type.Literal('CLOSED')],
  { description: 'ACTIVE on creation; SUSPENDED ↔ ACTIVE; CLOSED is final.' },
);
export const PlanCodeSchema = Type.String({ enum: [...PLAN_CODES], description: 'The plan of the account.' });
export const AddonsSchema = Type.Array(Type.String({ enum: [...ADDONS] }), {
  uniqueItems: true,
  maxItems: ADDONS.length,
  description: 'Add-ons: `api_access` gives the Pro plan API access.',
});

export const PartnerAccount = Type.Object(
  {
    accountId: Type.String({ examples: ['acc_01jh0000000000000000000000'] }),
    accountName: Type.String(),
    countryCode: Type.String(),
    planCode: Type.String(),
    addons: Type.Array(Type.String()),
    externalRef: nullable(Type.String()),
    status: AccountStatusSchema,
    walletBalance: MoneySchema,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    closedAt: NullableTimestamp,
  },
  { title: 'PartnerAccount' },
);

export function toPartnerAccount(row: AccountRow) {
  return {
    accountId: row.id,
    accountName: row.name,
    countryCode: row.country_code,
    planCode: row.plan_code,
    addons: row.addons,
    externalRef: row.external_ref,
    status: row.status,
    walletBalance: money(row.wallet_balance_micros, row.currency),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    closedAt: row.closed_at ? row.closed_at.toISOString() : null,
  };
}

export const AccountSelf = Type.Object(
  {
    accountId: Type.String(),
    accountName: Type.String(),
    countryCode: Type.String(),
    status: AccountStatusSchema,
    plan: Type.Object({ code: Type.String(), name: Type.String() }),
    addons: Type.Array(Type.String()),
    features: Type.Array(Type.String(), { description: 'api_access, automation, voice' }),
    limits: Type.Object({
      requestsPerSecond: Type.Integer(),
      monthlyQuota: nullable(Type.Integer({ description: 'null: unlimited' })),
      maxApiKeys: Type.Integer(),
    }),
    usage: Type.Object({
      period: Type.String({ description: 'The calendar month (UTC), YYYY-MM.' }),
      calls: Type.Integer(),
      remaining: nullable(Type.Integer()),
    }),
    channel: Type.Object({ provider: Type.String({ description: 'sandbox | whatsapp_cloud' }) }),
    keyScope: Type.String({
      description:
        'The scope of the key that made this call: live, sandbox or partner (a console session counts as the key it stands for: partner for a partner admin, live otherwise).',
    }),
    createdAt: Timestamp,
  },
  { title: 'Account' },
);

export function toAccountSelf(
  account: AccountSnapshot,
  context: {
    monthCalls: number;
    period: string;
    quotaOverride: number | null;
    rateOverride: number | null;
    keyScope: string;
  },
) {
  const plan = planOf(account.planCode);
  const quota = monthlyQuotaOf(plan, context.quotaOverride);
  return {
    accountId: account.id,
    accountName: account.name,
    countryCode: account.countryCode,
    status: account.status,
    plan: { code: plan.code, name: plan.name },
    addons: account.addons,
    features: featuresOf(plan, account.addons as Addon[]),
    limits: {
      requestsPerSecond: ratePerSecondOf(plan, context.rateOverride),
      monthlyQuota: quota,
      maxApiKeys: plan.maxKeys,
    },
    usage: {
      period: context.period,
      calls: context.monthCalls,
      remaining: quota === null ? null : Math.max(0, quota - context.monthCalls),
    },
    // The details are at GET /account/channel.
    channel: { provider: account.channelProvider },
    keyScope: context.keyScope,
    createdAt: account.createdAt.toISOString(),
  };
}

export const UsageReportSchema = Type.Object(
  {
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    totalCalls: Type.Integer(),
    days: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), calls: Type.Integer() })),
  },
  { title: 'UsageReport' },
);

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(
      Type.String({ format: 'date', description: 'First day (UTC), default: the 1st of this month.' }),
    ),
    to: Type.Optional(
      Type.String({ format: 'date', description: 'Last day (UTC), inclusive; default: today.' }),
    ),
  },
  { additionalProperties: false },
);
