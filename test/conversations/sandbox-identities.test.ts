// The sandbox plays WhatsApp's identities as Meta does (channels/sandbox/user-ids.ts): every
// simulated customer has a stable user id, learnt by their contact from the statuses of a send;
// test numbers +1 NXX 555-011Y are customers with a username who withhold their number; a customer
// can write by user id alone; and a number change moves to the same contact.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { approvedTemplate, eventually, sandboxTenantWithKey, useMessagingApp } from '../helpers/messaging.ts';

const env = useMessagingApp({ config: { logLevel: 'warn' } });
const tenant = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

async function writes(key: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function contacts(key: string, query: Record<string, string> = {}) {
  const res = await call(env.app, 'GET', '/contacts', { key, query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as any[];
}

describe('sandbox customers have WhatsApp user ids', () => {
  it('a customer writing by number is given a stable user id, the same on every message', async () => {
    const t = await tenant();
    await writes(t.sandboxKey, { from: '+14155550123', text: 'Hi' });
    const [contact] = await contacts(t.apiKey);
    expect(contact.phone).toBe('+14155550123');
    expect(contact.whatsappUserId).toMatch(/^US\.\d{19}$/);
    const second = await writes(t.sandboxKey, { from: '+14155550123', text: 'Again' });
    expect(second.whatsappUserId).toBe(contact.whatsappUserId);
    // Another account's sandbox knows the same number under another id (ids are per business).
    const other = await tenant();
    await writes(other.sandboxKey, { from: '+14155550123', text: 'Hi' });
    const [theirs] = await contacts(other.apiKey);
    expect(theirs.whatsappUserId).not.toBe(contact.whatsappUserId);
  });

  it('a contact sent to learns its user id from the hand-over, and its reply by user id finds it', async () => {
    const t = await tenant();
    const made = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: '+14155550124' } });
    expect(made.body.whatsappUserId).toBeNull();
    const template = await approvedTemplate(env.app, t.apiKey, { name: 'visit_reminder' });
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.sandboxKey,
      body: {
        contactId: made.body.id,
        templateName: template.name,
        templateLanguage: template.language,
        parameters: ['Ann', 'Monday'],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const learnt = await eventually(
      () => call(env.app, 'GET', `/contacts/${made.body.id}`, { key: t.apiKey }),
      (r) => r.body.whatsappUserId !== null,
    );
    expect(learnt.body.whatsappUserId).toMatch(/^US\.\d{19}$/);
    await writes(t.sandboxKey, { whatsappUserId: learnt.body.whatsappUserId, text: 'By my user id' });
    expect(await contacts(t.apiKey)).toHaveLength(1);
  });

  it('a test number 555-011Y withholds its number: the contact has a user id and a username, no phone', async () => {
    const t = await tenant();
    const message = await writes(t.sandboxKey, { from: '+12025550112', text: 'Hello from a username' });
    expect(message.from).toBeNull();
    const [contact] = await contacts(t.apiKey);
    expect(contact).toMatchObject({ phone: null, whatsappUsername: 'sandbox.customer12' });
    expect(contact.whatsappUserId).toMatch(/^US\./);
    // A reply goes by user id.
    const reply = await call(env.app, 'POST', '/messages', {
      key: t.sandboxKey,
      body: { contactId: contact.id, type: 'text', text: 'Welcome' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    expect(reply.body).toMatchObject({ to: null, whatsappUserId: contact.whatsappUserId });
    await eventually(
      () => call(env.app, 'GET', `/messages/${reply.body.id}`, { key: t.sandboxKey }),
      (r) => r.body.status === 'read',
    );
  });

  it('a customer writes by user id and username alone', async () => {
    const t = await tenant();
    await writes(t.sandboxKey, {
      whatsappUserId: 'BR.1502576394655843',
      username: 'maria.lopez',
      text: 'Oi',
    });
    const [contact] = await contacts(t.apiKey, { q: 'maria.lo' });
    expect(contact).toMatchObject({
      phone: null,
      whatsappUserId: 'BR.1502576394655843',
      whatsappUsername: 'maria.lopez',
    });
    const missing = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { text: 'Nobody' },
    });
    expect(missing.status).toBe(400);
  });

  it('POST /sandbox/number-changes moves the customer to a new number and user id, the same contact', async () => {
    const t = await tenant();
    await writes(t.sandboxKey, { from: '+14155550125', text: 'Hi' });
    const [before] = await contacts(t.apiKey);
    const live = await call(env.app, 'POST', '/sandbox/number-changes', {
      key: t.apiKey,
      body: { from: '+14155550125', to: '+14155550126' },
    });
    expect(live.status).toBe(403);
    const changed = await call(env.app, 'POST', '/sandbox/number-changes', {
      key: t.sandboxKey,
      body: { from: '+14155550125', to: '+14155550126' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ id: before.id, phone: '+14155550126' });
    expect(changed.body.whatsappUserId).not.toBe(before.whatsappUserId);
    await writes(t.sandboxKey, { from: '+14155550126', text: 'New number' });
    expect(await contacts(t.apiKey)).toHaveLength(1);
    const nobody = await call(env.app, 'POST', '/sandbox/number-changes', {
      key: t.sandboxKey,
      body: { from: '+14155550999', to: '+14155550998' },
    });
    expect(nobody.status).toBe(404);
  });
});
