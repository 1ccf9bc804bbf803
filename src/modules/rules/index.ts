export { recordRuns, runRulesFor } from './engine.ts';
export type { RuleRow } from './repo.ts';
export { ruleRoutes } from './routes.ts';
export { scanTimed } from './timed.ts';
