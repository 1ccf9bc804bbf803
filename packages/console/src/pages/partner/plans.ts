// The plans a partner may put an account on. The codes are held to the API's (the SDK's type of
// `planCode`) by the compiler, both ways; the names are the ones GET /account answers.
import type { BodyOf } from '@tidings/sdk';

type PlanCode = NonNullable<BodyOf<'post', '/api/v1/public/partner/accounts'>>['planCode'];

export const PLANS = [
  { code: 'free', name: 'Free' },
  { code: 'starter', name: 'Starter' },
  { code: 'pro', name: 'Pro (API access as an add-on)' },
  { code: 'business', name: 'Business' },
  { code: 'business_plus', name: 'Business+' },
  { code: 'premium', name: 'Premium' },
  { code: 'premium_plus', name: 'Premium+' },
  { code: 'scale', name: 'Scale' },
] as const satisfies readonly { code: PlanCode; name: string }[];

type Missing = Exclude<PlanCode, (typeof PLANS)[number]['code']>;
// Fails to compile when the API has a plan this list lacks.
export const ALL_PLANS_LISTED: [Missing] extends [never] ? true : Missing = true;

export const PLAN_OPTIONS = PLANS.map((p) => ({ value: p.code, label: p.name }));

export function planName(code: string): string {
  return PLANS.find((p) => p.code === code)?.name.replace(/ \(.*\)$/, '') ?? code;
}

export const STATUS_NAMES: Record<string, string> = {
  ACTIVE: 'Active',
  SUSPENDED: 'Suspended',
  CLOSED: 'Closed',
};
