export { eventsToReplay } from './repo.ts';
export { eventRoutes } from './routes.ts';
export { ReplayBody, ReplaySchema } from './schemas.ts';
