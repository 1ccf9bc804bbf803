// The face of SLA policies: what app.ts and the automation worker may use of it, by name. The rest
// of the folder is its own; docs/architecture.md § The stack says which modules may import it.
export { judgeDueSla } from './breaches.ts';
export { slaPolicyRoutes } from './routes.ts';
export { subscribeSla } from './service.ts';
