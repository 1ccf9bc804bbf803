// Flow 2, lead capture: a lead fills a form; their contact, an approved template chosen from the
// account's list, and the welcome sent. Exits 1 unless the welcome left (handed over to the channel).
//   npm run example -- lead-capture [+14155552002]
import { approvedTemplate, contactFor, fail, poll, tidings } from './shared.ts';

const phone = process.argv[2] ?? '+14155552002';
await approvedTemplate(
  'lead_welcome',
  'Hi {{1}}, thanks for your interest in {{2}}. Reply STOP to opt out.',
  ['Ann', 'our plans'],
  'MARKETING',
);

const lead = await contactFor(phone, { name: 'Bo', attributes: { source: 'website' } });
let chosen: { name: string; language: string; parameterCount: number } | undefined;
for await (const template of tidings.templates.list({ status: 'APPROVED', limit: 100 })) {
  if (template.name === 'lead_welcome') chosen = template;
}
if (!chosen) fail('no approved lead_welcome template');
const message = await tidings.messages.send({
  contactId: lead.id,
  templateName: chosen.name,
  templateLanguage: chosen.language,
  parameters: ['Bo', 'Tidings'],
});
const left = await poll(
  `${message.id} to leave the queue`,
  () => tidings.messages.get(message.id),
  (m) => m.status !== 'queued',
);
if (left.status === 'failed') fail(`the welcome ${message.id} failed: ${JSON.stringify(left.error)}`);
console.log(`welcomed ${lead.name} (${lead.phone}) with ${chosen.name}: ${message.id} ${left.status}`);
console.log(JSON.stringify({ contactId: lead.id, messageId: message.id, status: left.status }));
