// The agent's own tools on a conversation, through HTTP: private notes (never messages, mentions
// told by events), labels (filtered on, set by rules and read by their conditions), snooze (out of
// the open list until a time or the customer's next message, each wake told once), and canned
// responses rendered for the customer before they are sent. On a clock the test moves.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { memberSession } from '../helpers/console.ts';
import { FakeClock } from '../helpers/harness.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const HOUR = 3600_000;
const clock = new FakeClock(Date.parse('2026-11-02T09:00:00Z'));
// Scans are run by the test (app.ctx.automation.scan), not by the timer.
const env = useMessagingApp({
  now: clock.now,
  config: { automationScanMs: 3_600_000, automationPollMs: 50 },
});
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

let numbers = 0;
const newNumber = () => `+1415555${String(6000 + numbers++).padStart(4, '0')}`;

async function customerWrites(t: SandboxTenant, from: string, text: string) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; conversationId: string; contactId: string };
}

const get = (t: SandboxTenant, path: string) => call(env.app, 'GET', path, { key: t.apiKey });
const post = (t: SandboxTenant, path: string, body?: unknown) =>
  call(env.app, 'POST', path, { key: t.apiKey, body });

async function eventsOf(t: SandboxTenant, type: string) {
  const res = await call(env.app, 'GET', '/events', {
    key: t.apiKey,
    query: { type, since: new Date(0).toISOString(), limit: '100' },
  });
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

async function member(t: SandboxTenant, name: string) {
  const res = await post(t, '/team/members', {
    name,
    email: `${name.toLowerCase()}-${numbers++}@example.com`,
    role: 'agent',
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

const openIds = async (t: SandboxTenant, query = '') =>
  ((await get(t, `/conversations?status=open${query}`)).body.data as any[]).map((c) => c.id);

describe('private notes', () => {
  it('are kept beside the messages, never among them, and tell each member they mention', async () => {
    const t = await account();
    const inbound = await customerWrites(t, newNumber(), 'My parcel never came');
    const carla = await member(t, 'Carla');
    const before = (await get(t, `/conversations/${inbound.conversationId}`)).body;

    const note = await post(t, `/conversations/${inbound.conversationId}/notes`, {
      text: '  Checked with the courier: lost. @Carla can you refund?  ',
      mentions: [carla, carla],
    });
    expect(note.status, JSON.stringify(note.body)).toBe(201);
    expect(note.body).toMatchObject({
      id: expect.stringMatching(/^nte_/),
      conversationId: inbound.conversationId,
      authorId: null,
      text: 'Checked with the courier: lost. @Carla can you refund?',
      mentions: [carla],
    });

    // Not a message: not in the history, the counts or the last activity.
    const history = (await get(t, `/conversations/${inbound.conversationId}/messages`)).body.data;
    expect(history.map((m: any) => m.id)).toEqual([inbound.id]);
    const after = (await get(t, `/conversations/${inbound.conversationId}`)).body;
    expect(after).toMatchObject({
      unreadCount: before.unreadCount,
      lastMessageAt: before.lastMessageAt,
      lastMessage: { id: inbound.id },
    });
    const messages = (await get(t, '/messages?limit=100')).body.data;
    expect(messages.map((m: any) => m.id)).toEqual([inbound.id]);

    const notes = (await get(t, `/conversations/${inbound.conversationId}/notes`)).body;
    expect(notes.data).toEqual([note.body]);

    // One event per member mentioned (once, though named twice), with the note and the conversation.
    const mentioned = await eventsOf(t, 'conversation.mentioned');
    expect(mentioned).toHaveLength(1);
    expect(mentioned[0].data).toMatchObject({
      id: inbound.conversationId,
      contactId: inbound.contactId,
      memberId: carla,
      note: { id: note.body.id, text: note.body.text },
    });
  });

  it('are written by the console member who writes them, and checked before anything is stored', async () => {
    const t = await account();
    const inbound = await customerWrites(t, newNumber(), 'Hello');
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const path = `/conversations/${inbound.conversationId}/notes`;
    const byAgent = await call(env.app, 'POST', path, { ...agent, body: { text: 'On it' } });
    expect(byAgent.status, JSON.stringify(byAgent.body)).toBe(201);
    expect(byAgent.body.authorId).toBe(agent.memberId);
    // A session writes as its own member; an API key names one of the account's.
    const other = await member(t, 'Dan');
    const asOther = await call(env.app, 'POST', path, { ...agent, body: { text: 'x', authorId: other } });
    expectError(asOther, 400, 'INVALID_REQUEST');
    const byKey = await post(t, path, { text: 'Signed', authorId: other });
    expect(byKey.body.authorId).toBe(other);

    // A stranger mentioned, a blank text, a conversation of another account: nothing stored.
    const stranger = await post(t, path, { text: 'Hi', mentions: [other, 'usr_01jv0000000000000000000000'] });
    expectError(stranger, 400, 'INVALID_REQUEST');
    expect(stranger.body.error.details).toEqual([
      { field: 'mentions[1]', issue: 'is not a team member of this account' },
    ]);
    expectError(await post(t, path, { text: '   ' }), 400, 'INVALID_REQUEST');
    const b = await account();
    expectError(await post(b, path, { text: 'peek' }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await get(b, path), 404, 'RESOURCE_NOT_FOUND');
    expect((await get(t, path)).body.data.map((n: any) => n.text)).toEqual(['Signed', 'On it']);
    expect(await eventsOf(t, 'conversation.mentioned')).toEqual([]);
  });
});

describe('labels', () => {
  it('are added, removed and filtered on, each change one conversation.labeled', async () => {
    const t = await account();
    const first = await customerWrites(t, newNumber(), 'Refund please');
    const second = await customerWrites(t, newNumber(), 'Where is it?');
    const path = `/conversations/${first.conversationId}/labels`;
    const added = await post(t, path, { labels: ['Refund', 'VIP', 'refund'] });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.labels).toEqual(['refund', 'vip']);
    // Again: nothing new, no event.
    expect((await post(t, path, { labels: ['vip'] })).body.labels).toEqual(['refund', 'vip']);
    expect(await openIds(t, '&label=VIP')).toEqual([first.conversationId]);
    expect(await openIds(t, '&label=delivery')).toEqual([]);
    expect(await openIds(t)).toEqual([second.conversationId, first.conversationId]);

    const removed = await call(env.app, 'DELETE', `${path}/vip`, { key: t.apiKey });
    expect(removed.status).toBe(200);
    expect(removed.body.labels).toEqual(['refund']);
    expect((await call(env.app, 'DELETE', `${path}/vip`, { key: t.apiKey })).body.labels).toEqual(['refund']);
    const events = (await eventsOf(t, 'conversation.labeled')).reverse();
    expect(events.map((e) => [e.data.labelsAdded, e.data.labelsRemoved, e.data.labels])).toEqual([
      [['refund', 'vip'], [], ['refund', 'vip']],
      [[], ['vip'], ['refund']],
    ]);

    expectError(await post(t, path, { labels: ['no!'] }), 400, 'INVALID_REQUEST');
    const many = Array.from({ length: 20 }, (_, i) => `l${i}`);
    expectError(await post(t, path, { labels: many }), 400, 'INVALID_REQUEST');
    expect((await get(t, `/conversations/${first.conversationId}`)).body.labels).toEqual(['refund']);
  });

  it('are a rule action and a rule condition', async () => {
    const t = await account();
    const label = await post(t, '/rules', {
      name: 'refunds',
      trigger: { event: 'message.received' },
      conditions: { all: [{ field: 'message.text', op: 'contains', value: 'refund' }] },
      actions: [{ type: 'add_label', label: 'Refund' }],
    });
    expect(label.status, JSON.stringify(label.body)).toBe(201);
    const tagIt = await post(t, '/rules', {
      name: 'tag refunders',
      trigger: { event: 'conversation.labeled' },
      conditions: { all: [{ field: 'conversation.labels', op: 'contains', value: 'refund' }] },
      actions: [{ type: 'add_tag', tag: 'refunder' }],
    });
    expect(tagIt.status, JSON.stringify(tagIt.body)).toBe(201);
    const bad = await post(t, '/rules', {
      name: 'bad',
      trigger: { event: 'message.received' },
      conditions: { all: [{ field: 'conversation.labels', op: 'starts_with', value: 'r' }] },
      actions: [{ type: 'remove_label', label: '!' }],
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'actions[0].label',
      'conditions.all[0].op',
    ]);

    const inbound = await customerWrites(t, newNumber(), 'I want a refund');
    await eventually(
      async () => (await get(t, `/contacts/${inbound.contactId}`)).body.tags,
      (tags) => tags.includes('refunder'),
      10_000,
    );
    const conversation = (await get(t, `/conversations/${inbound.conversationId}`)).body;
    expect(conversation.labels).toEqual(['refund']);
    const [labeled] = await eventsOf(t, 'conversation.labeled');
    expect(labeled.causedBy).toMatchObject({ kind: 'rule', id: label.body.id });
  });
});

describe('snooze', () => {
  it('hides an open conversation until its time, then wakes it once', async () => {
    const t = await account();
    const inbound = await customerWrites(t, newNumber(), 'Call me tomorrow');
    const until = new Date(clock.now().getTime() + 20 * HOUR).toISOString();
    const snoozed = await post(t, `/conversations/${inbound.conversationId}/snooze`, { until });
    expect(snoozed.status, JSON.stringify(snoozed.body)).toBe(200);
    expect(snoozed.body).toMatchObject({ status: 'open', snoozedUntil: until });
    expect(await openIds(t)).toEqual([]);
    expect(await openIds(t, '&snoozed=true')).toEqual([inbound.conversationId]);
    expect((await get(t, '/conversations')).body.data).toHaveLength(1);

    clock.advance(19 * HOUR);
    await env.app.ctx.automation.scan();
    expect(await openIds(t)).toEqual([]);
    clock.advance(HOUR);
    // Two scans at once (two processes): one wakes it.
    await Promise.all([env.app.ctx.automation.scan(), env.app.ctx.automation.scan()]);
    await env.app.ctx.automation.scan();
    expect(await openIds(t)).toEqual([inbound.conversationId]);
    const woke = await eventsOf(t, 'conversation.unsnoozed');
    expect(woke.map((e) => e.data.reason)).toEqual(['time']);
    expect(woke[0].data).toMatchObject({ id: inbound.conversationId, snoozedUntil: null });
    const [told] = await eventsOf(t, 'conversation.snoozed');
    expect(told.data).toMatchObject({ snoozedUntil: until, previousSnoozedUntil: null });
  });

  it('wakes when the customer writes, or when an agent wakes it; a closed one is not snoozed', async () => {
    const t = await account();
    const phone = newNumber();
    const inbound = await customerWrites(t, phone, 'Hi');
    const path = `/conversations/${inbound.conversationId}/snooze`;
    const until = new Date(clock.now().getTime() + 2 * HOUR).toISOString();
    expect((await post(t, path, { until })).status).toBe(200);
    await customerWrites(t, phone, 'Actually, now please');
    expect(await openIds(t)).toEqual([inbound.conversationId]);
    expect((await post(t, path, { until })).status).toBe(200);
    const awake = await post(t, path, { until: null });
    expect(awake.body.snoozedUntil).toBeNull();
    // Waking one that is awake changes nothing.
    expect((await post(t, path, { until: null })).status).toBe(200);
    const reasons = (await eventsOf(t, 'conversation.unsnoozed')).map((e) => e.data.reason).reverse();
    expect(reasons).toEqual(['customer', 'agent']);

    expectError(await post(t, path, { until: clock.now().toISOString() }), 400, 'INVALID_REQUEST');
    const far = new Date(clock.now().getTime() + 91 * 24 * HOUR).toISOString();
    expectError(await post(t, path, { until: far }), 400, 'INVALID_REQUEST');
    expect((await post(t, path, { until })).status).toBe(200);
    const closed = await post(t, `/conversations/${inbound.conversationId}/close`);
    expect(closed.body.snoozedUntil).toBeNull();
    expectError(await post(t, path, { until }), 409, 'CONFLICT');
  });
});

describe('canned responses', () => {
  it('are kept by shortcut, one per account, their Liquid checked when saved', async () => {
    const t = await account();
    const made = await post(t, '/canned-responses', {
      shortcut: 'Refund',
      title: 'Refund on its way',
      text: 'Hi {{ contact.name | default: "there" }}, your refund is on its way.',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({
      id: expect.stringMatching(/^cnr_/),
      shortcut: 'refund',
      media: null,
      template: null,
    });
    const again = await post(t, '/canned-responses', { shortcut: 'refund', title: 'x', text: 'y' });
    expectError(again, 409, 'CONFLICT');
    expect(again.body.error.details[0].cannedResponseId).toBe(made.body.id);
    const broken = await post(t, '/canned-responses', {
      shortcut: 'broken',
      title: 'x',
      text: 'Hi {{ contact.name ',
      template: { name: 'order_update', language: 'en_US', parameters: ['{% if %}'] },
    });
    expectError(broken, 400, 'INVALID_REQUEST');
    expect(broken.body.error.details.map((d: any) => d.field)).toEqual(['text', 'template.parameters[0]']);
    const sticker = await post(t, '/canned-responses', {
      shortcut: 'pic',
      title: 'x',
      text: 'caption',
      media: { kind: 'image' },
    });
    expectError(sticker, 400, 'INVALID_REQUEST');

    const other = await post(t, '/canned-responses', {
      shortcut: 'hours',
      title: 'Opening hours',
      text: '9 to 5',
    });
    const found = (q: string) =>
      get(t, `/canned-responses?q=${q}`).then((r) => (r.body.data as any[]).map((c) => c.shortcut));
    expect(await found('re')).toEqual(['refund']);
    expect(await found('OPENING')).toEqual(['hours']);
    expect(await found('%')).toEqual([]);

    const renamed = await call(env.app, 'PATCH', `/canned-responses/${other.body.id}`, {
      key: t.apiKey,
      body: { shortcut: 'refund' },
    });
    expectError(renamed, 409, 'CONFLICT');
    const changed = await call(env.app, 'PATCH', `/canned-responses/${other.body.id}`, {
      key: t.apiKey,
      body: {
        text: '9 to 6',
        media: { kind: 'document', url: 'https://example.com/hours.pdf', filename: 'hours.pdf' },
      },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ shortcut: 'hours', text: '9 to 6', media: { kind: 'document' } });

    const b = await account();
    expectError(await get(b, `/canned-responses/${made.body.id}`), 404, 'RESOURCE_NOT_FOUND');
    expect((await get(b, '/canned-responses')).body.data).toEqual([]);
    expect(
      (await call(env.app, 'DELETE', `/canned-responses/${made.body.id}`, { key: t.apiKey })).status,
    ).toBe(204);
    expectError(await get(t, `/canned-responses/${made.body.id}`), 404, 'RESOURCE_NOT_FOUND');
  });

  it('render for the customer: the text in the window, the template after it, problems by field', async () => {
    const t = await account();
    await approvedTemplate(env.app, t.apiKey, {
      name: 'refund_update',
      body: 'Hello {{1}}, news on your refund.',
      examples: ['Ann'],
    });
    const canned = await post(t, '/canned-responses', {
      shortcut: 'refund',
      title: 'Refund',
      text: 'Hi {{ contact.name | default: "there" }}, {{ agent.name }} here: your refund is on its way ({{ conversation.labels | join: ", " }}).',
      template: {
        name: 'refund_update',
        language: 'en_US',
        parameters: ['{{ contact.name | default: "there" }}'],
      },
    });
    expect(canned.status, JSON.stringify(canned.body)).toBe(201);
    const inbound = await customerWrites(t, newNumber(), 'Refund?');
    await call(env.app, 'PATCH', `/contacts/${inbound.contactId}`, { key: t.apiKey, body: { name: 'Ann' } });
    await post(t, `/conversations/${inbound.conversationId}/labels`, { labels: ['refund'] });
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const render = (who: object) =>
      call(env.app, 'POST', `/canned-responses/${canned.body.id}/render`, {
        ...who,
        body: { conversationId: inbound.conversationId },
      });

    const inWindow = await render(agent);
    expect(inWindow.status, JSON.stringify(inWindow.body)).toBe(200);
    expect(inWindow.body).toEqual({
      cannedResponseId: canned.body.id,
      conversationId: inbound.conversationId,
      serviceWindowOpen: true,
      text: 'Hi Ann, A agent here: your refund is on its way (refund).',
      message: { type: 'text', text: 'Hi Ann, A agent here: your refund is on its way (refund).' },
      problems: [],
    });
    // Sent as it is: the conversation's reply.
    const sent = await post(t, `/conversations/${inbound.conversationId}/messages`, inWindow.body.message);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);

    // An API key's render has no agent: a problem of the text, not an error.
    const byKey = await render({ key: t.apiKey });
    expect(byKey.body.problems).toEqual([{ field: 'text', issue: expect.stringContaining('agent') }]);
    expect(byKey.body.text).toBeNull();

    clock.advance(25 * HOUR);
    // (The first session idled out on the clock: a new one.)
    const outside = await render(await memberSession(env.app, t.apiKey, 'agent'));
    expect(outside.body).toMatchObject({
      serviceWindowOpen: false,
      message: {
        type: 'template',
        templateName: 'refund_update',
        templateLanguage: 'en_US',
        parameters: ['Ann'],
      },
      problems: [],
    });
    const b = await account();
    expectError(
      await call(env.app, 'POST', `/canned-responses/${canned.body.id}/render`, {
        key: t.apiKey,
        body: { conversationId: (await customerWrites(b, newNumber(), 'x')).conversationId },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});

describe('availability', () => {
  it('is set by an admin for anyone and by an agent for themself only', async () => {
    const t = await account();
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const other = await member(t, 'Eve');
    const fresh = (await get(t, `/team/members/${other}`)).body;
    expect(fresh).toMatchObject({ availability: 'online', availabilityChangedAt: null });
    const own = await call(env.app, 'PATCH', `/team/members/${agent.memberId}`, {
      ...agent,
      body: { availability: 'away' },
    });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body).toMatchObject({
      availability: 'away',
      availabilityChangedAt: clock.now().toISOString(),
    });
    const theirs = await call(env.app, 'PATCH', `/team/members/${other}`, {
      ...agent,
      body: { availability: 'offline' },
    });
    expectError(theirs, 403, 'FORBIDDEN');
    const byAdmin = await call(env.app, 'PATCH', `/team/members/${other}`, {
      key: t.apiKey,
      body: { availability: 'offline' },
    });
    expect(byAdmin.body.availability).toBe('offline');
    expect((await get(t, `/team/members/${other}`)).body.availability).toBe('offline');
    expectError(
      await call(env.app, 'PATCH', `/team/members/${other}`, {
        key: t.apiKey,
        body: { availability: 'busy' },
      }),
      400,
      'INVALID_REQUEST',
    );
    const b = await account();
    expectError(
      await call(env.app, 'PATCH', `/team/members/${other}`, {
        key: b.apiKey,
        body: { availability: 'online' },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});
