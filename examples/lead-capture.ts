// Flow 2, lead capture: a lead fills a form; create the contact, choose an approved template from
// the account's list, and send it.
import { approvedTemplate, tidings } from './shared.ts';

const phone = process.argv[2] ?? '+14155552002';
await approvedTemplate(
  'lead_welcome',
  'Hi {{1}}, thanks for your interest in {{2}}. Reply STOP to opt out.',
  ['Ann', 'our plans'],
  'MARKETING',
);

const lead = await tidings.contacts.create({ phone, name: 'Bo', attributes: { source: 'website' } });
let chosen: { name: string; language: string; parameterCount: number } | undefined;
for await (const template of tidings.templates.list({ status: 'APPROVED', limit: 100 })) {
  if (template.name === 'lead_welcome') chosen = template;
}
if (!chosen) throw new Error('no approved lead_welcome template');
const message = await tidings.messages.send({
  to: lead.phone,
  templateName: chosen.name,
  templateLanguage: chosen.language,
  parameters: ['Bo', 'Tidings'],
});
console.log(`welcomed ${lead.name} (${lead.phone}) with ${chosen.name}: ${message.id} ${message.status}`);
console.log(JSON.stringify({ contactId: lead.id, messageId: message.id }));
