// Flow 1, appointment reminder: create the contact, send the reminder template, register a webhook
// and see the reminder delivered.
import { approvedTemplate, listen, tidings } from './shared.ts';

const phone = process.argv[2] ?? '+14155552001';
const template = await approvedTemplate(
  'appointment_reminder',
  'Hi {{1}}, your appointment is on {{2}}. Reply to confirm.',
  ['Ann', 'Monday 10:00'],
);
const contact = await tidings.contacts.create({ phone, name: 'Ann Lee', tags: ['patient'] });
const hook = await listen(['message.*']);
const message = await tidings.messages.send({
  to: contact.phone,
  templateName: template.name,
  templateLanguage: template.language,
  parameters: ['Ann', 'Tuesday 9:30'],
});
console.log(`sent ${message.id} to ${contact.phone}: ${message.status}`);
const delivered = await hook.waitFor(
  (e) => e.type === 'message.delivered' && (e.data as { id?: string }).id === message.id,
);
console.log(`webhook: ${delivered.type} for ${message.id}`);
await hook.close();
console.log(JSON.stringify({ contactId: contact.id, messageId: message.id, event: delivered.type }));
