export { mediaRoutes } from './routes.ts';
export { MediaStore } from './service.ts';
