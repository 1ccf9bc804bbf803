// The face of automation-worker: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { wakeRoutes } from './wake-routes.ts';
export { AutomationWorker } from './worker.ts';
