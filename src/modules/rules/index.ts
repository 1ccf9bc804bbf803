// The face of rules: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.

export { subscribeRuleRunMerges } from './contact-merges.ts';
export { recordRuns, runRulesFor } from './engine.ts';
export type { RuleRow } from './repo.ts';
export { ruleRoutes } from './routes.ts';
export { scanTimed } from './timed.ts';
