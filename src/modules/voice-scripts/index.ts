// The face of voice-scripts: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export type { Action, Definition, Route } from './definition.ts';
export type { ScriptWithTwiml } from './repo.ts';
export { callableScriptProblem, findScript } from './repo.ts';
export { voiceScriptRoutes } from './routes.ts';
export { sayBudget } from './say-limits.ts';
export type { TwimlContext } from './twiml.ts';
export { nodeTwiml, ttsTwiml } from './twiml.ts';
