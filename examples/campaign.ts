// Flow 4, campaign: estimate what a send to many costs, and send only if the wallet covers it.
import { approvedTemplate, poll, tidings } from './shared.ts';

const first = Number(process.argv[2] ?? 2200);
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
  recipients: [
    { to: `+1415555${first}`, parameters: ['Ann', 'Friday'] },
    { to: `+1415555${first + 1}` },
    { to: `+1415555${first + 2}` },
  ],
};
const estimate = await tidings.messages.estimate(campaign);
console.log(
  `estimate: ${estimate.total.amount} ${estimate.total.currency} for ${estimate.recipients.length}; sufficient: ${estimate.sufficient}`,
);
if (!estimate.sufficient) throw new Error('credit the wallet first');

const job = await tidings.bulk.sendMessages(campaign);
const done = await poll(
  () => tidings.bulk.getMessageJob(job.jobId),
  (j) => j.status === 'completed' || j.status === 'failed',
);
console.log(`bulk job ${done.jobId}: ${done.status}, ${done.succeeded} sent, ${done.failed} failed`);
console.log(
  JSON.stringify({
    jobId: done.jobId,
    status: done.status,
    estimate: estimate.total.amount,
    sent: done.succeeded,
  }),
);
