export { wakeRoutes } from './wake-routes.ts';
export { AutomationWorker } from './worker.ts';
