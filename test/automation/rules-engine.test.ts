// Rules at work, through HTTP on a sandbox account: a sandbox key plays the customer, the rules
// run on the events that follow, and what they did is read back through the API (the contact, the
// conversation, the messages, the run records, the webhook events with their causedBy).
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { verifySignature } from '../helpers/receiver.ts';
import { expectError } from '../helpers/setup.ts';

const CAP = 3;
const env = useMessagingApp({ config: { automationContactCapPerHour: CAP, automationPollMs: 50 } });

let numbers = 0;
const newNumber = () => `+1415555${String(6000 + numbers++).padStart(4, '0')}`;

type Sandbox = SandboxTenant;
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

async function rule(t: Sandbox, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/rules', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

async function inbound(t: Sandbox, from: string, text: string) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; contactId: string; conversationId: string };
}

async function runsOf(t: Sandbox, ruleId: string, count: number) {
  const res = await eventually(
    () => call(env.app, 'GET', `/rules/${ruleId}/runs`, { key: t.apiKey, query: { limit: '100' } }),
    (r) => r.status === 200 && r.body.data.length >= count,
  );
  expect(res.body.data, JSON.stringify(res.body)).toHaveLength(count);
  return res.body.data as any[];
}

const contactOf = async (t: Sandbox, id: string) =>
  (await call(env.app, 'GET', `/contacts/${id}`, { key: t.apiKey })).body;

describe('rules at work', () => {
  it('STOP: tags the contact and replies in its conversation, and records why', async () => {
    const t = await account();
    const stop = await rule(t, {
      name: 'STOP opts out',
      trigger: { event: 'message.received' },
      conditions: {
        all: [{ field: 'message.text', op: 'matches_keyword', value: { keywords: ['stop'], mode: 'fuzzy' } }],
      },
      actions: [
        { type: 'add_tag', tag: 'opted-out' },
        { type: 'set_attribute', key: 'optedOutVia', value: '{{ message.text }}' },
        {
          type: 'send_message',
          message: { type: 'text', text: 'Done, {{ contact.name }}: no more messages.' },
        },
      ],
    });
    const hook = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: hook.url(), events: ['contact.tagged'] },
    });
    const from = newNumber();
    const hello = await inbound(t, from, 'hello there');
    await call(env.app, 'PATCH', `/contacts/${hello.contactId}`, { key: t.apiKey, body: { name: 'Ann' } });
    const msg = await inbound(t, from, 'STOPP!');

    const [notMatched, ran] = (await runsOf(t, stop.id, 2)).reverse();
    expect(notMatched).toMatchObject({ status: 'not_matched', contactId: hello.contactId, depth: 1 });
    expect(notMatched.conditions).toEqual([
      {
        field: 'message.text',
        op: 'matches_keyword',
        expected: { keywords: ['stop'], mode: 'fuzzy' },
        actual: 'hello there',
        result: false,
      },
    ]);
    expect(ran).toMatchObject({ status: 'succeeded', reason: null, ruleId: stop.id });
    expect(ran.actions.map((a: { type: string; status: string }) => `${a.type}:${a.status}`)).toEqual([
      'add_tag:succeeded',
      'set_attribute:succeeded',
      'send_message:succeeded',
    ]);
    const contact = await contactOf(t, msg.contactId);
    expect(contact.tags).toEqual(['opted-out']);
    expect(contact.attributes).toEqual({ optedOutVia: 'STOPP!' });
    const replyId = ran.actions[2].ref;
    const reply = await eventually(
      () => call(env.app, 'GET', `/messages/${replyId}`, { key: t.apiKey }),
      (r) => r.body.status === 'delivered' || r.body.status === 'read',
    );
    expect(reply.body).toMatchObject({
      to: from,
      text: 'Done, Ann: no more messages.',
      conversationId: msg.conversationId,
    });
    // The event the rule caused names it.
    const [tagged] = await hook.waitFor(1);
    expect(tagged!.json).toMatchObject({
      type: 'contact.tagged',
      data: { id: msg.contactId, tagsAdded: ['opted-out'] },
      causedBy: { kind: 'rule', id: stop.id, runId: ran.id, depth: 1 },
    });
    const stats = (await call(env.app, 'GET', `/rules/${stop.id}`, { key: t.apiKey })).body.stats;
    expect(stats).toMatchObject({ runs: 2, matched: 1, failed: 0, lastRunAt: expect.any(String) });
  });

  it('STOP opts out: update_contact changes the contact as PATCH does, and a MARKETING template to it is refused', async () => {
    const t = await account();
    const offer = await approvedTemplate(env.app, t.apiKey, {
      name: 'weekly_offer',
      category: 'MARKETING',
      body: 'New this week for {{1}}: see the shop.',
      examples: ['Ann'],
    });
    const stop = await rule(t, {
      name: 'STOP opts out',
      trigger: { event: 'message.received' },
      conditions: {
        all: [
          {
            field: 'message.text',
            op: 'matches_keyword',
            value: { keywords: ['stop', 'unsubscribe'], mode: 'fuzzy' },
          },
        ],
      },
      actions: [
        { type: 'update_contact', optedIn: false, marketingOptOut: true },
        { type: 'add_tag', tag: 'opted-out' },
        { type: 'send_message', message: { type: 'text', text: 'Done: no more messages.' } },
      ],
      stopProcessing: true,
    });
    const hook = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: hook.url(), events: ['contact.updated'] },
    });
    const from = newNumber();
    const hello = await inbound(t, from, 'hello');
    const optIn = await call(env.app, 'PATCH', `/contacts/${hello.contactId}`, {
      key: t.apiKey,
      body: { optedIn: true },
    });
    expect(optIn.body).toMatchObject({ optedIn: true, marketingOptOut: false });
    const send = () =>
      call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: { to: from, templateName: offer.name, templateLanguage: 'en_US', parameters: ['Ann'] },
      });
    expect((await send()).status).toBe(202);

    await inbound(t, from, 'STOP');
    const [, ran] = (await runsOf(t, stop.id, 2)).reverse();
    expect(ran.actions).toEqual([
      { type: 'update_contact', status: 'succeeded', ref: hello.contactId },
      { type: 'add_tag', status: 'succeeded', ref: hello.contactId },
      { type: 'send_message', status: 'succeeded', ref: expect.any(String) },
    ]);
    expect(await contactOf(t, hello.contactId)).toMatchObject({
      optedIn: false,
      marketingOptOut: true,
      tags: ['opted-out'],
    });
    // The event PATCH makes, caused by the run.
    const [, updated] = await hook.waitFor(2);
    expect(updated!.json).toMatchObject({
      type: 'contact.updated',
      data: { id: hello.contactId, optedIn: false, previous: { optedIn: true, marketingOptOut: false } },
      causedBy: { kind: 'rule', id: stop.id, runId: ran.id, depth: 1 },
    });
    // As the API documents for a contact who stopped marketing messages.
    const refused = await send();
    expectError(refused, 422, 'CONTACT_OPTED_OUT');
    expect(refused.body.error.details[0]).toMatchObject({ field: 'templateName' });
  });

  it('evaluates in position order and stops after a match with stopProcessing', async () => {
    const t = await account();
    const tagger = (name: string, tag: string, extra: Record<string, unknown> = {}) =>
      rule(t, {
        name,
        trigger: { event: 'message.received' },
        actions: [{ type: 'add_tag', tag }],
        ...extra,
      });
    const second = await tagger('second', 'b');
    const first = await tagger('first', 'a', { position: 1, stopProcessing: true });
    const third = await tagger('third', 'c');
    const msg = await inbound(t, newNumber(), 'hi');
    await runsOf(t, first.id, 1);
    await eventually(
      () => contactOf(t, msg.contactId),
      (c) => c.tags.length > 0,
    );
    expect((await contactOf(t, msg.contactId)).tags).toEqual(['a']);
    // Paused: the rule is skipped, and the next one runs.
    await call(env.app, 'PATCH', `/rules/${first.id}`, { key: t.apiKey, body: { status: 'paused' } });
    const next = await inbound(t, newNumber(), 'hi');
    await runsOf(t, third.id, 1);
    expect((await contactOf(t, next.contactId)).tags).toEqual(['b', 'c']);
    expect(await runsOf(t, second.id, 1)).toHaveLength(1);
  });

  it('two rules that tag each other stop at depth 3, recorded as suppressed loops', async () => {
    const t = await account();
    const ping = await rule(t, {
      name: 'ping',
      trigger: { event: 'contact.tagged' },
      conditions: { all: [{ field: 'event.data.tagsAdded', op: 'contains', value: 'pong' }] },
      actions: [
        { type: 'remove_tag', tag: 'pong' },
        { type: 'add_tag', tag: 'ping' },
      ],
    });
    const pong = await rule(t, {
      name: 'pong',
      trigger: { event: 'contact.tagged' },
      conditions: { all: [{ field: 'event.data.tagsAdded', op: 'contains', value: 'ping' }] },
      actions: [
        { type: 'remove_tag', tag: 'ping' },
        { type: 'add_tag', tag: 'pong' },
      ],
    });
    const contact = (
      await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: newNumber() } })
    ).body;
    await call(env.app, 'POST', `/contacts/${contact.id}/tags`, { key: t.apiKey, body: { tags: ['ping'] } });
    // The user's tag (depth 0) → pong (1) → ping (2) → pong (3) → ping: suppressed (4).
    const pingRuns = await runsOf(t, ping.id, 4);
    const pongRuns = await runsOf(t, pong.id, 4);
    const all = [...pingRuns, ...pongRuns].sort((a, b) => a.depth - b.depth || a.id.localeCompare(b.id));
    expect(all.map((r) => `${r.depth}:${r.status}:${r.reason ?? ''}`)).toEqual(
      expect.arrayContaining(['1:succeeded:', '2:succeeded:', '3:succeeded:', '4:suppressed:loop']),
    );
    // A rule never fires on its own run's event.
    expect(all.filter((r) => r.reason === 'own_event').length).toBeGreaterThan(0);
    expect((await contactOf(t, contact.id)).tags).toEqual(['pong']);
    // Stats count as matched only the runs whose conditions held (not those suppressed unevaluated).
    const stats = (await call(env.app, 'GET', `/rules/${ping.id}`, { key: t.apiKey })).body.stats;
    expect(stats).toMatchObject({ runs: 4, matched: 1, failed: 0 });
  });

  it('sends a contact at most the cap of automated messages an hour', async () => {
    const t = await account();
    const echo = await rule(t, {
      name: 'echo',
      trigger: { event: 'message.received' },
      actions: [{ type: 'send_message', message: { type: 'text', text: 'Got it.' } }],
    });
    const from = newNumber();
    for (let i = 0; i < CAP + 1; i++) await inbound(t, from, `message ${i}`);
    const runs = await runsOf(t, echo.id, CAP + 1);
    expect(runs.map((r) => r.status).sort()).toEqual([...Array(CAP).fill('succeeded'), 'suppressed'].sort());
    expect(runs.find((r) => r.status === 'suppressed')).toMatchObject({
      reason: 'contact_cap',
      actions: [{ type: 'send_message', status: 'suppressed', error: { code: 'CONTACT_CAP' } }],
    });
  });

  it('a failing action fails the run, skips the rest and emits rule.run_failed', async () => {
    const t = await account();
    const hook = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: hook.url(), events: ['rule.run_failed'] },
    });
    const welcome = await rule(t, {
      name: 'welcome',
      trigger: { event: 'contact.created' },
      actions: [
        // A new contact never wrote: free-form is outside the customer service window.
        { type: 'send_message', message: { type: 'text', text: 'Welcome!' } },
        { type: 'add_tag', tag: 'welcomed' },
      ],
    });
    const contact = (
      await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: newNumber() } })
    ).body;
    const [run] = await runsOf(t, welcome.id, 1);
    expect(run).toMatchObject({
      status: 'failed',
      actions: [
        { type: 'send_message', status: 'failed', error: { code: 'CSW_VIOLATION' } },
        { type: 'add_tag', status: 'skipped' },
      ],
    });
    expect((await contactOf(t, contact.id)).tags).toEqual([]);
    const [failed] = await hook.waitFor(1);
    expect(failed!.json).toMatchObject({ type: 'rule.run_failed', data: { id: run.id, ruleId: welcome.id } });
  });

  it('call_webhook posts the rendered body signed with the rule’s secret, after commit, and retries a failure', async () => {
    const t = await account();
    const hook = await env.receiver();
    hook.respond = (_r, n) => ({ status: n === 0 ? 500 : 204 });
    const res = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'tell the CRM',
        trigger: { event: 'message.received' },
        actions: [
          {
            type: 'call_webhook',
            url: hook.url('/crm'),
            body: { text: '{{ message.text }}', source: 'whatsapp', count: 2 },
          },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const secret = res.body.signingSecret as string;
    expect(secret).toMatch(/^whsec_/);
    // Shown once: never again.
    expect(
      (await call(env.app, 'GET', `/rules/${res.body.id}`, { key: t.apiKey })).body.signingSecret,
    ).toBeUndefined();

    const msg = await inbound(t, newNumber(), 'Where is order 42?');
    const [first, retry] = await hook.waitFor(2, 15_000);
    for (const received of [first!, retry!]) {
      expect(received.path).toBe('/crm');
      expect(verifySignature(secret, received)).toMatchObject({
        text: 'Where is order 42?',
        source: 'whatsapp',
        count: 2,
        run: { ruleId: res.body.id },
        event: { type: 'message.received', data: { id: msg.id } },
      });
    }
    // Every attempt is the same call: the same id and bytes.
    expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(retry!.body).toBe(first!.body);
    const [run] = await runsOf(t, res.body.id, 1);
    expect(run.actions[0]).toMatchObject({
      type: 'call_webhook',
      status: 'succeeded',
      ref: first!.headers['webhook-id'],
    });
    const settled = await eventually(
      () => runsOf(t, res.body.id, 1),
      ([r]) => r.actions[0].delivery?.status === 'succeeded',
    );
    expect(settled[0].actions[0].delivery).toEqual({
      status: 'succeeded',
      attempts: 2,
      lastStatusCode: 204,
      lastError: null,
    });
  }, 30_000);

  it('contact.marketingOptOut: a rule on contact.updated runs when the customer stops marketing', async () => {
    const t = await account();
    const stopped = await rule(t, {
      name: 'marketing stopped',
      trigger: { event: 'contact.updated' },
      conditions: {
        all: [
          { field: 'contact.marketingOptOut', op: 'eq', value: true },
          { field: 'contact.marketingOptOut', op: 'changed_to', value: true },
        ],
      },
      actions: [{ type: 'add_tag', tag: 'no-marketing' }],
    });
    const made = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: newNumber() } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const id = made.body.id as string;
    await call(env.app, 'PATCH', `/contacts/${id}`, { key: t.apiKey, body: { name: 'Ann' } });
    // The first update's run reads the contact as it then is: wait for it before the second update.
    await runsOf(t, stopped.id, 1);
    await call(env.app, 'PATCH', `/contacts/${id}`, { key: t.apiKey, body: { marketingOptOut: true } });
    const [notMatched, ran] = (await runsOf(t, stopped.id, 2)).reverse();
    expect(notMatched).toMatchObject({ status: 'not_matched', contactId: id });
    expect(notMatched.conditions[0]).toMatchObject({ field: 'contact.marketingOptOut', result: false });
    expect(ran).toMatchObject({ status: 'succeeded', contactId: id });
    expect(ran.conditions).toEqual([
      expect.objectContaining({ field: 'contact.marketingOptOut', op: 'eq', actual: true, result: true }),
      expect.objectContaining({ field: 'contact.marketingOptOut', op: 'changed_to', result: true }),
    ]);
    expect(await contactOf(t, id)).toMatchObject({
      marketingOptOut: true,
      optedIn: false,
      tags: ['no-marketing'],
    });
  });

  it('a dry run answers the run record and changes nothing', async () => {
    const t = await account();
    const vip = await rule(t, {
      name: 'vip',
      trigger: { event: 'message.received' },
      conditions: { all: [{ field: 'message.text', op: 'contains', value: 'order' }] },
      actions: [{ type: 'add_tag', tag: 'buyer' }],
      status: 'paused',
    });
    const msg = await inbound(t, newNumber(), 'where is my order?');
    const test = await call(env.app, 'POST', `/rules/${vip.id}/test`, {
      key: t.apiKey,
      body: { eventId: (await lastEventOf(t, 'message.received'))! },
    });
    expect(test.status, JSON.stringify(test.body)).toBe(200);
    expect(test.body).toMatchObject({
      status: 'succeeded',
      conditions: [{ field: 'message.text', op: 'contains', actual: 'where is my order?', result: true }],
      actions: [{ type: 'add_tag', status: 'skipped' }],
    });
    const inline = await call(env.app, 'POST', `/rules/${vip.id}/test`, {
      key: t.apiKey,
      body: {
        event: { type: 'message.received', data: { contactId: msg.contactId, text: 'hello', type: 'text' } },
      },
    });
    expect(inline.body).toMatchObject({ status: 'not_matched', contactId: msg.contactId });
    expect((await contactOf(t, msg.contactId)).tags).toEqual([]);
    const runs = await call(env.app, 'GET', `/rules/${vip.id}/runs`, { key: t.apiKey });
    expect(runs.body.data).toEqual([]);
    const other = await account();
    expectError(
      await call(env.app, 'GET', `/rules/${vip.id}/runs`, { key: other.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});

async function lastEventOf(t: Sandbox, type: string): Promise<string | null> {
  const { rows } = await env.app.ctx.db.query<{ id: string }>(
    'SELECT id FROM events WHERE account_id = $1 AND type = $2 ORDER BY id DESC LIMIT 1',
    [t.accountId, type],
  );
  return rows[0]?.id ?? null;
}
