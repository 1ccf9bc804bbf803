export type { ChunkedJobDeps } from './chunked-job.ts';
export { chunkedJob, endForAccount } from './chunked-job.ts';
export { bulkContactsJob } from './contacts-job.ts';
export { subscribeBulkProgress } from './messages-progress.ts';
export type { BulkJobRow, ItemResult } from './repo.ts';
export { fairPriority, findJob, insertJob, lockJob, recordChunk, resultsOf } from './repo.ts';
export { bulkRoutes } from './routes.ts';
export { BulkJobParams, jobProperties, toJobBase } from './schemas.ts';
