// The face of team: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export type { Availability } from './repo.ts';
export { existingMembers, findMember, onlineMembers } from './repo.ts';
export { teamRoutes } from './routes.ts';
