// The face of events: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { eventsToReplay } from './repo.ts';
export { eventRoutes } from './routes.ts';
export { ReplayBody, ReplaySchema } from './schemas.ts';
