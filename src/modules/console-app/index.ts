export { consoleAppRoutes } from './routes.ts';
