// Conversations through HTTP: a customer writes in through the sandbox, the business answers in the
// conversation, the 24-hour customer service window opens and lapses on a fake clock, and the
// conversation is listed, assigned, closed and reopened as an agent's inbox would use it.
import { describe, expect, it } from 'vitest';
import { timeOfId } from '../../src/kernel/values/ids.ts';
import { call, createAccountKey } from '../helpers/client.ts';
import {
  approvedTemplate,
  credit,
  eventually,
  type MessagingTenant,
  sandboxTenant,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { verifySignature } from '../helpers/receiver.ts';
import { expectError } from '../helpers/setup.ts';

const HOUR = 3600_000;
/** Real time, moved forward by what a test adds (and back when it is done). */
const clock = {
  offset: 0,
  now: () => new Date(Date.now() + clock.offset),
  advance: (ms: number) => {
    clock.offset += ms;
  },
  reset: () => {
    clock.offset = 0;
  },
};
const env = useMessagingApp({ now: clock.now });

let numbers = 0;
/** A distinct valid US number per call (clear of the sandbox's failure numbers 555-0101…0104). */
const newNumber = () => `+1415555${String(3000 + numbers++).padStart(4, '0')}`;

/** An account on the instant sandbox: its live key, and a sandbox key that plays the customer. */
async function inbox(): Promise<MessagingTenant & { sandboxKey: string }> {
  const t = await sandboxTenant(env.app, env.partner.partnerKey);
  const k = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, { scope: 'sandbox' });
  return { ...t, sandboxKey: k.apiKey };
}

async function customerWrites(t: { sandboxKey: string }, from: string, text: string, name?: string) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text, ...(name ? { name } : {}) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function conversationOf(key: string, contactId: string, status = 'open') {
  const res = await call(env.app, 'GET', `/conversations?contactId=${contactId}&status=${status}`, { key });
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0];
}

async function history(key: string, conversationId: string, limit = 100) {
  const res = await call(env.app, 'GET', `/conversations/${conversationId}/messages?limit=${limit}`, { key });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; direction: string; type: string; text: string | null }[];
}

describe('the customer service window, end to end (appointment reminder and real-time sync)', () => {
  it('template, customer reply through the sandbox (signed message.received), free reply, 24 h + 1 s later 422, a template still goes', async () => {
    const t = await inbox();
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
    const { receiver: r, secret } = await env.subscribe(t.apiKey, ['message.received', 'conversation.*']);

    const contact = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: newNumber(), name: 'Ann Lee' },
    });
    expect(contact.status).toBe(201);
    const phone = contact.body.phone as string;
    const reminder = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: phone,
        templateName: 'appointment_reminder',
        templateLanguage: 'en_US',
        parameters: ['Ann', 'Tuesday 9:30'],
      },
    });
    expect(reminder.status).toBe(202);
    // No conversation yet: the business wrote first.
    expect(reminder.body.conversationId).toBeNull();
    // Outside the window, free-form is refused.
    const early = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'text', text: 'Any questions?' },
    });
    expectError(early, 422, 'CSW_VIOLATION');

    const inbound = await customerWrites(t, phone, 'Yes, see you Tuesday!');
    expect(inbound).toMatchObject({
      direction: 'inbound',
      type: 'text',
      text: 'Yes, see you Tuesday!',
      from: phone,
      to: null,
      status: 'received',
      contactId: contact.body.id,
      channel: 'sandbox',
      pricing: null,
    });
    expect(inbound.conversationId).toMatch(/^cnv_/);

    // The webhook receives message.received (and conversation.opened), signed.
    const events = await eventually(
      async () => r.received.map((x) => verifySignature(secret, x) as { type: string; data: any }),
      (e) => e.some((x) => x.type === 'message.received') && e.some((x) => x.type === 'conversation.opened'),
    );
    const received = events.find((e) => e.type === 'message.received')!;
    expect(received.data).toMatchObject({ id: inbound.id, text: 'Yes, see you Tuesday!', from: phone });
    const opened = events.find((e) => e.type === 'conversation.opened')!;
    expect(opened.data).toMatchObject({
      id: inbound.conversationId,
      contactId: contact.body.id,
      status: 'open',
    });

    // The conversation took in the reminder it answers, and shows the window.
    const conversation = await call(env.app, 'GET', `/conversations/${inbound.conversationId}`, {
      key: t.apiKey,
    });
    expect(conversation.status).toBe(200);
    // The event showed the conversation as the API does (nothing changed it since).
    expect(opened.data).toEqual(conversation.body);
    // The window runs from when the customer wrote (the message's sentAt).
    const wroteAt = new Date(inbound.sentAt).getTime();
    expect(conversation.body).toMatchObject({
      status: 'open',
      contactId: contact.body.id,
      phone,
      assigneeId: null,
      serviceWindowOpen: true,
      serviceWindowExpiresAt: new Date(wroteAt + 24 * HOUR).toISOString(),
      lastInboundAt: inbound.sentAt,
      unreadCount: 1,
      lastMessage: { id: inbound.id, direction: 'inbound' },
    });
    expect((await history(t.apiKey, inbound.conversationId)).map((m) => m.id)).toEqual([
      inbound.id,
      reminder.body.id,
    ]);
    const contactNow = await call(env.app, 'GET', `/contacts/${contact.body.id}`, { key: t.apiKey });
    expect(contactNow.body.lastInboundAt).toBe(inbound.sentAt);

    // The agent answers free-form inside the window: free, in the conversation, nothing left unread.
    const reply = await call(env.app, 'POST', `/conversations/${inbound.conversationId}/messages`, {
      key: t.apiKey,
      body: { type: 'text', text: 'Great, see you then.' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    expect(reply.body).toMatchObject({ to: phone, conversationId: inbound.conversationId, type: 'text' });
    const after = await call(env.app, 'GET', `/conversations/${inbound.conversationId}`, { key: t.apiKey });
    expect(after.body).toMatchObject({ unreadCount: 0, lastMessage: { id: reply.body.id } });

    // A NAMED template replies by name, with a quick reply's payload, as POST /messages takes them.
    const named = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name: 'order_named',
        language: 'en_US',
        category: 'UTILITY',
        parameterFormat: 'NAMED',
        components: [
          {
            type: 'BODY',
            text: 'Hi {{first_name}}, your order arrives on {{day}}. Thanks!',
            example: {
              body_text_named_params: [
                { param_name: 'first_name', example: 'Ada' },
                { param_name: 'day', example: 'Friday' },
              ],
            },
          },
          { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Yes' }] },
        ],
      },
    });
    expect(named.status, JSON.stringify(named.body)).toBe(201);
    expect(
      (await call(env.app, 'POST', `/templates/${named.body.id}/submit`, { key: t.apiKey })).status,
    ).toBe(200);
    await eventually(
      () => call(env.app, 'GET', `/templates/${named.body.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'APPROVED',
    );
    const byName = await call(env.app, 'POST', `/conversations/${inbound.conversationId}/messages`, {
      key: t.apiKey,
      body: {
        templateName: 'order_named',
        templateLanguage: 'en_US',
        parameters: { first_name: 'Ann', day: 'Friday' },
        buttonPayloads: [{ index: 0, payload: 'order-yes' }],
      },
    });
    expect(byName.status, JSON.stringify(byName.body)).toBe(202);
    expect(byName.body).toMatchObject({
      conversationId: inbound.conversationId,
      template: { parameters: { first_name: 'Ann', day: 'Friday' } },
    });

    // 24 hours and a second later, the same reply is refused; a template still goes.
    clock.advance(24 * HOUR + 1000);
    try {
      const late = await call(env.app, 'POST', `/conversations/${inbound.conversationId}/messages`, {
        key: t.apiKey,
        body: { type: 'text', text: 'Great, see you then.' },
      });
      expectError(late, 422, 'CSW_VIOLATION');
      const lapsed = await call(env.app, 'GET', `/conversations/${inbound.conversationId}`, {
        key: t.apiKey,
      });
      expect(lapsed.body.serviceWindowOpen).toBe(false);
      const template = await call(env.app, 'POST', `/conversations/${inbound.conversationId}/messages`, {
        key: t.apiKey,
        body: {
          templateName: 'appointment_reminder',
          templateLanguage: 'en_US',
          parameters: ['Ann', 'Friday'],
        },
      });
      expect(template.status, JSON.stringify(template.body)).toBe(202);
      expect(template.body.conversationId).toBe(inbound.conversationId);
    } finally {
      clock.reset();
    }
  });

  it('a live key cannot play the customer (403); a bad number is 400; nothing is stored', async () => {
    const t = await inbox();
    const phone = newNumber();
    const live = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.apiKey,
      body: { from: phone, text: 'hi' },
    });
    expectError(live, 403, 'FORBIDDEN');
    const bad = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '12', text: 'hi' },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    const empty = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: phone },
    });
    expectError(empty, 400, 'INVALID_REQUEST');
    const contacts = await call(env.app, 'GET', `/contacts?phone=${encodeURIComponent(phone)}`, {
      key: t.apiKey,
    });
    expect(contacts.body.data).toEqual([]);
    const conversations = await call(env.app, 'GET', '/conversations', { key: t.apiKey });
    expect(conversations.body.data).toEqual([]);
  });

  it('an unknown number becomes a contact with the profile name; the same Idempotency-Key stores one message', async () => {
    const t = await inbox();
    const phone = newNumber();
    const send = () =>
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        headers: { 'idempotency-key': 'customer-1' },
        body: { from: phone, text: 'Hello?', name: 'Bo Chen' },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const contacts = await call(env.app, 'GET', `/contacts?phone=${encodeURIComponent(phone)}`, {
      key: t.apiKey,
    });
    expect(contacts.body.data).toHaveLength(1);
    expect(contacts.body.data[0]).toMatchObject({ name: 'Bo Chen', id: first.body.contactId });
    const listed = await call(env.app, 'GET', `/messages?direction=inbound&to=${encodeURIComponent(phone)}`, {
      key: t.apiKey,
    });
    expect(listed.body.data.map((m: { id: string }) => m.id)).toEqual([first.body.id]);
  });
});

describe('conversations', () => {
  it('one open conversation per contact: messages continue it, /messages sends join it, unread counts the customer’s', async () => {
    const t = await inbox();
    const phone = newNumber();
    const a = await customerWrites(t, phone, 'one');
    const b = await customerWrites(t, phone, 'two');
    expect(b.conversationId).toBe(a.conversationId);
    const c = await conversationOf(t.apiKey, a.contactId);
    expect(c).toMatchObject({ id: a.conversationId, unreadCount: 2, lastMessage: { id: b.id } });
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'text', text: 'Hi there' },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.conversationId).toBe(a.conversationId);
    const fetched = await call(env.app, 'GET', `/messages/${sent.body.id}`, { key: t.apiKey });
    expect(fetched.body.conversationId).toBe(a.conversationId);
    expect(await conversationOf(t.apiKey, a.contactId)).toMatchObject({
      unreadCount: 0,
      lastMessage: { id: sent.body.id, direction: 'outbound' },
    });
    expect((await history(t.apiKey, a.conversationId)).map((m) => [m.direction, m.text])).toEqual([
      ['outbound', 'Hi there'],
      ['inbound', 'two'],
      ['inbound', 'one'],
    ]);
  });

  it('lists by last activity with status, assignee, unassigned and contact filters', async () => {
    const t = await inbox();
    const [p1, p2, p3] = [newNumber(), newNumber(), newNumber()];
    const m1 = await customerWrites(t, p1, 'first');
    const m2 = await customerWrites(t, p2, 'second');
    const m3 = await customerWrites(t, p3, 'third');
    const list = async (query = '') => {
      const res = await call(env.app, 'GET', `/conversations${query}`, { key: t.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.data as { id: string }[]).map((c) => c.id);
    };
    expect(await list()).toEqual([m3.conversationId, m2.conversationId, m1.conversationId]);
    // New activity moves a conversation to the top.
    clock.advance(1000);
    try {
      await customerWrites(t, p1, 'again');
    } finally {
      clock.reset();
    }
    expect(await list()).toEqual([m1.conversationId, m3.conversationId, m2.conversationId]);
    // Pages follow the same order.
    const page1 = await call(env.app, 'GET', '/conversations?limit=2', { key: t.apiKey });
    expect(page1.body.data.map((c: { id: string }) => c.id)).toEqual([m1.conversationId, m3.conversationId]);
    const page2 = await call(env.app, 'GET', `/conversations?limit=2&cursor=${page1.body.nextCursor}`, {
      key: t.apiKey,
    });
    expect(page2.body).toMatchObject({ data: [{ id: m2.conversationId }], nextCursor: null });

    const member = await call(env.app, 'POST', '/team/members', {
      key: t.apiKey,
      body: { name: 'Agent A', email: `a${numbers}@example.com`, role: 'agent' },
    });
    expect(member.status).toBe(201);
    const assigned = await call(env.app, 'POST', `/conversations/${m2.conversationId}/assign`, {
      key: t.apiKey,
      body: { assigneeId: member.body.id },
    });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toMatchObject({ id: m2.conversationId, assigneeId: member.body.id });
    const closed = await call(env.app, 'POST', `/conversations/${m3.conversationId}/close`, {
      key: t.apiKey,
    });
    expect(closed.body).toMatchObject({ status: 'closed', closedAt: expect.any(String) });

    expect(await list(`?assigneeId=${member.body.id}`)).toEqual([m2.conversationId]);
    expect(await list('?unassigned=true')).toEqual([m1.conversationId, m3.conversationId]);
    expect(await list('?status=open')).toEqual([m1.conversationId, m2.conversationId]);
    expect(await list('?status=closed')).toEqual([m3.conversationId]);
    expect(await list(`?contactId=${m1.contactId}`)).toEqual([m1.conversationId]);
    expectError(
      await call(env.app, 'GET', '/conversations?cursor=bm9wZQ', { key: t.apiKey }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await call(env.app, 'GET', '/conversations?status=pending', { key: t.apiKey }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('assigns to a team member and back to nobody, with events; another tenant’s member or conversation is 404', async () => {
    const t = await inbox();
    const other = await inbox();
    const { receiver: r, secret } = await env.subscribe(t.apiKey, ['conversation.assigned']);
    const m = await customerWrites(t, newNumber(), 'help');
    const otherMessage = await customerWrites(other, newNumber(), 'mine');
    const ours = await call(env.app, 'POST', '/team/members', {
      key: t.apiKey,
      body: { name: 'Ann', email: `ann${numbers}@example.com`, role: 'agent' },
    });
    const theirs = await call(env.app, 'POST', '/team/members', {
      key: other.apiKey,
      body: { name: 'Zed', email: `zed${numbers}@example.com`, role: 'agent' },
    });
    const assign = (key: string, id: string, assigneeId: string | null) =>
      call(env.app, 'POST', `/conversations/${id}/assign`, { key, body: { assigneeId } });

    expectError(await assign(t.apiKey, m.conversationId, theirs.body.id), 404, 'RESOURCE_NOT_FOUND');
    expectError(await assign(t.apiKey, otherMessage.conversationId, ours.body.id), 404, 'RESOURCE_NOT_FOUND');
    expectError(await assign(t.apiKey, 'cnv_01jv0000000000000000000000', null), 404, 'RESOURCE_NOT_FOUND');
    expectError(
      await call(env.app, 'POST', `/conversations/${m.conversationId}/assign`, { key: t.apiKey, body: {} }),
      400,
      'INVALID_REQUEST',
    );
    for (const path of ['', '/messages']) {
      expectError(
        await call(env.app, 'GET', `/conversations/${otherMessage.conversationId}${path}`, { key: t.apiKey }),
        404,
        'RESOURCE_NOT_FOUND',
      );
    }
    expect((await conversationOf(t.apiKey, m.contactId)).assigneeId).toBeNull();

    expect((await assign(t.apiKey, m.conversationId, ours.body.id)).body.assigneeId).toBe(ours.body.id);
    expect((await assign(t.apiKey, m.conversationId, ours.body.id)).status).toBe(200); // no change, no event
    expect((await assign(t.apiKey, m.conversationId, null)).body.assigneeId).toBeNull();
    const events = await eventually(
      async () => r.received.map((x) => verifySignature(secret, x) as { type: string; data: any }),
      (e) => e.length >= 2,
    );
    expect(events.map((e) => [e.type, e.data.assigneeId, e.data.previousAssigneeId])).toEqual([
      ['conversation.assigned', ours.body.id, null],
      ['conversation.assigned', null, ours.body.id],
    ]);

    // Removing a member leaves their conversations assigned to nobody.
    await assign(t.apiKey, m.conversationId, ours.body.id);
    const removed = await call(env.app, 'DELETE', `/team/members/${ours.body.id}`, { key: t.apiKey });
    expect(removed.status).toBe(204);
    expect((await conversationOf(t.apiKey, m.contactId)).assigneeId).toBeNull();
  });

  it('close and reopen: 409s for the wrong state, replies to a closed one refused, the next message opens a new one', async () => {
    const t = await inbox();
    const phone = newNumber();
    const { receiver: r, secret } = await env.subscribe(t.apiKey, [
      'conversation.opened',
      'conversation.closed',
    ]);
    const first = await customerWrites(t, phone, 'question');
    const id = first.conversationId as string;
    const close = () => call(env.app, 'POST', `/conversations/${id}/close`, { key: t.apiKey });
    const reopen = (cid = id) => call(env.app, 'POST', `/conversations/${cid}/reopen`, { key: t.apiKey });

    expectError(await reopen(), 409, 'CONFLICT');
    expect((await close()).body).toMatchObject({ status: 'closed', unreadCount: 0 });
    expectError(await close(), 409, 'CONFLICT');
    const reply = await call(env.app, 'POST', `/conversations/${id}/messages`, {
      key: t.apiKey,
      body: { type: 'text', text: 'still there?' },
    });
    expectError(reply, 409, 'CONFLICT');
    // The window belongs to the contact: closing does not close it.
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'text', text: 'FYI' },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.conversationId).toBeNull();

    const second = await customerWrites(t, phone, 'another question');
    expect(second.conversationId).not.toBe(id);
    // The new conversation took in what the business sent since the first closed.
    expect((await history(t.apiKey, second.conversationId)).map((m) => m.id)).toEqual([
      second.id,
      sent.body.id,
    ]);
    expect((await history(t.apiKey, id)).map((m) => m.id)).toEqual([first.id]);
    const refused = await reopen();
    expectError(refused, 409, 'CONFLICT');
    expect(refused.body.error.details[0].conversationId).toBe(second.conversationId);

    await call(env.app, 'POST', `/conversations/${second.conversationId}/close`, { key: t.apiKey });
    const reopened = await reopen();
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ id, status: 'open', closedAt: null });
    const third = await customerWrites(t, phone, 'back again');
    expect(third.conversationId).toBe(id);

    const events = await eventually(
      async () => r.received.map((x) => verifySignature(secret, x) as { type: string; data: any }),
      (e) => e.length >= 5,
    );
    // Webhooks promise no order: compared as sets.
    const key = (x: unknown[]) => JSON.stringify(x);
    expect(
      events.map((e) => key([e.type, e.data.id, e.data.status, e.data.previousStatus ?? null])).sort(),
    ).toEqual(
      [
        ['conversation.opened', id, 'open', null],
        ['conversation.closed', id, 'closed', 'open'],
        ['conversation.opened', second.conversationId, 'open', null],
        ['conversation.closed', second.conversationId, 'closed', 'open'],
        ['conversation.opened', id, 'open', 'closed'],
      ]
        .map(key)
        .sort(),
    );
  });

  it('deleting a contact closes its open conversation and keeps its history; the number starts afresh', async () => {
    const t = await inbox();
    const phone = newNumber();
    const first = await customerWrites(t, phone, 'please forget me');
    const { receiver: r, secret } = await env.subscribe(t.apiKey, ['conversation.closed']);
    const deleted = await call(env.app, 'DELETE', `/contacts/${first.contactId}`, { key: t.apiKey });
    expect(deleted.status).toBe(204);
    const old = await call(env.app, 'GET', `/conversations/${first.conversationId}`, { key: t.apiKey });
    expect(old.body).toMatchObject({
      status: 'closed',
      serviceWindowExpiresAt: null,
      serviceWindowOpen: false,
    });
    expect((await history(t.apiKey, first.conversationId)).map((m) => m.id)).toEqual([first.id]);
    const closed = await eventually(
      async () => r.received.map((x) => verifySignature(secret, x) as { type: string; data: any }),
      (e) => e.length >= 1,
    );
    expect(closed.map((e) => [e.type, e.data.id, e.data.previousStatus])).toEqual([
      ['conversation.closed', first.conversationId, 'open'],
    ]);

    const again = await customerWrites(t, phone, 'hello again');
    expect(again.contactId).not.toBe(first.contactId);
    expect(again.conversationId).not.toBe(first.conversationId);
    const open = await call(env.app, 'GET', `/conversations?status=open`, { key: t.apiKey });
    expect(open.body.data.map((c: { id: string }) => c.id)).toEqual([again.conversationId]);
  });

  it('concurrent messages from a new number make one contact and one conversation', async () => {
    const t = await inbox();
    const phone = newNumber();
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(env.app, 'POST', '/sandbox/inbound-messages', {
          key: t.sandboxKey,
          body: { from: phone, text: `n${i}` },
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(replies.map((r) => r.body.contactId)).size).toBe(1);
    expect(new Set(replies.map((r) => r.body.conversationId)).size).toBe(1);
    const contacts = await call(env.app, 'GET', `/contacts?phone=${encodeURIComponent(phone)}`, {
      key: t.apiKey,
    });
    expect(contacts.body.data).toHaveLength(1);
    const c = await conversationOf(t.apiKey, replies[0]!.body.contactId);
    expect(c.unreadCount).toBe(10);
    expect(await history(t.apiKey, c.id)).toHaveLength(10);
  });

  it('history pages stay stable while messages arrive', async () => {
    const t = await inbox();
    const phone = newNumber();
    const sent: string[] = [];
    for (let i = 0; i < 12; i++) sent.push((await customerWrites(t, phone, `m${i}`)).id);
    const conversationId = (await conversationOf(t.apiKey, (await customerWrites(t, phone, 'm12')).contactId))
      .id;
    const all = (
      await call(env.app, 'GET', `/conversations/${conversationId}/messages?limit=100`, { key: t.apiKey })
    ).body.data.map((m: { id: string }) => m.id);
    expect(all).toHaveLength(13);

    const seen: string[] = [];
    let cursor: string | null = null;
    let arrivals = 0;
    do {
      const res: { status: number; body: any } = await call(
        env.app,
        'GET',
        `/conversations/${conversationId}/messages?limit=4${cursor ? `&cursor=${cursor}` : ''}`,
        { key: t.apiKey },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((m: { id: string }) => m.id));
      cursor = res.body.nextCursor;
      // Between pages, the customer writes and the business answers.
      await customerWrites(t, phone, `during ${arrivals++}`);
      await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { to: phone, type: 'text', text: 'ok' },
      });
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it('a reply is a send: priced as one, its parameters checked, no `to` of its own', async () => {
    const t = await inbox();
    await approvedTemplate(env.app, t.apiKey, {
      name: 'promo',
      category: 'MARKETING',
      body: 'Hi {{1}}, our sale starts {{2}}. Reply STOP to opt out.',
    });
    const m = await customerWrites(t, newNumber(), 'hi');
    // A sandbox channel never charges; the wallet rule is the send's, tested in messages-billing.
    const res = await call(env.app, 'POST', `/conversations/${m.conversationId}/messages`, {
      key: t.apiKey,
      body: { templateName: 'promo', templateLanguage: 'en_US', parameters: ['Ann', 'Monday'] },
    });
    expect(res.status).toBe(202);
    expect(res.body.pricing).toMatchObject({ category: 'marketing', freeReason: 'sandbox' });
    const wrong = await call(env.app, 'POST', `/conversations/${m.conversationId}/messages`, {
      key: t.apiKey,
      body: { templateName: 'promo', templateLanguage: 'en_US', parameters: ['Ann'] },
    });
    expectError(wrong, 400, 'INVALID_REQUEST');
    const withTo = await call(env.app, 'POST', `/conversations/${m.conversationId}/messages`, {
      key: t.apiKey,
      body: { to: '+14155550199', type: 'text', text: 'x' },
    });
    expectError(withTo, 400, 'INVALID_REQUEST');
  });
});

describe('the message list’s time filters when the request’s clock and the ids disagree', () => {
  it('finds each message by createdAfter and createdBefore, the clock days ahead of the ids or days behind', async () => {
    const t = await inbox();
    const phone = newNumber();
    const listed = async (query: Record<string, string>) => {
      const res = await call(env.app, 'GET', '/messages', {
        key: t.apiKey,
        query: { limit: '100', ...query },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((m: { id: string }) => m.id) as string[];
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    // Ahead: a message's created_at days later than its id's time; behind: days earlier.
    for (const offset of [3 * 24 * HOUR, -3 * 24 * HOUR]) {
      clock.advance(offset);
      try {
        const inbound = await customerWrites(t, phone, 'Are you open today?');
        const reply = await call(env.app, 'POST', `/conversations/${inbound.conversationId}/messages`, {
          key: t.apiKey,
          body: { type: 'text', text: 'Until six.' },
        });
        expect(reply.status, JSON.stringify(reply.body)).toBe(202);
        for (const id of [inbound.id as string, reply.body.id as string]) {
          // The database reads an id's time as the process does (migrations/033 scans with it).
          const { rows } = await env.tdb.db.query<{ ms: number }>('SELECT typeid_ms($1) AS ms', [id]);
          expect(Number(rows[0]!.ms)).toBe(timeOfId(id).getTime());
          const createdAt = Date.parse(
            (await call(env.app, 'GET', `/messages/${id}`, { key: t.apiKey })).body.createdAt,
          );
          expect(Math.abs(createdAt - (Date.now() + offset))).toBeLessThan(HOUR);
          expect(await listed({ createdAfter: iso(createdAt - 1) })).toContain(id);
          expect(await listed({ createdAfter: iso(createdAt) })).not.toContain(id);
          expect(await listed({ createdBefore: iso(createdAt + 1) })).toContain(id);
          expect(await listed({ createdBefore: iso(createdAt) })).not.toContain(id);
          expect(
            await listed({ createdAfter: iso(createdAt - 1), createdBefore: iso(createdAt + 1) }),
          ).toContain(id);
        }
      } finally {
        clock.reset();
      }
    }
  });
});
