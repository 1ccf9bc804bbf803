// Rules through HTTP: created checked (every fault named with its field), kept in evaluation order
// (positions 1 … n through inserts, moves and deletes), changed, paused, deleted; 402 on a plan
// without automation, 404 for another tenant's rule.
import { describe, expect, it } from 'vitest';
import { call, provision, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

const stopRule = (overrides: Record<string, unknown> = {}) => ({
  name: 'STOP opts out',
  trigger: { event: 'message.received' },
  conditions: {
    all: [{ field: 'message.text', op: 'matches_keyword', value: { keywords: ['stop'], mode: 'exact' } }],
  },
  actions: [
    { type: 'add_tag', tag: 'opted-out' },
    {
      type: 'send_message',
      message: { type: 'text', text: 'You will get no more messages, {{ contact.name }}.' },
    },
  ],
  stopProcessing: true,
  ...overrides,
});

async function create(key: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/rules', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function order(key: string): Promise<string[]> {
  const res = await call(env.app, 'GET', '/rules', { key, query: { limit: '100' } });
  expect(res.status).toBe(200);
  return res.body.data.map((r: { name: string; position: number }) => `${r.position}:${r.name}`);
}

describe('rules', () => {
  it('creates, reads and lists a rule as it was given, with empty stats', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const rule = await create(t.apiKey, stopRule());
    expect(rule).toMatchObject({
      id: expect.stringMatching(/^rul_/),
      name: 'STOP opts out',
      description: null,
      status: 'active',
      position: 1,
      trigger: { event: 'message.received' },
      conditions: stopRule().conditions,
      actions: stopRule().actions,
      stopProcessing: true,
      stats: { runs: 0, matched: 0, failed: 0, lastRunAt: null },
    });
    // The signing secret of its call_webhook requests is shown once, at creation.
    const { signingSecret, ...shown } = rule;
    expect(signingSecret).toMatch(/^whsec_/);
    const got = await call(env.app, 'GET', `/rules/${rule.id}`, { key: t.apiKey });
    expect(got.body).toEqual(shown);
    const timed = await create(t.apiKey, {
      name: 'Nobody answered',
      trigger: { event: 'conversation.unanswered', after: 'PT4H' },
      actions: [{ type: 'add_tag', tag: 'waiting' }],
    });
    expect(timed.trigger).toEqual({ event: 'conversation.unanswered', after: 'PT4H' });
    expect(timed.conditions).toEqual({});
    const list = await call(env.app, 'GET', '/rules', {
      key: t.apiKey,
      query: { event: 'conversation.unanswered' },
    });
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([timed.id]);
  });

  it('keeps positions 1 … n through inserts, moves and deletes', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const a = await create(t.apiKey, stopRule({ name: 'a' }));
    const b = await create(t.apiKey, stopRule({ name: 'b' }));
    await create(t.apiKey, stopRule({ name: 'c', position: 1 }));
    await create(t.apiKey, stopRule({ name: 'd', position: 99 }));
    expect(await order(t.apiKey)).toEqual(['1:c', '2:a', '3:b', '4:d']);
    // Down, then up, then past the end (last).
    await call(env.app, 'PATCH', `/rules/${a.id}`, { key: t.apiKey, body: { position: 3 } });
    expect(await order(t.apiKey)).toEqual(['1:c', '2:b', '3:a', '4:d']);
    await call(env.app, 'PATCH', `/rules/${a.id}`, { key: t.apiKey, body: { position: 1 } });
    expect(await order(t.apiKey)).toEqual(['1:a', '2:c', '3:b', '4:d']);
    await call(env.app, 'PATCH', `/rules/${a.id}`, { key: t.apiKey, body: { position: 50 } });
    expect(await order(t.apiKey)).toEqual(['1:c', '2:b', '3:d', '4:a']);
    const del = await call(env.app, 'DELETE', `/rules/${b.id}`, { key: t.apiKey });
    expect(del.status).toBe(204);
    expect(await order(t.apiKey)).toEqual(['1:c', '2:d', '3:a']);
    expectError(await call(env.app, 'GET', `/rules/${b.id}`, { key: t.apiKey }), 404, 'RESOURCE_NOT_FOUND');
    // Pages follow the order.
    const first = await call(env.app, 'GET', '/rules', { key: t.apiKey, query: { limit: '2' } });
    const second = await call(env.app, 'GET', '/rules', {
      key: t.apiKey,
      query: { limit: '2', cursor: first.body.nextCursor },
    });
    expect([...first.body.data, ...second.body.data].map((r: { name: string }) => r.name)).toEqual([
      'c',
      'd',
      'a',
    ]);
    expect(second.body.nextCursor).toBeNull();
  });

  it('changes fields, status and trigger; a new trigger comes with its own `after`', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const rule = await create(t.apiKey, stopRule());
    const paused = await call(env.app, 'PATCH', `/rules/${rule.id}`, {
      key: t.apiKey,
      body: { status: 'paused', description: 'for the audit', name: ' Renamed ' },
    });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      status: 'paused',
      description: 'for the audit',
      name: 'Renamed',
      actions: rule.actions,
    });
    // message.text does not fit a contact trigger: the conditions must change with it.
    const misfit = await call(env.app, 'PATCH', `/rules/${rule.id}`, {
      key: t.apiKey,
      body: { trigger: { event: 'contact.inactive', after: 'P30D' } },
    });
    expectError(misfit, 400, 'INVALID_REQUEST');
    expect(misfit.body.error.details).toEqual([
      {
        field: 'conditions.all[0].field',
        issue: 'message.text is known only for message.* triggers, not contact.inactive',
      },
    ]);
    const moved = await call(env.app, 'PATCH', `/rules/${rule.id}`, {
      key: t.apiKey,
      body: { trigger: { event: 'contact.inactive', after: 'P30D' }, conditions: {} },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.trigger).toEqual({ event: 'contact.inactive', after: 'P30D' });
    expect((await call(env.app, 'GET', `/rules/${rule.id}`, { key: t.apiKey })).body).toEqual(moved.body);
  });

  it('names every fault of a rule, and stores nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const bad = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'Everything wrong',
        trigger: { event: 'conversation.unanswered' },
        conditions: { all: [{ field: 'contact.tags', op: 'gt', value: 3 }] },
        actions: [
          { type: 'send_message', message: { type: 'text', text: 'Hi {{ contact.name ' } },
          { type: 'add_tag', tag: '#nope' },
          { type: 'assign', assigneeId: 'usr_01jh0000000000000000000000' },
          { type: 'call_webhook', url: 'http://169.254.169.254/latest' },
          { type: 'set_attribute', key: '9lives', value: 'x' },
          { type: 'assign' },
          { type: 'trigger_journey', journeyId: 'jny_1' },
        ],
      },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'trigger.after',
      'conditions.all[0].op',
      'actions[0].message.text',
      'actions[1].tag',
      'actions[2].assigneeId',
      'actions[3].url',
      'actions[4].key',
      'actions[5]',
      'actions[6].journeyId',
    ]);
    // Schema faults are named against the action's own type.
    const shape = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: { name: 'x', trigger: { event: 'contact.created' }, actions: [{ type: 'add_tag', tags: ['a'] }] },
    });
    expectError(shape, 400, 'INVALID_REQUEST');
    expect(shape.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'actions[0].tag', issue: 'is required' },
        { field: 'actions[0].tags', issue: 'is not a known field' },
      ]),
    );
    const unknownType = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: { name: 'x', trigger: { event: 'contact.created' }, actions: [{ type: 'launch_rocket' }] },
    });
    expectError(unknownType, 400, 'INVALID_REQUEST');
    expect(unknownType.body.error.details).toEqual([
      { field: 'actions[0].type', issue: '"launch_rocket" is not a kind this takes' },
    ]);
    expectError(
      await call(env.app, 'POST', '/rules', {
        key: t.apiKey,
        body: { name: 'x', trigger: { event: 'webhook.test' }, actions: [{ type: 'close_conversation' }] },
      }),
      400,
      'INVALID_REQUEST',
    );
    expect(await order(t.apiKey)).toEqual([]);
  });

  it('checks update_contact when the rule is saved: something to set, an email, Liquid that parses', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const rule = (actions: unknown[]) =>
      call(env.app, 'POST', '/rules', {
        key: t.apiKey,
        body: { name: 'Contact changes', trigger: { event: 'message.received' }, actions },
      });
    const bad = await rule([
      { type: 'update_contact' },
      { type: 'update_contact', email: 'not an email' },
      { type: 'update_contact', name: 'Hi {{ message.text ' },
      { type: 'update_contact', optedIn: 'yes' },
    ]);
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining([{ field: 'actions[3].optedIn', issue: expect.any(String) }]),
    );
    const checked = await rule([
      { type: 'update_contact' },
      { type: 'update_contact', email: 'not an email' },
      { type: 'update_contact', name: 'Hi {{ message.text ' },
    ]);
    expectError(checked, 400, 'INVALID_REQUEST');
    expect(checked.body.error.details).toEqual([
      { field: 'actions[0]', issue: 'sets nothing: give optedIn, marketingOptOut, name or email' },
      { field: 'actions[1].email', issue: expect.stringContaining('email') },
      { field: 'actions[2].name', issue: expect.stringContaining('is not a valid Liquid template') },
    ]);
    const made = await rule([
      {
        type: 'update_contact',
        optedIn: false,
        marketingOptOut: true,
        name: '{{ contact.name | default: "Customer" }}',
        email: null,
      },
    ]);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.actions[0]).toEqual({
      type: 'update_contact',
      optedIn: false,
      marketingOptOut: true,
      name: '{{ contact.name | default: "Customer" }}',
      email: null,
    });
    expect(await order(t.apiKey)).toEqual(['1:Contact changes']);
  });

  it('is refused with 402 on a plan without automation, and another tenant sees nothing', async () => {
    const starter = await provision(env.app, env.partner.partnerKey, { planCode: 'starter' });
    expectError(
      await call(env.app, 'GET', '/rules', { key: env.partner.partnerKey, accountId: starter.accountId }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const rule = await create(a.apiKey, stopRule());
    expectError(
      await call(env.app, 'GET', `/rules/${rule.id}`, { key: b.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'PATCH', `/rules/${rule.id}`, { key: b.apiKey, body: { status: 'paused' } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/rules/${rule.id}`, { key: b.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect(await order(b.apiKey)).toEqual([]);
    expect(await order(a.apiKey)).toEqual(['1:STOP opts out']);
  });
});
