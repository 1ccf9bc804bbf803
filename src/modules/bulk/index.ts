// The face of bulk: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export type { ChunkedJobDeps } from './chunked-job.ts';
export { chunkedJob, endForAccount } from './chunked-job.ts';
export { bulkContactsJob } from './contacts-job.ts';
export { subscribeBulkProgress } from './messages-progress.ts';
export type { BulkJobRow, ItemResult } from './repo.ts';
export { fairPriority, findJob, insertJob, lockJob, recordChunk, resultsOf } from './repo.ts';
export { bulkRoutes } from './routes.ts';
export { BulkJobParams, jobProperties, toJobBase } from './schemas.ts';
