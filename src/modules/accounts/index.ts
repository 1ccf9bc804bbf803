// The face of accounts: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { ADDONS, hasFeature, PLAN_CODES, PLAN_RULES, planOf } from './plans.ts';
export type { AccountChanges, AccountRow, AccountStatus } from './repo.ts';
export { findAccount, insertAccount, listAccounts, updateAccount } from './repo.ts';
export { accountRoutes } from './routes.ts';
export {
  AccountStatusSchema,
  AddonsSchema,
  PartnerAccount,
  PlanCodeSchema,
  toPartnerAccount,
  UsageQuery,
  UsageReportSchema,
} from './schemas.ts';
export { usageBetween } from './usage.ts';
