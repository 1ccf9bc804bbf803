// The plan table (docs/decisions.md § Limits, docs/api.md). Limits belong to the account: all its keys share one
// per-second budget and one monthly count.

import type { Feature, PlanRules } from '../../kernel/access/access.ts';

export type { Feature };
export type Addon = 'api_access';

export interface Plan {
  code: string;
  name: string;
  /** Whether API access comes with the plan, or only with the `api_access` add-on. */
  apiAccess: 'none' | 'addon' | 'included';
  monthlyQuota: number | null;
  ratePerSecond: number;
  maxKeys: number;
  /** Voice calls an account may start per second (Twilio's default for an account is 1). */
  voiceCallsPerSecond: number;
  features: Exclude<Feature, 'api_access'>[];
}

export const PLANS: readonly Plan[] = [
  {
    code: 'free',
    name: 'Free',
    apiAccess: 'none',
    monthlyQuota: 0,
    ratePerSecond: 0,
    maxKeys: 0,
    voiceCallsPerSecond: 1,
    features: [],
  },
  {
    code: 'starter',
    name: 'Starter',
    apiAccess: 'none',
    monthlyQuota: 0,
    ratePerSecond: 0,
    maxKeys: 0,
    voiceCallsPerSecond: 1,
    features: [],
  },
  {
    code: 'pro',
    name: 'Pro',
    apiAccess: 'addon',
    monthlyQuota: 10_000,
    ratePerSecond: 10,
    maxKeys: 2,
    voiceCallsPerSecond: 1,
    features: ['automation'],
  },
  {
    code: 'business',
    name: 'Business',
    apiAccess: 'included',
    monthlyQuota: 100_000,
    ratePerSecond: 30,
    maxKeys: 5,
    voiceCallsPerSecond: 1,
    features: ['automation', 'voice'],
  },
  {
    code: 'business_plus',
    name: 'Business+',
    apiAccess: 'included',
    monthlyQuota: 500_000,
    ratePerSecond: 60,
    maxKeys: 10,
    voiceCallsPerSecond: 5,
    features: ['automation', 'voice'],
  },
  {
    code: 'premium',
    name: 'Premium',
    apiAccess: 'included',
    monthlyQuota: null,
    ratePerSecond: 100,
    maxKeys: 15,
    voiceCallsPerSecond: 10,
    features: ['automation', 'voice'],
  },
  {
    code: 'premium_plus',
    name: 'Premium+',
    apiAccess: 'included',
    monthlyQuota: null,
    ratePerSecond: 200,
    maxKeys: 20,
    voiceCallsPerSecond: 20,
    features: ['automation', 'voice'],
  },
  {
    code: 'scale',
    name: 'Scale',
    apiAccess: 'included',
    monthlyQuota: null,
    ratePerSecond: 500,
    maxKeys: 50,
    voiceCallsPerSecond: 50,
    features: ['automation', 'voice'],
  },
];

export const PLAN_CODES = PLANS.map((p) => p.code);
export const ADDONS: readonly Addon[] = ['api_access'];

export function planOf(code: string): Plan {
  const plan = PLANS.find((p) => p.code === code);
  if (!plan) throw new Error(`unknown plan ${code}`);
  return plan;
}

export function hasFeature(plan: Plan, addons: readonly string[], feature: Feature): boolean {
  if (feature === 'api_access') {
    return plan.apiAccess === 'included' || (plan.apiAccess === 'addon' && addons.includes('api_access'));
  }
  return plan.features.includes(feature);
}

/** The features an account has, as GET /account shows them. */
export function featuresOf(plan: Plan, addons: readonly string[]): Feature[] {
  return (['api_access', 'automation', 'voice'] as const).filter((f) => hasFeature(plan, addons, f));
}

/** The monthly quota in force, after the staging/test override. */
export function monthlyQuotaOf(plan: Plan, override: number | null): number | null {
  if (plan.monthlyQuota === null) return null;
  return override ?? plan.monthlyQuota;
}

/** The per-second limit in force, after the operator's override (a server of one busy account). */
export function ratePerSecondOf(plan: Plan, override: number | null): number {
  return override ?? plan.ratePerSecond;
}

const REFUSALS: Record<Feature, string> = {
  api_access: 'API access needs the Business plan or above, or Pro with the api_access add-on.',
  automation: 'Automation needs the Pro plan or above.',
  voice: 'Voice needs the Business plan or above.',
};

/** The plan table as the access policy asks it (kernel/access/access.ts), given in app.ts. */
export const PLAN_RULES: PlanRules = {
  limitsOf(planCode, overrides) {
    const plan = planOf(planCode);
    return {
      monthlyQuota: monthlyQuotaOf(plan, overrides.monthlyQuota),
      ratePerSecond: ratePerSecondOf(plan, overrides.ratePerSecond),
    };
  },
  hasFeature: (planCode, addons, feature) => hasFeature(planOf(planCode), addons, feature),
  refusalOf: (feature) => REFUSALS[feature],
};
