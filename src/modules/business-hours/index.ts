// The face of business hours: what other modules and app.ts may use of it, by name. The rest of
// the folder is its own; docs/architecture.md § The stack says which modules may import it.

export type { HoursRow } from './repo.ts';
export { findHours } from './repo.ts';
export { businessHoursRoutes } from './routes.ts';
export { answerCustomer } from './service.ts';
