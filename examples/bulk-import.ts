// Flow 3, bulk import: start a bulk contact job, then poll it by jobId until every row has its
// outcome.
import { poll, tidings } from './shared.ts';

const first = Number(process.argv[2] ?? 2100);
const contacts = Array.from({ length: 25 }, (_, i) => ({
  phone: `+1415555${first + i}`,
  name: `Imported ${i + 1}`,
  tags: ['imported'],
}));
// One row that cannot go in, to show per-row results.
contacts.push({ phone: 'not a phone', name: 'Broken', tags: ['imported'] });

const job = await tidings.bulk.importContacts({ contacts, mode: 'upsert' });
console.log(`job ${job.jobId}: ${job.status}, ${job.total} rows`);
const done = await poll(
  () => tidings.bulk.getContactImport(job.jobId),
  (j) => j.status === 'completed' || j.status === 'failed',
);
console.log(`job ${done.jobId}: ${done.status}, ${done.succeeded} in, ${done.failed} failed`);
for (const r of done.results)
  if ('error' in r && r.error) console.log(`  row ${r.index}: ${JSON.stringify(r.error)}`);
console.log(
  JSON.stringify({ jobId: done.jobId, status: done.status, succeeded: done.succeeded, failed: done.failed }),
);
