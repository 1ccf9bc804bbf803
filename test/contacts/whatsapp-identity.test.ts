// WhatsApp customers known by their business-scoped user id, with or without a phone number, through
// the real callback endpoint, signed as Meta signs: every callback kind that names a customer, with
// Meta's own example payloads. The examples are from Meta's "Business-scoped user IDs" page
// (https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/,
// the June 29, 2026 text) and its system messages reference
// (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/);
// docs/history/issue-45-meta-identity.md keeps them. What a test changes in one (the wamid of a
// message Tidings sent, a timestamp made recent) is said where it does.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeBusiness } from '../fakes/whatsapp-cloud.ts';
import { envelope, statusExamples } from '../fixtures/meta-examples.ts';
import { call } from '../helpers/client.ts';
import {
  credit,
  eventually,
  type MessagingTenant,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';

const env = useMessagingApp({ config: { logLevel: 'warn' } });
let base: string;
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: FakeBusiness };
/** A tenant on the fake Graph API whose wallet pays its replies (service messages cost since 2026-10-01). */
async function newTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '1.00');
  return t;
}

const SHEENA = 'US.13491208655302741918';
const SHEENA_PARENT = 'US.ENT.11815799212886844830';
const now = () => String(Math.floor(Date.now() / 1000));
const wamid = () => `wamid.${randomBytes(24).toString('base64')}`;

/** Meta's `value` of a webhook field (messages unless said), in its envelope for the tenant's number, posted signed. */
async function post(t: Tenant, value: Record<string, unknown>, field = 'messages') {
  const res = await env.fake.postCallback(
    `${base}/api/v1/callbacks/whatsapp/${t.accountId}`,
    t.business,
    envelope(t.business, value, field),
  );
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body) as { applied: number };
}

/** Meta's example of a customer without a shared number writing in (BSUID page, "Incoming messages"). */
const sheenaWrites = (text = 'Does it come in another color?') => ({
  contacts: [
    {
      profile: { name: 'Sheena Nelson', username: 'realsheenanelson' },
      user_id: SHEENA,
      parent_user_id: SHEENA_PARENT,
    },
  ],
  messages: [
    {
      from_user_id: SHEENA,
      from_parent_user_id: SHEENA_PARENT,
      // Meta's example's id and time (1749416383) made fresh: one account stores a wamid once, and
      // the customer service window runs from the message's time.
      id: wamid(),
      timestamp: now(),
      type: 'text',
      text: { body: text },
    },
  ],
});

async function contacts(t: Tenant, query: Record<string, string>) {
  const res = await call(env.app, 'GET', '/contacts', { key: t.apiKey, query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as any[];
}

async function only(t: Tenant, query: Record<string, string>) {
  const found = await contacts(t, query);
  expect(found, JSON.stringify(query)).toHaveLength(1);
  return found[0];
}

describe('a customer without a phone number', () => {
  it('writes in: a contact with no phone, known by user id and username, with its conversation and window', async () => {
    const t = await newTenant();
    expect((await post(t, sheenaWrites())).applied).toBe(1);
    const contact = await only(t, { whatsappUserId: SHEENA });
    expect(contact).toMatchObject({
      phone: null,
      waId: null,
      name: 'Sheena Nelson',
      whatsappUserId: SHEENA,
      whatsappParentUserId: SHEENA_PARENT,
      whatsappUsername: 'realsheenanelson',
    });
    expect(contact.lastInboundAt).not.toBeNull();
    // `q` finds the username; the account's other contacts are not it.
    expect((await contacts(t, { q: 'sheenanel' })).map((c) => c.id)).toEqual([contact.id]);
    const conversations = await call(env.app, 'GET', '/conversations', {
      key: t.apiKey,
      query: { contactId: contact.id },
    });
    expect(conversations.body.data).toHaveLength(1);
    expect(conversations.body.data[0]).toMatchObject({ status: 'open', phone: null });
    const messages = await call(env.app, 'GET', '/messages', {
      key: t.apiKey,
      query: { direction: 'inbound' },
    });
    expect(messages.body.data[0]).toMatchObject({
      from: null,
      whatsappUserId: SHEENA,
      contactId: contact.id,
      text: 'Does it come in another color?',
    });
    // Writing again finds the same contact (by user id), however the username changed.
    const again = sheenaWrites('Blue?');
    again.contacts[0]!.profile.username = 'sheena.n';
    await post(t, again);
    expect(await contacts(t, {})).toHaveLength(1);
    expect((await only(t, { whatsappUserId: SHEENA })).whatsappUsername).toBe('sheena.n');
  });

  it('gets a reply by user id: the Graph request names them in `recipient`, not `to`', async () => {
    const t = await newTenant();
    await post(t, sheenaWrites());
    const contact = await only(t, { whatsappUserId: SHEENA });
    const before = env.fake.sent.length;
    for (const recipient of [{ whatsappUserId: SHEENA }, { contactId: contact.id }]) {
      const res = await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { ...recipient, type: 'text', text: 'Yes: blue and green.' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toMatchObject({ to: null, whatsappUserId: SHEENA, contactId: contact.id });
    }
    const sends = await env.fake.waitForSends(before + 2);
    for (const sent of sends.slice(before)) {
      expect(sent.body.recipient).toBe(SHEENA);
      expect(sent.body.to).toBeUndefined();
    }
  });

  it("can be asked for their number: Meta's request_contact_info interactive", async () => {
    const t = await newTenant();
    await post(t, sheenaWrites());
    const before = env.fake.sent.length;
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        whatsappUserId: SHEENA,
        type: 'interactive',
        interactive: { kind: 'contact_request', body: 'May we have your number for delivery updates?' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const [sent] = (await env.fake.waitForSends(before + 1)).slice(before);
    expect(sent!.body).toMatchObject({
      recipient: SHEENA,
      type: 'interactive',
      interactive: {
        type: 'request_contact_info',
        body: { text: 'May we have your number for delivery updates?' },
        action: { name: 'request_contact_info' },
      },
    });
  });

  it('names the recipient by exactly one of to, contactId and whatsappUserId', async () => {
    const t = await newTenant();
    const text = { type: 'text', text: 'Hi' };
    for (const body of [text, { ...text, to: '+14155550100', whatsappUserId: SHEENA }]) {
      const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
    }
    const unknown = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...text, contactId: 'ctc_01jv0000000000000000000000' },
    });
    expect(unknown.status).toBe(404);
    const shape = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...text, whatsappUserId: '+14155550100' },
    });
    expect(shape.status).toBe(400);
  });
});

describe('statuses and preferences name the customer by user id', () => {
  it("a delivered status of a send by user id (Meta's example) and a failed one without contacts", async () => {
    const t = await newTenant();
    await post(t, sheenaWrites());
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { whatsappUserId: SHEENA, type: 'text', text: 'Blue and green.' },
    });
    const handed = await eventually(
      () => call(env.app, 'GET', `/messages/${sent.body.id}`, { key: t.apiKey }),
      (r) => r.body.providerMessageId !== null,
    );
    // Meta's "delivered, sent to a BSUID" example, its wamid the message's.
    await post(t, {
      contacts: [
        {
          profile: { name: 'Pablo M.', username: 'pablomorales' },
          user_id: SHEENA,
          parent_user_id: SHEENA_PARENT,
        },
      ],
      statuses: [
        {
          id: handed.body.providerMessageId,
          status: 'delivered',
          timestamp: now(),
          recipient_user_id: SHEENA,
          recipient_parent_user_id: SHEENA_PARENT,
          pricing: { billable: true, pricing_model: 'PMP', type: 'regular', category: 'marketing' },
        },
      ],
    });
    const delivered = await call(env.app, 'GET', `/messages/${sent.body.id}`, { key: t.apiKey });
    expect(delivered.body.status).toBe('delivered');
    expect((await only(t, { whatsappUserId: SHEENA })).whatsappUsername).toBe('pablomorales');

    // Meta's failed example: no contacts[], no recipient_user_id (it went to a number). A customer
    // with that number writes first, so a free-form answer may go to them.
    await post(t, {
      contacts: [{ profile: { name: 'Bo' }, wa_id: '16505551234' }],
      messages: [{ from: '16505551234', id: wamid(), timestamp: now(), type: 'text', text: { body: 'Hi' } }],
    });
    const other = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: '+16505551234', type: 'text', text: 'Hello Bo.' },
    });
    expect(other.status, JSON.stringify(other.body)).toBe(202);
    const otherHanded = await eventually(
      () => call(env.app, 'GET', `/messages/${other.body.id}`, { key: t.apiKey }),
      (r) => r.body.providerMessageId !== null,
    );
    const example = statusExamples.failed(t.business, otherHanded.body.providerMessageId, '16505551234');
    const res = await env.fake.postCallback(
      `${base}/api/v1/callbacks/whatsapp/${t.accountId}`,
      t.business,
      example,
    );
    expect(res.status, res.body).toBe(200);
    const failed = await call(env.app, 'GET', `/messages/${other.body.id}`, { key: t.apiKey });
    expect(failed.body).toMatchObject({ status: 'failed', error: { providerCode: 131049 } });
  });

  it('user_preferences naming the user id alone stops marketing for that contact', async () => {
    const t = await newTenant();
    await post(t, sheenaWrites());
    // Meta's user_preferences syntax, with the wa_id left out (a customer whose number is withheld).
    await post(
      t,
      {
        contacts: [{ profile: { name: 'Sheena Nelson', username: 'realsheenanelson' }, user_id: SHEENA }],
        user_preferences: [
          {
            user_id: SHEENA,
            detail: 'User requested to stop marketing messages',
            category: 'marketing_messages',
            value: 'stop',
            timestamp: Number(now()),
          },
        ],
      },
      'user_preferences',
    );
    expect((await only(t, { whatsappUserId: SHEENA })).marketingOptOut).toBe(true);
  });
});

describe('one person, one contact', () => {
  it('a message carrying the number and the user id merges the two contacts into the one known by number', async () => {
    const t = await newTenant();
    // The business knows Sheena by number (imported, tagged); she first wrote without it.
    const known = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+16505551234', name: 'Sheena N.', tags: ['vip'] },
    });
    expect(known.status).toBe(201);
    await post(t, sheenaWrites());
    const byUserId = await only(t, { whatsappUserId: SHEENA });
    await call(env.app, 'POST', `/contacts/${byUserId.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['asked-color'] },
    });
    const events = await env.subscribe(t.apiKey, ['contact.merged']);
    // Meta's example with both identifiers (the number shared: a recent interaction).
    const both = sheenaWrites('It is Sheena, by the way');
    Object.assign(both.contacts[0]!, { wa_id: '16505551234' });
    Object.assign(both.messages[0]!, { from: '16505551234' });
    await post(t, both);

    const all = await contacts(t, {});
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({
      id: known.body.id,
      phone: '+16505551234',
      whatsappUserId: SHEENA,
      name: 'Sheena N.',
      tags: expect.arrayContaining(['vip', 'asked-color']),
    });
    // The merged id answers with the survivor.
    const old = await call(env.app, 'GET', `/contacts/${byUserId.id}`, { key: t.apiKey });
    expect(old.status).toBe(200);
    expect(old.body.id).toBe(known.body.id);
    // Every message is the survivor's, in one open conversation.
    const messages = await call(env.app, 'GET', '/messages', {
      key: t.apiKey,
      query: { direction: 'inbound' },
    });
    expect(messages.body.data).toHaveLength(2);
    expect(new Set(messages.body.data.map((m: any) => m.contactId))).toEqual(new Set([known.body.id]));
    const open = await call(env.app, 'GET', '/conversations', { key: t.apiKey, query: { status: 'open' } });
    expect(open.body.data).toHaveLength(1);
    expect(open.body.data[0].contactId).toBe(known.body.id);
    const [merged] = await events.receiver.waitFor(1);
    expect(merged!.json.data).toMatchObject({ survivorId: known.body.id, mergedId: byUserId.id });
  });

  it("two open conversations become the survivor's one, with both their notes and labels", async () => {
    const t = await newTenant();
    const api = (method: 'GET' | 'POST', path: string, body?: unknown) =>
      call(env.app, method, path, { key: t.apiKey, body });
    // She writes by number, then from an app that sends her user id alone: two contacts, two chats.
    await post(t, {
      contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
      messages: [{ from: '16505551234', id: wamid(), timestamp: now(), type: 'text', text: { body: 'Hi' } }],
    });
    await post(t, sheenaWrites());
    const open = (await api('GET', '/conversations?status=open')).body.data as any[];
    expect(open).toHaveLength(2);
    for (const [i, c] of open.entries()) {
      expect((await api('POST', `/conversations/${c.id}/notes`, { text: `note ${i}` })).status).toBe(201);
      expect(
        (await api('POST', `/conversations/${c.id}/labels`, { labels: ['both', `only-${i}`] })).status,
      ).toBe(200);
    }
    const both = sheenaWrites('It is Sheena, by the way');
    Object.assign(both.contacts[0]!, { wa_id: '16505551234' });
    Object.assign(both.messages[0]!, { from: '16505551234' });
    await post(t, both);

    const [kept] = (await api('GET', '/conversations?status=open')).body.data as any[];
    expect((await api('GET', '/conversations?status=open')).body.data).toHaveLength(1);
    expect([...kept.labels].sort()).toEqual(['both', 'only-0', 'only-1']);
    const notes = (await api('GET', `/conversations/${kept.id}/notes`)).body.data as any[];
    expect(notes.map((n) => n.text).sort()).toEqual(['note 0', 'note 1']);
    expect(new Set(notes.map((n) => n.conversationId))).toEqual(new Set([kept.id]));
  });

  it("the answer to the request for the number (origin contact_request) is the customer's; a shared card is not", async () => {
    const t = await newTenant();
    const known = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+16505551234' },
    });
    await post(t, sheenaWrites());
    const card = (origin: string) => ({
      contacts: [{ profile: { name: 'Sheena Nelson', username: 'realsheenanelson' }, user_id: SHEENA }],
      messages: [
        {
          id: wamid(),
          timestamp: now(),
          type: 'contacts',
          from_user_id: SHEENA,
          contacts: [
            {
              ...(origin === 'other' && { vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Bo\nEND:VCARD' }),
              origin,
              name: { formatted_name: origin === 'other' ? 'Bo' : 'Sheena Nelson' },
              phones: [
                origin === 'other'
                  ? { phone: '+1 415 555 0199', wa_id: '14155550199', type: 'CELL' }
                  : { phone: '+1 650 555 1234', wa_id: '16505551234', type: 'CELL' },
              ],
            },
          ],
        },
      ],
    });
    // Somebody else's card, forwarded: nobody is re-keyed or merged.
    await post(t, card('other'));
    expect(await contacts(t, {})).toHaveLength(2);
    expect((await only(t, { whatsappUserId: SHEENA })).phone).toBeNull();
    // Her own number, shared on request: the two contacts are one.
    await post(t, card('contact_request'));
    const all = await contacts(t, {});
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ id: known.body.id, phone: '+16505551234', whatsappUserId: SHEENA });
  });
});

describe('a changed number or user id moves to the same contact', () => {
  it('user_changed_number: the contact takes the new number and user id (system message, no contacts[])', async () => {
    const t = await newTenant();
    const wrote = sheenaWrites();
    Object.assign(wrote.contacts[0]!, { wa_id: '16505551234' });
    Object.assign(wrote.messages[0]!, { from: '16505551234' });
    await post(t, wrote);
    const before = await only(t, { whatsappUserId: SHEENA });
    const updated = await env.subscribe(t.apiKey, ['contact.updated']);
    // Meta's system message reference (August 2026): the old number in `from`, the new one in
    // system.wa_id, the new user id beside the previous one.
    await post(t, {
      messages: [
        {
          from: '16505551234',
          id: wamid(),
          timestamp: now(),
          type: 'system',
          system: {
            body: 'User Sheena Nelson changed from 16505551234 to 16505559876',
            wa_id: '16505559876',
            user_id: 'US.99991208655302741918',
            previous_user_id: SHEENA,
            type: 'user_changed_number',
          },
        },
      ],
    });
    const after = await only(t, { whatsappUserId: 'US.99991208655302741918' });
    expect(after).toMatchObject({ id: before.id, phone: '+16505559876' });
    expect(await contacts(t, {})).toHaveLength(1);
    const [event] = await updated.receiver.waitFor(1);
    expect(event!.json.data.previous).toEqual({ phone: '+16505551234', whatsappUserId: SHEENA });
    // Not a message of the customer: nothing stored, no window moved.
    const inbound = await call(env.app, 'GET', '/messages', {
      key: t.apiKey,
      query: { direction: 'inbound' },
    });
    expect(inbound.body.data).toHaveLength(1);
  });

  it('user_changed_user_id and the withdrawn user_id_update field replace the user id', async () => {
    const t = await newTenant();
    await post(t, sheenaWrites());
    const before = await only(t, { whatsappUserId: SHEENA });
    await post(t, {
      messages: [
        {
          from_user_id: SHEENA,
          id: wamid(),
          timestamp: now(),
          type: 'system',
          system: {
            body: `User Sheena Nelson changed from ${SHEENA} to US.22221208655302741918`,
            user_id: 'US.22221208655302741918',
            type: 'user_changed_user_id',
          },
        },
      ],
    });
    expect((await only(t, { whatsappUserId: 'US.22221208655302741918' })).id).toBe(before.id);
    // Meta's user_id_update syntax (May 2026; withdrawn in August, still forwarded by some BSPs).
    await post(
      t,
      {
        contacts: [{ profile: { name: 'Sheena Nelson' } }],
        user_id_update: [
          {
            detail: 'User id for Sheena Nelson has been updated.',
            user_id: { previous: 'US.22221208655302741918', current: 'US.33331208655302741918' },
            timestamp: now(),
          },
        ],
      },
      'user_id_update',
    );
    expect((await only(t, { whatsappUserId: 'US.33331208655302741918' })).id).toBe(before.id);
  });
});
