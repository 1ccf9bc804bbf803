export { prepareDummyHash } from './passwords.ts';
export { consoleAuthRoutes } from './routes.ts';
