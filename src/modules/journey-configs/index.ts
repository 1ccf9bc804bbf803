// The face of journey-configs: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { journeyConfigRoutes } from './routes.ts';
