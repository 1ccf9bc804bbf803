export { journeyConfigRoutes } from './routes.ts';
