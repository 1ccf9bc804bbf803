// Flow 5, real-time sync: register a webhook for message.* events and keep a local copy of each
// conversation up to date from them. A customer's message is played with the sandbox key so there
// is something to see; against a live channel, a real customer writes.
import { Tidings } from '@tidings/sdk';
import { env, listen, tidings } from './shared.ts';

const phone = process.argv[2] ?? '+14155552300';
const hook = await listen(['message.*']);

// The local copy: the status of every message, by id. Deliveries come at least once and not
// necessarily in order (a `sent` may arrive after its `delivered`), so a status only moves forward.
const local = new Map<string, string>();
const rank = (status: string) =>
  ['queued', 'sent', 'delivered', 'read', 'failed', 'received'].indexOf(status);
const seen = new Set<string>();
const customer = new Tidings({ apiKey: env('SANDBOX_KEY'), baseUrl: env('TIDINGS_URL') });
await customer.sandbox.inboundMessage({ from: phone, text: 'Is my order on its way?' });
const inbound = await hook.waitFor((e) => e.type === 'message.received');
const reply = await tidings.messages.send({ to: phone, type: 'text', text: 'Yes, it ships today.' });
await hook.waitFor((e) => e.type === 'message.delivered' && (e.data as { id?: string }).id === reply.id);

for (const event of hook.received) {
  if (seen.has(event.id)) continue; // a redelivery
  seen.add(event.id);
  const data = event.data as { id?: string; status?: string };
  if (data.id && data.status && rank(data.status) > rank(local.get(data.id) ?? ''))
    local.set(data.id, data.status);
  console.log(`${event.createdAt} ${event.type} ${data.id ?? ''}`);
}
await hook.close();
console.log(JSON.stringify({ inbound: inbound.type, reply: reply.id, synced: Object.fromEntries(local) }));
