// The face of sequences: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { bulkEnrollJob } from './bulk-enroll-job.ts';
export { subscribeEnrollmentMerges } from './contact-merges.ts';
export { enrollOnEvent, exitOnEvent } from './engine.ts';
export { sequenceActions } from './owned-actions.ts';
export { findSequence } from './repo.ts';
export { sequenceRoutes } from './routes.ts';
export { EnrollmentSchema, SendWindowSchema, toEnrollment, WakeBody } from './schemas.ts';
export { runDue } from './timer.ts';
export { wakeEnrollment } from './wake.ts';
