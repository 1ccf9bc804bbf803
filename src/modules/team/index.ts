export { findMember } from './repo.ts';
export { teamRoutes } from './routes.ts';
