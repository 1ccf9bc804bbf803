// Flow 1, appointment reminder: the patient's contact, the reminder template sent to it, and a
// webhook that sees the reminder delivered. Exits 1 unless it was delivered.
//   npm run example -- appointment-reminder [+14155552001]
import { approvedTemplate, contactFor, fail, listen, tidings } from './shared.ts';

const phone = process.argv[2] ?? '+14155552001';
const template = await approvedTemplate(
  'appointment_reminder',
  'Hi {{1}}, your appointment is on {{2}}. Reply to confirm.',
  ['Ann', 'Monday 10:00'],
);
const contact = await contactFor(phone, { name: 'Ann Lee', tags: ['patient'] });
const hook = await listen(['message.*']);
try {
  const message = await tidings.messages.send({
    contactId: contact.id,
    templateName: template.name,
    templateLanguage: template.language,
    parameters: ['Ann', 'Tuesday 9:30'],
  });
  console.log(`sent ${message.id} to ${contact.phone}: ${message.status}`);
  const outcome = await hook.waitFor(
    `the delivery of ${message.id}`,
    (e) =>
      (e.type === 'message.delivered' || e.type === 'message.failed') &&
      (e.data as { id?: string }).id === message.id,
  );
  if (outcome.type !== 'message.delivered')
    fail(`${message.id} was not delivered: ${JSON.stringify((outcome.data as { error?: unknown }).error)}`);
  console.log(`webhook: ${outcome.type} for ${message.id}`);
  console.log(JSON.stringify({ contactId: contact.id, messageId: message.id, event: outcome.type }));
} finally {
  await hook.close();
}
