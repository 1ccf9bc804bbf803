// Flow 5, real-time sync: register a webhook for message.* events and keep a local copy of each
// conversation up to date from them. A customer's message is played with the sandbox key so there
// is something to see; against a live channel, a real customer writes. Exits 1 unless the customer's
// message came in and the reply was synced as delivered.
//   npm run example -- realtime-sync [+14155552300]
import { Tidings } from '@tidings/sdk';
import { env, fail, listen, tidings } from './shared.ts';

const phone = process.argv[2] ?? '+14155552300';
const hook = await listen(['message.*']);
try {
  // The local copy: the status of every message, by id. Deliveries come at least once and not
  // necessarily in order (a `sent` may arrive after its `delivered`), so a status only moves forward.
  const local = new Map<string, string>();
  const rank = (status: string) =>
    ['queued', 'sent', 'delivered', 'read', 'failed', 'received'].indexOf(status);
  const seen = new Set<string>();
  const customer = new Tidings({ apiKey: env('SANDBOX_KEY'), baseUrl: env('TIDINGS_URL') });
  const wrote = await customer.sandbox.inboundMessage({ from: phone, text: 'Is my order on its way?' });
  const inbound = await hook.waitFor(
    `the customer's message ${wrote.id}`,
    (e) => e.type === 'message.received' && (e.data as { id?: string }).id === wrote.id,
  );
  const reply = await tidings.messages.send({ to: phone, type: 'text', text: 'Yes, it ships today.' });
  await hook.waitFor(
    `the delivery of ${reply.id}`,
    (e) =>
      (e.type === 'message.delivered' || e.type === 'message.failed') &&
      (e.data as { id?: string }).id === reply.id,
  );

  for (const event of hook.received) {
    if (seen.has(event.id)) continue; // a redelivery
    seen.add(event.id);
    const data = event.data as { id?: string; status?: string };
    if (data.id && data.status && rank(data.status) > rank(local.get(data.id) ?? ''))
      local.set(data.id, data.status);
    console.log(`${event.createdAt} ${event.type} ${data.id ?? ''}`);
  }
  if (!['delivered', 'read'].includes(local.get(reply.id) ?? ''))
    fail(`the reply ${reply.id} was synced as ${local.get(reply.id) ?? 'nothing'}, not delivered`);
  console.log(JSON.stringify({ inbound: inbound.type, reply: reply.id, synced: Object.fromEntries(local) }));
} finally {
  await hook.close();
}
