// DELETE /conversations/{id} through HTTP: the conversation and its messages go, in both directions;
// the contact, its service window and the wallet's records stay; what Meta reports afterwards about a
// deleted message changes nothing; the customer's next message opens a new conversation. A message
// not yet handed over when its conversation goes is never sent: refunded, counted as failed by its
// bulk send, and its dispatch job ends finding nothing. Another tenant's conversation is 404.
import { beforeAll, describe, expect, it } from 'vitest';
import { DISPATCH_JOB } from '../../src/modules/messages/accept.ts';
import { call } from '../helpers/client.ts';
import {
  credit,
  eventually,
  type MessagingTenant,
  messageWhen,
  sandboxTenantWithKey,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

// Meta (the fake) approves templates as they are submitted.
const env = useMessagingApp({ autoApprove: true });
let base: string;
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: Awaited<ReturnType<typeof whatsappTenant>>['business'] };
type Body = Record<string, any>;

let numbers = 0;
const newNumber = () => `+1415555${String(4000 + numbers++).padStart(4, '0')}`;
const PROMO = { templateName: 'autumn_sale', templateLanguage: 'en_US', parameters: ['Ann'] };

/** An account on the fake WhatsApp Cloud API with money and an approved MARKETING template (always charged). */
async function liveTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '10.00');
  const created = await call(env.app, 'POST', '/templates', {
    key: t.apiKey,
    body: {
      name: PROMO.templateName,
      language: PROMO.templateLanguage,
      category: 'MARKETING',
      components: [
        {
          type: 'BODY',
          text: 'Hi {{1}}, our autumn sale starts today. Reply STOP to opt out.',
          example: { body_text: [['Ann']] },
        },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
  expect(submitted.body.status, JSON.stringify(submitted.body)).toBe('APPROVED');
  return t;
}

/** The customer writes in through Meta's callback; answers the stored message. */
async function customerWrites(t: Tenant, from: string, text: string): Promise<Body> {
  const res = await env.fake.postInbound(`${base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
    from,
    text,
  });
  expect(res.status, res.body).toBe(200);
  const list = await call(env.app, 'GET', '/messages', { key: t.apiKey });
  const found = list.body.data.find((m: Body) => m.direction === 'inbound' && m.text === text);
  expect(found, JSON.stringify(list.body)).toBeDefined();
  return found;
}

async function send(t: MessagingTenant, path: string, body: Body): Promise<Body> {
  const res = await call(env.app, 'POST', path, { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

const get = (t: MessagingTenant, path: string) => call(env.app, 'GET', path, { key: t.apiKey });
const remove = (t: MessagingTenant, id: string) =>
  call(env.app, 'DELETE', `/conversations/${id}`, { key: t.apiKey });

async function ledger(t: MessagingTenant): Promise<Body[]> {
  const res = await get(t, '/account/wallet/transactions?limit=100');
  expect(res.status).toBe(200);
  return res.body.data;
}

async function conversationEvents(accountId: string): Promise<string[]> {
  const { rows } = await env.tdb.db.query<{ type: string }>(
    `SELECT type FROM events WHERE account_id = $1 AND type LIKE 'conversation.%' ORDER BY id`,
    [accountId],
  );
  return rows.map((r) => r.type);
}

describe('deleting a conversation', () => {
  it('deletes it and its messages; the contact, its window and the wallet stay; Meta’s later news changes nothing; the next message opens a new one', async () => {
    const t = await liveTenant();
    const phone = newNumber();
    const other = newNumber();
    // The business writes first (in no conversation); the customer's answer opens one, which takes
    // the reminder in; a reply joins it. A message to someone else stays outside.
    const first = await send(t, '/messages', { to: phone, ...PROMO });
    expect(first.conversationId).toBeNull();
    const inbound = await customerWrites(t, phone, 'Tell me more');
    const conversationId = inbound.conversationId as string;
    const reply = await send(t, `/conversations/${conversationId}/messages`, PROMO);
    expect(reply.conversationId).toBe(conversationId);
    const elsewhere = await send(t, '/messages', { to: other, ...PROMO });
    const sent = await Promise.all(
      [first, reply, elsewhere].map((m) => messageWhen(env.app, t.apiKey, m.id, 'sent')),
    );
    expect(
      (await get(t, `/conversations/${conversationId}/messages`)).body.data.map((m: Body) => m.id),
    ).toEqual([reply.id, inbound.id, first.id]);
    const contactBefore = (await get(t, `/contacts/${inbound.contactId}`)).body;
    const ledgerBefore = await ledger(t);
    expect(ledgerBefore.filter((x) => x.type === 'debit').map((x) => x.reference)).toEqual(
      expect.arrayContaining([first.id, reply.id, elsewhere.id]),
    );
    const balanceBefore = (await get(t, '/account/wallet')).body.balance;
    const eventsBefore = await conversationEvents(t.accountId);

    const res = await remove(t, conversationId);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(res.body).toBe('');

    for (const path of [
      `/conversations/${conversationId}`,
      `/conversations/${conversationId}/messages`,
      ...[first, inbound, reply].map((m) => `/messages/${m.id}`),
    ]) {
      expectError(await get(t, path), 404, 'RESOURCE_NOT_FOUND');
    }
    expect((await get(t, '/messages')).body.data.map((m: Body) => m.id)).toEqual([elsewhere.id]);
    expect((await get(t, `/conversations?contactId=${inbound.contactId}`)).body.data).toEqual([]);
    // The contact stays, with its service window; the money records stay, without their messages.
    expect((await get(t, `/contacts/${inbound.contactId}`)).body).toEqual(contactBefore);
    expect(await ledger(t)).toEqual(ledgerBefore);
    expect((await get(t, '/account/wallet')).body.balance).toEqual(balanceBefore);
    // No event: the contract has none for a deleted conversation.
    expect(await conversationEvents(t.accountId)).toEqual(eventsBefore);
    expectError(await remove(t, conversationId), 404, 'RESOURCE_NOT_FOUND');

    // Meta reports on a deleted message: nothing to apply it to, nothing breaks, nothing changes.
    const late = await env.fake.postStatus(`${base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
      wamid: sent[1]!.providerMessageId,
      status: 'delivered',
      recipientId: phone,
      bizOpaqueCallbackData: reply.id,
    });
    expect(late.status, late.body).toBe(200);
    expectError(await get(t, `/messages/${reply.id}`), 404, 'RESOURCE_NOT_FOUND');
    expect(await ledger(t)).toEqual(ledgerBefore);

    // Within the window (the contact's), a free-form message goes, in no conversation; the
    // customer's next message opens a new one, which takes it in.
    const later = await send(t, '/messages', { to: phone, type: 'text', text: 'Still interested?' });
    expect(later.conversationId).toBeNull();
    const again = await customerWrites(t, phone, 'Yes please');
    expect(again.contactId).toBe(inbound.contactId);
    expect(again.conversationId).toMatch(/^cnv_/);
    expect(again.conversationId).not.toBe(conversationId);
    const opened = (await get(t, `/conversations/${again.conversationId}`)).body;
    expect(opened).toMatchObject({ status: 'open', contactId: inbound.contactId, unreadCount: 1 });
    expect(
      (await get(t, `/conversations/${again.conversationId}/messages`)).body.data.map((m: Body) => m.id),
    ).toEqual([again.id, later.id]);
    expect(await conversationEvents(t.accountId)).toEqual([...eventsBefore, 'conversation.opened']);
  });

  it('a message not yet handed over is never sent: refunded, failed in its bulk send, its dispatch job finds nothing', async () => {
    const t = await liveTenant();
    const phone = newNumber();
    const inbound = await customerWrites(t, phone, 'Hi there');
    const conversationId = inbound.conversationId as string;
    const balanceBefore = (await get(t, '/account/wallet')).body.balance;
    const sendsBefore = env.fake.sent.length;

    await env.app.ctx.jobs.stop(5000);
    let queued: Body[];
    let jobId: string;
    try {
      const reply = await send(t, `/conversations/${conversationId}/messages`, PROMO);
      const bulk = await send(t, '/bulk/messages', { ...PROMO, recipients: [{ to: phone }] });
      jobId = bulk.jobId;
      const bulkMessageId = (await get(t, `/bulk/messages/${jobId}`)).body.results[0].messageId;
      queued = [reply, (await get(t, `/messages/${bulkMessageId}`)).body];
      for (const m of queued) {
        expect(m).toMatchObject({ status: 'queued', conversationId, pricing: { refunded: false } });
        expect(Number(m.pricing.charged.amount)).toBeGreaterThan(0);
      }
      expect((await get(t, '/account/wallet')).body.balance).not.toEqual(balanceBefore);

      expect((await remove(t, conversationId)).status).toBe(204);
    } finally {
      await env.app.ctx.jobs.start();
      await env.app.ctx.jobs.runWorkers();
    }

    // Each charge came back, by a refund naming its message.
    expect((await get(t, '/account/wallet')).body.balance).toEqual(balanceBefore);
    const refunds = (await ledger(t)).filter((x) => x.type === 'refund');
    expect(refunds.map((x) => [x.reference, x.amount.amount]).sort()).toEqual(
      queued.map((m) => [m.id, m.pricing.charged.amount]).sort(),
    );
    expect(refunds[0].description).toContain('deleted');
    // The bulk send is over: its message failed to go, and shows as deleted.
    const job = (await get(t, `/bulk/messages/${jobId}`)).body;
    expect(job).toMatchObject({ status: 'completed', total: 1, processed: 1, failed: 1 });
    expect(job.results[0]).toMatchObject({ messageId: queued[1]!.id, status: 'deleted' });

    // The dispatch jobs run (the workers are back) and end without sending anything.
    const states = async () => {
      const { rows } = await env.tdb.db.query<{ state: string }>(
        `SELECT state FROM pgboss.job
          WHERE name = $1 AND (data->'messageIds' @> jsonb_build_array($2::text)
                            OR data->'messageIds' @> jsonb_build_array($3::text))`,
        [DISPATCH_JOB, queued[0]!.id, queued[1]!.id],
      );
      return rows.map((r) => r.state);
    };
    const done = await eventually(states, (s) => s.length > 0 && s.every((x) => x === 'completed'));
    expect(done.length).toBeGreaterThan(0);
    expect(done.every((x) => x === 'completed')).toBe(true);
    expect(env.fake.sent.slice(sendsBefore).filter((s) => s.to === phone)).toEqual([]);
    for (const m of queued) expectError(await get(t, `/messages/${m.id}`), 404, 'RESOURCE_NOT_FOUND');
  });

  it("deletes a closed one too; another tenant's conversation is 404 and stays", async () => {
    const partnerKey = env.partner.partnerKey;
    const owner = await sandboxTenantWithKey(env.app, partnerKey);
    const stranger = await sandboxTenantWithKey(env.app, partnerKey);
    const writes = async (from: string) => {
      const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: owner.sandboxKey,
        body: { from, text: 'Hello' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.conversationId as string;
    };
    const open = await writes(newNumber());
    const closed = await writes(newNumber());
    expect(
      (await call(env.app, 'POST', `/conversations/${closed}/close`, { key: owner.apiKey })).status,
    ).toBe(200);

    for (const id of [open, closed, 'cnv_00000000000000000000000000']) {
      expectError(
        await call(env.app, 'DELETE', `/conversations/${id}`, { key: stranger.apiKey }),
        404,
        'RESOURCE_NOT_FOUND',
      );
    }
    expect((await get(owner, `/conversations/${open}`)).status).toBe(200);
    expect((await get(owner, `/conversations/${open}/messages`)).body.data).toHaveLength(1);

    expect((await remove(owner, closed)).status).toBe(204);
    expectError(await get(owner, `/conversations/${closed}`), 404, 'RESOURCE_NOT_FOUND');
    expect((await get(owner, `/conversations/${open}`)).status).toBe(200);
  });

  it('is in the OpenAPI document: 204, 404, no body', async () => {
    const doc = (await call(env.app, 'GET', '/api/v1/public/openapi.json')).body;
    const op = doc.paths['/api/v1/public/conversations/{id}'].delete;
    expect(op.operationId).toBe('deleteConversation');
    expect(op.requestBody).toBeUndefined();
    for (const status of ['204', '404']) expect(op.responses[status]).toBeDefined();
  });
});
