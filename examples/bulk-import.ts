// Flow 3, bulk import: a bulk contact job (25 contacts and one row that cannot go in, to show
// per-row results), polled by jobId until every row has its outcome. Upserts, so a second run
// updates the same contacts. Exits 1 unless the 25 went in and only the broken row was refused.
//   npm run example -- bulk-import [+14155552100]
import { fail, numbersFrom, poll, tidings } from './shared.ts';

const phones = numbersFrom(process.argv[2] ?? '+14155552100', 25);
const contacts = phones.map((phone, i) => ({ phone, name: `Imported ${i + 1}`, tags: ['imported'] }));
contacts.push({ phone: 'not a phone', name: 'Broken', tags: ['imported'] });

const job = await tidings.bulk.importContacts({ contacts, mode: 'upsert' });
console.log(`job ${job.jobId}: ${job.status}, ${job.total} rows`);
const done = await poll(
  `job ${job.jobId}`,
  () => tidings.bulk.getContactImport(job.jobId),
  (j) => j.status === 'completed' || j.status === 'failed',
);
console.log(`job ${done.jobId}: ${done.status}, ${done.succeeded} in, ${done.failed} failed`);
const refused = done.results.filter((r) => 'error' in r && r.error);
for (const r of refused) console.log(`  row ${r.index}: ${JSON.stringify(r.error)}`);
if (done.status !== 'completed') fail(`job ${done.jobId} ${done.status}: ${JSON.stringify(done.error)}`);
if (done.succeeded !== phones.length || refused.length !== 1 || refused[0]!.index !== phones.length)
  fail(`expected ${phones.length} rows in and only row ${phones.length} refused`);
console.log(
  JSON.stringify({ jobId: done.jobId, status: done.status, succeeded: done.succeeded, failed: done.failed }),
);
