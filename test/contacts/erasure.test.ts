// Erasure (DELETE /contacts/{id}?erase=true, DELETE /partner/accounts/{id}?erase=true). A contact
// gets every kind of row a business makes about a customer, through the API with the workers
// running: messages both ways (a text naming it, a file through Meta, a charged template sent with
// an Idempotency-Key), a conversation, events delivered to a receiver that echoes them back (kept as
// response excerpts), a rule run, a sequence enrollment, a journey run, a call, a broadcast campaign,
// a bulk import naming it. After the erasure a scan of every text, JSON, array and bytea column of
// every table (ours and pg-boss's) finds neither its number (either form), name, email nor
// attribute; the ledger keeps every amount and still adds up. Erasing one contact leaves another
// untouched, sends contact.erased with the id only, and lets the number write in again as a new
// contact; erasing a closed sub-account also takes its team's names and emails and console logins.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeWhatsAppCloud, inboundMessages } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey } from '../helpers/client.ts';
import { credit, whatsappTenant } from '../helpers/messaging.ts';
import { placesHolding } from '../helpers/personal-data.ts';
import { Receiver } from '../helpers/receiver.ts';
import { useTestApp } from '../helpers/setup.ts';
import { postCallStatus } from '../helpers/voice.ts';
import { eventually, until } from '../helpers/wait.ts';

let fake: FakeWhatsAppCloud;
let receiver: Receiver;
beforeAll(async () => {
  fake = await FakeWhatsAppCloud.start();
  // The receiver answers with what it got: the attempts keep an excerpt of it, as a real one may.
  receiver = await Receiver.start((r) => ({ status: 200, body: r.body }));
});
const env = useTestApp({
  workers: true,
  config: () => ({ whatsappGraphUrl: fake.graphUrl, webhookAllowedHosts: ['127.0.0.1'] }),
});
beforeAll(async () => {
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await fake?.close();
  await receiver?.close();
});

interface Person {
  phone: string;
  name: string;
  email: string;
  city: string;
}
const needles = (p: Person) => [p.phone.slice(1), p.name, p.name.split(' ')[1]!, p.email, p.city];

async function expectNowhere(person: Person): Promise<void> {
  for (const needle of needles(person)) {
    expect({ needle, places: await placesHolding(env.tdb.db, needle) }).toEqual({ needle, places: [] });
  }
}

type Caller = (
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any }>;

async function ok(res: Promise<{ status: number; body: any }>, status: number): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** A tenant on the fake WhatsApp Cloud API with money, a sandbox key, a webhook to the receiver and a rule. */
async function business(label: string) {
  const { app } = env;
  const partnerKey = env.partner.partnerKey;
  const t = await whatsappTenant(app, partnerKey, fake, { accountName: label });
  await credit(app, partnerKey, t.accountId, '20.00');
  const sandbox = await createAccountKey(app, partnerKey, t.accountId, { scope: 'sandbox' });
  const a: Caller = (method, path, body, headers = {}) =>
    call(app, method, path, { key: t.apiKey, body, headers });
  await ok(a('POST', '/webhooks', { url: receiver.url(), events: ['*'] }), 201);
  await ok(
    a('POST', '/rules', {
      name: 'tag replies',
      trigger: { event: 'message.received' },
      actions: [{ type: 'add_tag', tag: 'replied' }],
    }),
    201,
  );
  const template = await ok(
    a('POST', '/templates', {
      name: 'erasure_news',
      language: 'en_US',
      category: 'MARKETING',
      components: [{ type: 'BODY', text: 'News for {{1}} today.', example: { body_text: [['Ann']] } }],
    }),
    201,
  );
  await env.tdb.db.query(`UPDATE templates SET status = 'APPROVED' WHERE id = $1`, [template.id]);
  const sequence = await ok(
    a('POST', '/sequences', {
      name: 'erasure sequence',
      steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Hello {{ contact.name }}' } }],
    }),
    201,
  );
  await ok(a('POST', `/sequences/${sequence.id}/publish`), 200);
  const journey = await ok(
    a('POST', '/journeys', {
      name: 'erasure journey',
      entry: { trigger: 'api', reentry: 'always', start: 'pause' },
      nodes: [{ id: 'pause', type: 'wait', config: { duration: 'P1D' } }],
      edges: [],
    }),
    201,
  );
  await ok(a('POST', `/journeys/${journey.id}/publish`), 200);
  const script = await ok(
    a('POST', '/voice/scripts', {
      name: 'erasure script',
      type: 'tts',
      tts: { text: 'Hello {{ contact.name }}' },
    }),
    201,
  );
  await ok(a('POST', `/voice/scripts/${script.id}/publish`), 200);
  return {
    t,
    a,
    sandboxKey: sandbox.apiKey,
    sequenceId: sequence.id,
    journeyId: journey.id,
    scriptId: script.id,
  };
}

/** The person as a contact of the business, with every kind of row about it; the outbound message's id. */
async function populate(
  b: Awaited<ReturnType<typeof business>>,
  p: Person,
): Promise<{ contactId: string; outboundId: string; callId: string }> {
  const { app } = env;
  const { t, a } = b;
  const contact = await ok(
    a('POST', '/contacts', {
      phone: p.phone,
      name: p.name,
      email: p.email,
      tags: ['vip'],
      attributes: { city: p.city },
    }),
    201,
  );
  const inbound = await ok(
    call(app, 'POST', '/sandbox/inbound-messages', {
      key: b.sandboxKey,
      body: { from: p.phone, text: `Hi, this is ${p.name}, ${p.email}` },
    }),
    201,
  );
  // An agent's note about them, mentioning a colleague (its event carries the text too).
  const colleague = await ok(
    a('POST', '/team/members', { name: 'Erin', email: `erin-${inbound.id}@example.com`, role: 'agent' }),
    201,
  );
  await ok(
    a('POST', `/conversations/${inbound.conversationId}/notes`, {
      text: `${p.name} (${p.phone}) lives in ${p.city}`,
      mentions: [colleague.id],
    }),
    201,
  );
  // A file from the customer, through Meta (the fake): fetched and kept by the media job.
  const held = fake.addMedia(
    t.business,
    Buffer.from(`%PDF-1.4 ${p.name}`),
    'application/pdf',
    'passport.pdf',
  );
  const payload = JSON.stringify(
    fake.inboundPayload(t.business, {
      from: p.phone,
      message: inboundMessages.document({ id: held.id, filename: `${p.name} passport.pdf` }),
    }),
  );
  const signature = createHmac('sha256', t.business.appSecret).update(payload).digest('hex');
  const callback = await app.inject({
    method: 'POST',
    url: `/api/v1/callbacks/whatsapp/${t.accountId}`,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` },
    payload,
  });
  expect(callback.statusCode, callback.body).toBe(200);
  // A charged template naming it, sent with an Idempotency-Key (its answer is stored).
  const outbound = await ok(
    a(
      'POST',
      '/messages',
      { to: p.phone, templateName: 'erasure_news', templateLanguage: 'en_US', parameters: [p.name] },
      { 'idempotency-key': `erasure-${p.phone}` },
    ),
    202,
  );
  await ok(a('POST', `/sequences/${b.sequenceId}/enrollments`, { contactId: contact.id }), 201);
  await ok(
    a('POST', `/journeys/${b.journeyId}/trigger`, { contactId: contact.id, data: { note: p.name } }),
    202,
  );
  const voiceCall = await ok(a('POST', '/voice/calls', { to: p.phone, scriptId: b.scriptId }), 202);
  const campaign = await ok(
    a('POST', '/campaigns', {
      name: `campaign for ${contact.id}`,
      message: {
        templateName: 'erasure_news',
        templateLanguage: 'en_US',
        parameters: ['{{ contact.name }}'],
      },
      audience: { contactIds: [contact.id] },
    }),
    201,
  );
  await ok(a('POST', `/campaigns/${campaign.id}/start`), 200);
  const bulk = await ok(a('POST', '/bulk/contacts', { contacts: [{ phone: p.phone, name: p.name }] }), 202);
  // Let the work settle: the file fetched, the bulk job and campaign done, the webhooks delivered.
  const db = env.tdb.db;
  await until(
    async () =>
      (
        await db.query(
          `SELECT 1 FROM media WHERE account_id = $1 AND direction = 'inbound' AND status = 'ready'`,
          [t.accountId],
        )
      ).rows.length > 0,
    30_000,
    () => 'the customer file was not fetched',
  );
  await eventually(
    () => a('GET', `/bulk/contacts/${bulk.jobId}`),
    (r) => r.body.status === 'completed',
    30_000,
  );
  await eventually(
    () => a('GET', `/campaigns/${campaign.id}`),
    (r) => r.body.status === 'completed',
    30_000,
  );
  await until(
    async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
        )
      ).rows[0]!.n === 0,
    30_000,
    () => 'webhook deliveries still pending',
  );
  // The personal data is indeed in many places (else the scans after the erasure prove nothing).
  expect((await placesHolding(db, p.phone.slice(1))).length).toBeGreaterThan(8);
  expect((await placesHolding(db, p.name)).length).toBeGreaterThan(3);
  return { contactId: contact.id, outboundId: outbound.id, callId: voiceCall.id };
}

async function ledgerOf(a: Caller) {
  const rows = (await ok(a('GET', '/account/wallet/transactions?limit=100'), 200)).data as any[];
  const balance = (await ok(a('GET', '/account/wallet'), 200)).balance;
  return { amounts: rows.map((r) => [r.id, r.type, r.amount, r.balanceAfter]), balance, rows };
}

/** The ledger kept every amount, and its transactions still sum to the balance. */
function expectLedgerKept(
  before: Awaited<ReturnType<typeof ledgerOf>>,
  after: Awaited<ReturnType<typeof ledgerOf>>,
) {
  expect(after.amounts).toEqual(before.amounts);
  expect(after.balance).toEqual(before.balance);
  const sum = after.rows.reduce((s, r) => s + Math.round(Number(r.amount.amount) * 1e6), 0);
  expect(sum).toBe(Math.round(Number(after.balance.amount) * 1e6));
}

describe('erasing a contact', () => {
  const zelda: Person = {
    phone: '+14155557731',
    name: 'Zelda Quincewright',
    email: 'zelda.q@example.org',
    city: 'Quahogville',
  };
  const olive: Person = {
    phone: '+14155557732',
    name: 'Olive Marchbanks',
    email: 'olive.m@example.org',
    city: 'Brindleton',
  };

  it('leaves none of its personal data in any table, keeps the money, and leaves others as they were', async () => {
    const b = await business('erasure: one contact');
    const { a } = b;
    const erased = await populate(b, zelda);
    const other = await populate(b, olive);
    const ledgerBefore = await ledgerOf(a);
    const messageBefore = await ok(a('GET', `/messages/${erased.outboundId}`), 200);
    const otherBefore = await ok(a('GET', `/contacts/${other.contactId}`), 200);
    const otherMessagesBefore = await ok(a('GET', `/messages?to=${encodeURIComponent(olive.phone)}`), 200);

    expect((await a('DELETE', `/contacts/${erased.contactId}?erase=true`)).status).toBe(204);

    await expectNowhere(zelda);
    // The call's provider speaks of it once more, naming the number: nothing of that is kept.
    await postCallStatus(env.app, env.tdb.db, b.t.accountId, erased.callId, {
      CallStatus: 'completed',
      SequenceNumber: '99',
      CallDuration: '7',
      To: zelda.phone,
      From: '+15005550000',
    });
    await expectNowhere(zelda);
    expect((await a('GET', `/contacts/${erased.contactId}`)).status).toBe(404);
    // The message keeps everything but what named the customer.
    const message = await ok(a('GET', `/messages/${erased.outboundId}`), 200);
    const { to, template, providerMessageId, error, updatedAt, ...kept } = messageBefore;
    expect(message).toEqual({
      ...kept,
      to: 'erased',
      template: null,
      providerMessageId: null,
      error: error ? { ...error, message: expect.stringContaining('Erased'), details: undefined } : null,
      updatedAt: expect.any(String),
    });
    expect([to, template?.parameters]).toEqual([zelda.phone, [zelda.name]]);
    expectLedgerKept(ledgerBefore, await ledgerOf(a));
    // The other contact, and its messages, as they were.
    expect(await ok(a('GET', `/contacts/${other.contactId}`), 200)).toEqual(otherBefore);
    expect(await ok(a('GET', `/messages?to=${encodeURIComponent(olive.phone)}`), 200)).toEqual(
      otherMessagesBefore,
    );
    for (const needle of needles(olive)) expect(await placesHolding(env.tdb.db, needle)).not.toEqual([]);
    // The event names the id only.
    const events = await ok(a('GET', '/events?type=contact.erased'), 200);
    expect(events.data.map((e: any) => e.data)).toEqual([{ id: erased.contactId }]);
    // The number writes in again: a new contact.
    await ok(
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: b.sandboxKey,
        body: { from: zelda.phone, text: 'Back again' },
      }),
      201,
    );
    const found = await ok(a('GET', `/contacts?phone=${encodeURIComponent(zelda.phone)}`), 200);
    expect(found.data).toHaveLength(1);
    expect(found.data[0].id).not.toBe(erased.contactId);
  }, 180_000);

  it('of a customer known by WhatsApp user id alone leaves no trace of the id, the username or the name', async () => {
    const b = await business('erasure: user id only');
    const { a } = b;
    const userId = 'US.77731208655302741918';
    const person = { name: 'Quillon Ravensmoor', username: 'quillon.r' };
    const wrote = await ok(
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: b.sandboxKey,
        body: {
          whatsappUserId: userId,
          username: person.username,
          name: person.name,
          text: 'Do you deliver?',
        },
      }),
      201,
    );
    const contact = await ok(a('GET', `/contacts/${wrote.contactId}`), 200);
    expect(contact).toMatchObject({ phone: null, whatsappUserId: userId });
    const reply = await ok(
      call(env.app, 'POST', '/messages', {
        key: b.sandboxKey,
        body: { contactId: contact.id, type: 'text', text: `Yes, ${person.name}` },
      }),
      202,
    );
    await eventually(
      () => a('GET', `/messages/${reply.id}`),
      (r) => r.body.status === 'read',
    );
    await ok(a('POST', `/contacts/${contact.id}/tags`, { tags: ['asked'] }), 200);
    // Every event about it delivered before it goes, so the receiver's echoes are kept to erase too.
    await until(
      () => receiver.received.some((r) => r.body.includes(reply.id)),
      10_000,
      () => "the reply's events delivered",
    );

    expect((await a('DELETE', `/contacts/${contact.id}?erase=true`)).status).toBe(204);
    for (const needle of [userId, person.username, person.name, 'Quillon']) {
      expect({ needle, places: await placesHolding(env.tdb.db, needle) }).toEqual({ needle, places: [] });
    }
    expect((await a('GET', `/contacts/${contact.id}`)).status).toBe(404);
  }, 120_000);

  it('of a contact others were merged into leaves no trace of the merged ids either', async () => {
    const b = await business('erasure: merged');
    const { a } = b;
    const userId = 'US.55531208655302741918';
    const phone = '+14155550377';
    // First known by user id alone, then by number: two contacts, until a message shows both.
    const byUserId = await ok(
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: b.sandboxKey,
        body: { whatsappUserId: userId, username: 'ysolde.f', name: 'Ysolde Farrowmere', text: 'Hello' },
      }),
      201,
    );
    // Its conversation's events name that contact's id alone (a conversation shows no user id).
    await ok(a('POST', `/conversations/${byUserId.conversationId}/close`), 200);
    const byPhone = await ok(a('POST', '/contacts', { phone, name: 'Ysolde F.' }), 201);
    await ok(
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: b.sandboxKey,
        body: { from: phone, whatsappUserId: userId, text: 'It is me again' },
      }),
      201,
    );
    // The one known by number survives; the merged id answers with it.
    const merged = await ok(a('GET', `/contacts/${byUserId.contactId}`), 200);
    expect(merged).toMatchObject({ id: byPhone.id, phone, whatsappUserId: userId });
    await until(
      () => receiver.received.some((r) => r.body.includes('contact.merged')),
      10_000,
      () => 'contact.merged delivered',
    );

    expect((await a('DELETE', `/contacts/${byPhone.id}?erase=true`)).status).toBe(204);
    for (const needle of [byUserId.contactId, userId, phone.slice(1), 'Ysolde', 'ysolde.f']) {
      expect({ needle, places: await placesHolding(env.tdb.db, needle) }).toEqual({ needle, places: [] });
    }
    expect((await a('GET', `/contacts/${byUserId.contactId}`)).status).toBe(404);
  }, 120_000);

  it('answers 404 for a contact of another account, erasing nothing', async () => {
    const { app } = env;
    const one = await whatsappTenant(app, env.partner.partnerKey, fake);
    const two = await whatsappTenant(app, env.partner.partnerKey, fake);
    const mine = await call(app, 'POST', '/contacts', {
      key: one.apiKey,
      body: { phone: '+14155557741', name: 'Kept' },
    });
    const res = await call(app, 'DELETE', `/contacts/${mine.body.id}`, {
      key: two.apiKey,
      query: { erase: 'true' },
    });
    expect(res.status).toBe(404);
    expect((await call(app, 'GET', `/contacts/${mine.body.id}`, { key: one.apiKey })).body.name).toBe('Kept');
  });
});

describe('erasing a sub-account', () => {
  const ines: Person = {
    phone: '+14155557751',
    name: 'Ines Falconbridge',
    email: 'ines.f@example.org',
    city: 'Ottervale',
  };
  const remo: Person = {
    phone: '+14155557752',
    name: 'Remo Thistlewood',
    email: 'remo.t@example.org',
    city: 'Larkspur',
  };
  const member = { name: 'Bettina Agentova', email: 'bettina.agentova@example.org' };

  it('closes it and leaves none of its people in any table; the ledger keeps its amounts', async () => {
    const b = await business('erasure: whole account');
    const { a, t } = b;
    await populate(b, ines);
    await populate(b, remo);
    await ok(a('POST', '/team/members', { ...member, role: 'agent' }), 201);
    const ledgerBefore = await ledgerOf(a);
    const partnerKey = env.partner.partnerKey;

    const res = await call(env.app, 'DELETE', `/partner/accounts/${t.accountId}`, {
      key: partnerKey,
      query: { erase: 'true' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(204);

    await expectNowhere(ines);
    await expectNowhere(remo);
    for (const needle of [member.name, member.email])
      expect(await placesHolding(env.tdb.db, needle)).toEqual([]);
    const account = await ok(
      call(env.app, 'GET', `/partner/accounts/${t.accountId}`, { key: partnerKey }),
      200,
    );
    expect(account.status).toBe('CLOSED');
    // The money, as the partner sees it: nothing lost (the account's own key now gets 403).
    const rows = await env.tdb.db.query<{ id: string; amount_micros: number; balance_after_micros: number }>(
      'SELECT id, amount_micros, balance_after_micros FROM wallet_transactions WHERE account_id = $1 ORDER BY id',
      [t.accountId],
    );
    expect(rows.rows.map((r) => r.id).sort()).toEqual(ledgerBefore.rows.map((r) => r.id).sort());
    const sum = rows.rows.reduce((s, r) => s + Number(r.amount_micros), 0);
    expect(sum).toBe(Math.round(Number(ledgerBefore.balance.amount) * 1e6));
    // Erasing again is harmless.
    expect(
      (
        await call(env.app, 'DELETE', `/partner/accounts/${t.accountId}`, {
          key: partnerKey,
          query: { erase: 'true' },
        })
      ).status,
    ).toBe(204);
  }, 180_000);
});
