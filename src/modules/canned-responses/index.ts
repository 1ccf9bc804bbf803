// The face of canned responses: what app.ts may use of it, by name. The rest of the folder is its
// own; docs/architecture.md § The stack says which modules may import it.
export { cannedResponseRoutes } from './routes.ts';
