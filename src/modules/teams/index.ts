// The face of teams: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { ASSIGN_CHANNEL, drainQueues, drainTeam, subscribeTeamAssignment } from './assign.ts';
export { existingTeams, teamRef } from './repo.ts';
export { teamsRoutes } from './routes.ts';
