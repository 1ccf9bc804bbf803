export type { Action, Definition, Route } from './definition.ts';
export type { ScriptWithTwiml } from './repo.ts';
export { callableScriptProblem, findScript } from './repo.ts';
export { voiceScriptRoutes } from './routes.ts';
export { sayBudget } from './say-limits.ts';
export type { TwimlContext } from './twiml.ts';
export { nodeTwiml, ttsTwiml } from './twiml.ts';
