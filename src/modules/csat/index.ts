// The face of CSAT: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { csatRoutes } from './routes.ts';
export { surveyOnEvent } from './service.ts';
