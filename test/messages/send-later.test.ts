// Send later, through HTTP: POST /messages and a conversation's reply with `sendAt` are `scheduled`
// (listed, not charged, not handed over, `message.scheduled`), released by their job at their time
// as a send of that moment (charged then; a window closed by then or a wallet short: `failed`,
// never handed over, never charged), exactly once however often the job runs; cancellable until
// they go (`message.canceled`, 409 after, 404 for another account's), by an agent too. On a clock
// the test moves; the release jobs are made due by the test (pg-boss waits for the real time).
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { memberSession } from '../helpers/console.ts';
import { FakeClock } from '../helpers/harness.ts';
import {
  balanceOf,
  credit,
  customerWrote,
  eventually,
  messageWhen,
  sandboxTenantWithKey,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const clock = new FakeClock(Date.now());
const env = useMessagingApp({ autoApprove: true, now: clock.now });
let base = '';
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

let numbers = 0;
const newNumber = () => `+1415555${String(7000 + numbers++).padStart(4, '0')}`;
const inHours = (h: number) => new Date(clock.now().getTime() + h * HOUR).toISOString();

type Tenant = Awaited<ReturnType<typeof whatsappTenant>>;

/** A live tenant (charged sends) with money and an approved MARKETING template (US: 0.0250). */
async function liveTenant(money: string): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, money);
  const created = await call(env.app, 'POST', '/templates', {
    key: t.apiKey,
    body: {
      name: 'weekly_offer',
      language: 'en_US',
      category: 'MARKETING',
      components: [
        {
          type: 'BODY',
          text: 'Hello {{1}}, news about {{2}} for you. Reply STOP to opt out.',
          example: { body_text: [['Ann', 'x']] },
        },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
  expect(submitted.body.status, JSON.stringify(submitted.body)).toBe('APPROVED');
  return t;
}

const offer = (to: string, sendAt?: string) => ({
  to,
  templateName: 'weekly_offer',
  templateLanguage: 'en_US',
  parameters: ['Ann', 'shoes'],
  ...(sendAt ? { sendAt } : {}),
});

const send = (t: { apiKey: string }, body: object) =>
  call(env.app, 'POST', '/messages', { key: t.apiKey, body });

async function eventsOf(t: { apiKey: string }, type: string, messageId: string) {
  const res = await call(env.app, 'GET', '/events', {
    key: t.apiKey,
    query: { type, since: new Date(0).toISOString(), limit: '100' },
  });
  expect(res.status).toBe(200);
  return (res.body.data as any[]).filter((e) => e.data.id === messageId);
}

async function releaseRuns(messageId: string): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job
      WHERE name = 'messages.release' AND data->>'messageId' = $1 AND state = 'completed'`,
    [messageId],
  );
  return rows[0]!.n;
}

/** Makes the message's waiting release jobs due now and waits until `runs` of them have run. */
async function release(messageId: string, runs = 1): Promise<void> {
  await env.tdb.db.query(
    `UPDATE pgboss.job SET start_after = now()
      WHERE name = 'messages.release' AND data->>'messageId' = $1 AND state = 'created'`,
    [messageId],
  );
  env.app.ctx.jobs.wake('messages.release');
  await eventually(
    () => releaseRuns(messageId),
    (n) => n >= runs,
  );
}

const sentTo = (to: string) => env.fake.sent.filter((s) => s.to === to);

describe('send later', () => {
  it('is scheduled (listed, not charged, not sent), then charged and sent at its time', async () => {
    const t = await liveTenant('1.00');
    const to = newNumber();
    const sendAt = inHours(2);
    const res = await send(t, offer(to, sendAt));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ status: 'scheduled', sendAt, to, sentAt: null });
    expect(res.body.pricing.charged.amount).toBe('0.0000');
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');

    const listed = await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { status: 'scheduled' } });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((m: any) => m.id)).toEqual([res.body.id]);
    const [scheduled] = await eventsOf(t, 'message.scheduled', res.body.id);
    expect(scheduled?.data).toMatchObject({ id: res.body.id, status: 'scheduled', sendAt });

    // Its job run before its time (by the services' clock) puts it off: still scheduled.
    await release(res.body.id);
    expect((await call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey })).body.status).toBe(
      'scheduled',
    );
    expect(sentTo(to)).toHaveLength(0);

    clock.advance(2 * HOUR);
    await release(res.body.id, 2);
    const sent = await messageWhen(env.app, t.apiKey, res.body.id, 'sent');
    expect(sent.pricing).toMatchObject({ country: 'US', category: 'marketing' });
    expect(sent.pricing.charged.amount).toBe('0.0250');
    expect(sent.sendAt).toBe(sendAt);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    expect(sentTo(to)).toHaveLength(1);
    const stillScheduled = await call(env.app, 'GET', '/messages', {
      key: t.apiKey,
      query: { status: 'scheduled' },
    });
    expect(stillScheduled.body.data).toEqual([]);
  });

  it('goes exactly once, however many times its job runs', async () => {
    const t = await liveTenant('1.00');
    const to = newNumber();
    const res = await send(t, offer(to, inHours(1)));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    // A second job for the same message (a retry, another process): both run at its time.
    await env.app.ctx.jobs.enqueue(
      env.tdb.db,
      'messages.release',
      { messageId: res.body.id },
      {
        startAfter: new Date(Date.now() + HOUR),
      },
    );
    clock.advance(HOUR);
    await release(res.body.id, 2);
    await messageWhen(env.app, t.apiKey, res.body.id, 'sent');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    const { rows } = await env.tdb.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM wallet_transactions WHERE reference = $1`,
      [res.body.id],
    );
    expect(rows[0]!.n).toBe(1);
    expect(sentTo(to)).toHaveLength(1);
  });

  it('fails with CSW_VIOLATION when the window closed by its time: never handed over, never charged', async () => {
    const t = await liveTenant('1.00');
    const to = newNumber();
    // The customer wrote 23 hours ago: the window is open now, closed in two hours.
    await customerWrote(env.tdb.db, t.accountId, to, new Date(clock.now().getTime() - 23 * HOUR));
    const res = await send(t, { to, type: 'text', text: 'Your order shipped', sendAt: inHours(2) });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.status).toBe('scheduled');

    clock.advance(2 * HOUR);
    await release(res.body.id);
    const failed = await messageWhen(env.app, t.apiKey, res.body.id, 'failed');
    expect(failed.error).toMatchObject({ code: 'CSW_VIOLATION' });
    expect(failed.failedAt).toBe(clock.now().toISOString());
    expect(failed.pricing.charged.amount).toBe('0.0000');
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');
    expect(sentTo(to)).toHaveLength(0);
    const [event] = await eventsOf(t, 'message.failed', res.body.id);
    expect(event?.data).toMatchObject({ status: 'failed', previousStatus: 'scheduled' });
  });

  it('fails with INSUFFICIENT_BALANCE when the wallet is short at its time (accepted though)', async () => {
    const t = await liveTenant('0.0100');
    const to = newNumber();
    const res = await send(t, offer(to, inHours(1)));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    clock.advance(HOUR);
    await release(res.body.id);
    const failed = await messageWhen(env.app, t.apiKey, res.body.id, 'failed');
    expect(failed.error.code).toBe('INSUFFICIENT_BALANCE');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0100');
    expect(sentTo(to)).toHaveLength(0);
  });

  it('is canceled while scheduled (never sent nor charged); after that, or once it went, 409', async () => {
    const t = await liveTenant('1.00');
    const { receiver } = await env.subscribe(t.apiKey, ['message.scheduled', 'message.canceled']);
    const to = newNumber();
    const res = await send(t, offer(to, inHours(3)));
    // A provider's report naming it (ours in biz_opaque_callback_data) moves nothing: it never went.
    const report = (status: 'sent' | 'delivered') =>
      env.fake.postStatus(`${base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
        wamid: `wamid.${res.body.id}`,
        status,
        recipientId: to,
        bizOpaqueCallbackData: res.body.id,
      });
    expect(JSON.parse((await report('delivered')).body)).toMatchObject({ applied: 0 });
    expect((await call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey })).body.status).toBe(
      'scheduled',
    );
    const canceled = await call(env.app, 'POST', `/messages/${res.body.id}/cancel`, { key: t.apiKey });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body).toMatchObject({ id: res.body.id, status: 'canceled' });
    const [event] = await eventsOf(t, 'message.canceled', res.body.id);
    expect(event?.data).toMatchObject({ status: 'canceled', previousStatus: 'scheduled' });
    // Webhooks deliver them as any event.
    const deliveries = await receiver.waitFor(2);
    expect(deliveries.map((d) => [d.json.type, d.json.data.id, d.json.data.status])).toEqual([
      ['message.scheduled', res.body.id, 'scheduled'],
      ['message.canceled', res.body.id, 'canceled'],
    ]);
    expect(JSON.parse((await report('sent')).body)).toMatchObject({ applied: 0 });
    expectError(
      await call(env.app, 'POST', `/messages/${res.body.id}/cancel`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );

    // Its job at its time finds it canceled.
    clock.advance(3 * HOUR);
    await release(res.body.id);
    expect((await call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey })).body.status).toBe(
      'canceled',
    );
    expect(sentTo(to)).toHaveLength(0);
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');

    // A message sent at once, or one that went, is not cancellable; another account's is not found.
    const now = await send(t, offer(newNumber()));
    expect(now.body.status).toBe('queued');
    expectError(
      await call(env.app, 'POST', `/messages/${now.body.id}/cancel`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );
    const later = await send(t, offer(newNumber(), inHours(1)));
    const other = await liveTenant('1.00');
    expectError(
      await call(env.app, 'POST', `/messages/${later.body.id}/cancel`, { key: other.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    clock.advance(HOUR);
    await release(later.body.id);
    await messageWhen(env.app, t.apiKey, later.body.id, 'sent');
    expectError(
      await call(env.app, 'POST', `/messages/${later.body.id}/cancel`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );
  });

  it('makes one scheduled message per Idempotency-Key', async () => {
    const t = await liveTenant('1.00');
    const body = offer(newNumber(), inHours(1));
    const headers = { 'idempotency-key': `later-${t.accountId}` };
    const first = await call(env.app, 'POST', '/messages', { key: t.apiKey, body, headers });
    const again = await call(env.app, 'POST', '/messages', { key: t.apiKey, body, headers });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body).toMatchObject({ id: first.body.id, status: 'scheduled' });
    const listed = await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { status: 'scheduled' } });
    expect(listed.body.data.map((m: any) => m.id)).toEqual([first.body.id]);
  });

  it('takes at most 30 days ahead; a time past is refused, a time now is a send now', async () => {
    const t = await liveTenant('1.00');
    const far = await send(t, offer(newNumber(), new Date(clock.now().getTime() + 31 * DAY).toISOString()));
    expectError(far, 400, 'INVALID_REQUEST');
    expect(far.body.error.details).toEqual([{ field: 'sendAt', issue: 'is more than 30 days ahead' }]);
    const past = await send(t, offer(newNumber(), inHours(-1)));
    expectError(past, 400, 'INVALID_REQUEST');
    expect(past.body.error.details).toEqual([{ field: 'sendAt', issue: 'is in the past' }]);
    // A bad body is refused at once, scheduled or not.
    expectError(
      await send(t, { ...offer(newNumber(), inHours(1)), templateName: 'nope' }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const edge = await send(t, offer(newNumber(), new Date(clock.now().getTime() + 30 * DAY).toISOString()));
    expect(edge.body.status).toBe('scheduled');
    const now = await send(t, offer(newNumber(), clock.now().toISOString()));
    expect(now.status, JSON.stringify(now.body)).toBe(202);
    expect(now.body).toMatchObject({ status: 'queued', sendAt: null });
    expect(now.body.pricing.charged.amount).toBe('0.0250');
  });

  it('schedules a reply in a conversation, which an agent may cancel; it is the first response when it goes', async () => {
    const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
    const sla = await call(env.app, 'POST', '/sla-policies', {
      key: t.apiKey,
      body: { name: 'Standard', firstResponseMinutes: 120 },
    });
    expect(sla.status, JSON.stringify(sla.body)).toBe(201);
    const from = newNumber();
    const inbound = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from, text: 'When does the shop open?' },
    });
    expect(inbound.status, JSON.stringify(inbound.body)).toBe(201);
    const path = `/conversations/${inbound.body.conversationId}/messages`;
    const sendAt = inHours(1);
    const reply = await call(env.app, 'POST', path, {
      key: t.apiKey,
      body: { type: 'text', text: 'At nine', sendAt },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    expect(reply.body).toMatchObject({
      status: 'scheduled',
      sendAt,
      conversationId: inbound.body.conversationId,
    });
    const waiting = await call(env.app, 'GET', `/conversations/${inbound.body.conversationId}`, {
      key: t.apiKey,
    });
    expect(waiting.body.sla).toMatchObject({ firstResponseAt: null });
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const second = await call(env.app, 'POST', path, {
      ...agent,
      body: { type: 'text', text: 'Or ten', sendAt },
    });
    expect(second.body.status).toBe('scheduled');
    const canceled = await call(env.app, 'POST', `/messages/${second.body.id}/cancel`, { ...agent });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body.status).toBe('canceled');

    clock.advance(HOUR);
    await release(reply.body.id);
    await release(second.body.id);
    const went = await messageWhen(env.app, t.apiKey, reply.body.id, 'read');
    expect(went.conversationId).toBe(inbound.body.conversationId);
    const conversation = await call(env.app, 'GET', `/conversations/${inbound.body.conversationId}`, {
      key: t.apiKey,
    });
    expect(conversation.status, JSON.stringify(conversation.body)).toBe(200);
    expect(conversation.body.lastMessage.id).toBe(reply.body.id);
    // Sent in time: the first response target is met, nothing left to judge.
    expect(conversation.body.sla).toMatchObject({
      firstResponseAt: expect.any(String),
      nextDueAt: null,
      firstResponseBreachedAt: null,
    });
    expect((await call(env.app, 'GET', `/messages/${second.body.id}`, { key: t.apiKey })).body.status).toBe(
      'canceled',
    );
  });
});
