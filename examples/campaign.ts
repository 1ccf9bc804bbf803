// Flow 4, campaign: estimate what a send to many costs, and send only if the wallet covers it.
// Exits 1 unless every recipient's message was sent.
//   npm run example -- campaign [+14155552200]     (that number and the next two)
import { approvedTemplate, fail, numbersFrom, poll, tidings } from './shared.ts';

const [first, second, third] = numbersFrom(process.argv[2] ?? '+14155552200', 3);
await approvedTemplate(
  'autumn_campaign',
  'Hi {{1}}, our autumn collection is in store from {{2}}. Reply STOP to opt out.',
  ['Ann', 'Friday'],
  'MARKETING',
);
const campaign = {
  templateName: 'autumn_campaign',
  templateLanguage: 'en_US',
  parameters: ['friend', 'Friday'],
  recipients: [{ to: first!, parameters: ['Ann', 'Friday'] }, { to: second! }, { to: third! }],
};
const estimate = await tidings.messages.estimate(campaign);
console.log(
  `estimate: ${estimate.total.amount} ${estimate.total.currency} for ${estimate.recipients.length}; sufficient: ${estimate.sufficient}`,
);
if (!estimate.sufficient) fail(`the wallet cannot pay ${estimate.total.amount}: credit it first`);

const job = await tidings.bulk.sendMessages(campaign);
const done = await poll(
  `bulk job ${job.jobId}`,
  () => tidings.bulk.getMessageJob(job.jobId),
  (j) => j.status === 'completed' || j.status === 'failed',
);
console.log(`bulk job ${done.jobId}: ${done.status}, ${done.succeeded} sent, ${done.failed} failed`);
const failed = done.results.filter((r) => r.status === 'failed' || r.status === 'refused');
for (const r of failed) console.log(`  ${r.to}: ${r.status} ${JSON.stringify(r.error)}`);
if (done.status !== 'completed' || done.failed > 0)
  fail(`${done.failed} of ${done.total} recipients were not sent (bulk job ${done.jobId} ${done.status})`);
console.log(
  JSON.stringify({
    jobId: done.jobId,
    status: done.status,
    estimate: estimate.total.amount,
    sent: done.succeeded,
  }),
);
