export { opsRoutes } from './routes.ts';
