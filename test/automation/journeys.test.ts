// Journeys through HTTP: created checked (every fault of every node named with its field), the
// graph checked when published (a details entry per faulty node or edge), moved through their life
// (draft → published ⇄ paused → archived, 409 for a move that does not apply), versioned once
// published, deleted only as drafts or archived; 402 below Pro, 404 for another tenant.
import { describe, expect, it } from 'vitest';
import { call, provision, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ workers: true });

/** A small valid journey: wait a day, then say hello. */
const hello = (overrides: Record<string, unknown> = {}) => ({
  name: 'Hello',
  entry: { trigger: 'api', start: 'pause' },
  nodes: [
    { id: 'pause', type: 'wait', config: { duration: 'P1D' } },
    {
      id: 'hello',
      type: 'send_message',
      config: { message: { type: 'text', text: 'Hi {{ contact.name }}' } },
    },
  ],
  edges: [{ from: 'pause', to: 'hello' }],
  ...overrides,
});

async function create(key: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/journeys', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const move = (key: string, id: string, to: string) => call(env.app, 'POST', `/journeys/${id}/${to}`, { key });

let numbers = 0;
async function contact(key: string) {
  const res = await call(env.app, 'POST', '/contacts', {
    key,
    body: { phone: `+1415555${String(4000 + numbers++).padStart(4, '0')}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

const fields = (res: { body: any }) => res.body.error.details.map((d: { field: string }) => d.field);

describe('journeys', () => {
  it('creates a draft with defaults, shows its signing secret once, and reads and lists it back', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const made = await create(t.apiKey, hello());
    expect(made).toMatchObject({
      name: 'Hello',
      status: 'draft',
      version: 1,
      entry: { trigger: 'api', event: null, conditions: null, reentry: 'never', start: 'pause' },
      edges: [{ from: 'pause', to: 'hello', when: 'next' }],
      settings: { sendWindow: null, maxRunDuration: 'P30D' },
      configId: null,
    });
    expect(made.signingSecret).toMatch(/^whsec_/);
    const read = await call(env.app, 'GET', `/journeys/${made.id}`, { key: t.apiKey });
    expect(read.status).toBe(200);
    expect(read.body.signingSecret).toBeUndefined();
    const { signingSecret: _, ...shown } = made;
    expect(read.body).toEqual(shown);
    const list = await call(env.app, 'GET', '/journeys', { key: t.apiKey, query: { status: 'draft' } });
    expect(list.body.data.map((j: { id: string }) => j.id)).toEqual([made.id]);
    expect(
      (await call(env.app, 'GET', '/journeys', { key: t.apiKey, query: { status: 'published' } })).body.data,
    ).toEqual([]);
  });

  it('names every fault of every node when saved, and stores nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const bad = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: {
        name: 'Everything wrong',
        entry: { trigger: 'event', start: 'a' },
        nodes: [
          {
            id: 'a',
            type: 'send_message',
            config: { message: { type: 'text', text: 'Hi {{ contact.name ' } },
          },
          { id: 'b', type: 'wait', config: { duration: 'P40D' } },
          { id: 'c', type: 'wait', config: { until: 'tomorrow-ish' } },
          { id: 'd', type: 'wait_for_reply', config: { timeout: 'P8D' } },
          {
            id: 'e',
            type: 'condition',
            config: { conditions: { all: [{ field: 'contact.shoeSize', op: 'eq', value: 1 }] } },
          },
          {
            id: 'f',
            type: 'switch',
            config: {
              field: 'contact.tags',
              cases: [
                { key: 'x', op: 'contains', value: 'vip' },
                { key: 'x', op: 'contains', value: 'gold' },
                { key: 'y', op: 'gt', value: 3 },
              ],
            },
          },
          {
            id: 'g',
            type: 'update_contact',
            config: { email: 'nope', name: '{{ x', addTags: ['#nope'], setAttributes: { '9lives': 1 } },
          },
          { id: 'h', type: 'webhook', config: { url: 'http://169.254.169.254/latest' } },
          { id: 'i', type: 'assign', config: { assigneeId: 'usr_01jh0000000000000000000000' } },
          { id: 'j', type: 'place_call', config: { scriptId: 'scr_1' } },
        ],
        edges: [],
        settings: { maxRunDuration: 'P31D' },
      },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(fields(bad)).toEqual([
      'entry.event',
      'settings.maxRunDuration',
      'nodes[0].config.message.text',
      'nodes[1].config.duration',
      'nodes[2].config.until',
      'nodes[3].config.timeout',
      'nodes[4].config.conditions.all[0].field',
      'nodes[5].config.cases[1].key',
      'nodes[5].config.cases[2].op',
      'nodes[6].config.email',
      'nodes[6].config.name',
      'nodes[6].config.addTags[0]',
      'nodes[6].config.setAttributes.9lives',
      'nodes[7].config.url',
      'nodes[8].config.assigneeId',
      'nodes[9].config.scriptId',
    ]);
    // Schema faults are named against the node's own type.
    const shape = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: hello({ nodes: [{ id: 'pause', type: 'wait', config: { seconds: 5 } }] }),
    });
    expectError(shape, 400, 'INVALID_REQUEST');
    const unknownType = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: hello({ nodes: [{ id: 'pause', type: 'teleport' }, { id: 'x' }] }),
    });
    expect(unknownType.body.error.details).toEqual([
      { field: 'nodes[0].type', issue: '"teleport" is not a kind this takes' },
      { field: 'nodes[1].type', issue: 'is required, as a string naming the kind' },
    ]);
    expect((await call(env.app, 'GET', '/journeys', { key: t.apiKey })).body.data).toEqual([]);
  });

  it('checks the graph when published: a details entry per faulty node or edge', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const text = (id: string) => ({
      id,
      type: 'send_message',
      config: { message: { type: 'text', text: id } },
    });
    const draft = await create(t.apiKey, {
      name: 'Tangled',
      entry: { trigger: 'api', start: 'a' },
      nodes: [
        text('a'),
        { id: 'ask', type: 'wait_for_reply', config: { timeout: 'P1D' } },
        {
          id: 'check',
          type: 'condition',
          config: { conditions: { all: [{ field: 'contact.optedIn', op: 'eq', value: true }] } },
        },
        text('b'),
        text('island'),
        { id: 'stop', type: 'end' },
      ],
      edges: [
        { from: 'a', to: 'ask' },
        { from: 'ask', to: 'check', when: 'reply' },
        { from: 'check', to: 'b', when: 'yes' },
        { from: 'check', to: 'nowhere', when: 'no' },
        { from: 'b', to: 'check' },
        { from: 'b', to: 'stop', when: 'maybe' },
        { from: 'a', to: 'stop' },
        { from: 'stop', to: 'a' },
      ],
    });
    const res = await move(t.apiKey, draft.id, 'publish');
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'edges[3].to', issue: 'names no node ("nowhere")' },
      { field: 'edges[5].when', issue: '"maybe" is not an edge of a send_message node: it has next, failed' },
      { field: 'edges[6]', issue: 'repeats the next edge of a' },
      { field: 'edges[7].when', issue: 'a end node has no edges out' },
      { field: 'nodes[1]', issue: 'ask (wait_for_reply) needs a timeout edge' },
      { field: 'nodes[4]', issue: 'island cannot be reached from the start (a)' },
      { field: 'nodes[5]', issue: 'stop cannot be reached from the start (a)' },
      { field: 'nodes[2]', issue: 'check → b → check is a cycle without a wait or wait_for_reply node' },
    ]);
    expect((await call(env.app, 'GET', `/journeys/${draft.id}`, { key: t.apiKey })).body.status).toBe(
      'draft',
    );

    const noStart = await create(t.apiKey, hello({ entry: { trigger: 'api', start: 'missing' } }));
    expect((await move(t.apiKey, noStart.id, 'publish')).body.error.details).toEqual([
      { field: 'entry.start', issue: 'names no node ("missing")' },
    ]);
    // A cycle through a wait is a loop that takes time: allowed (the run limits stop it).
    const looping = await create(
      t.apiKey,
      hello({
        edges: [
          { from: 'pause', to: 'hello' },
          { from: 'hello', to: 'pause' },
        ],
      }),
    );
    expect((await move(t.apiKey, looping.id, 'publish')).status).toBe(200);
  });

  it('checks at publish that a wait’s buttons are offered by the message before it', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const template = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name: 'visit_reminder',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          { type: 'BODY', text: 'Your visit is on {{1}}. See you.', example: { body_text: [['Monday']] } },
          { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Confirm' }] },
        ],
      },
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    const ask = (message: Record<string, unknown>, buttons: string[]) => ({
      name: 'Ask',
      entry: { trigger: 'api', start: 'send' },
      nodes: [
        { id: 'send', type: 'send_message', config: { message } },
        { id: 'tag', type: 'update_contact', config: { addTags: ['asked'] } },
        { id: 'answer', type: 'wait_for_reply', config: { timeout: 'P1D', match: { buttons } } },
        { id: 'done', type: 'end' },
      ],
      edges: [
        { from: 'send', to: 'tag' },
        { from: 'tag', to: 'answer' },
        { from: 'answer', to: 'done', when: 'timeout' },
      ],
    });
    const reminder = { templateName: 'visit_reminder', templateLanguage: 'en_US', parameters: ['Monday'] };
    const wrong = await create(t.apiKey, ask(reminder, ['Confirm', 'Cancel']));
    const refused = await move(t.apiKey, wrong.id, 'publish');
    expectError(refused, 400, 'INVALID_REQUEST');
    expect(refused.body.error.details).toEqual([
      {
        field: 'nodes[2].config.match.buttons[1]',
        issue:
          '"Cancel" is not a button of the message sent before this wait (template visit_reminder (en_US) has quick-reply buttons "Confirm")',
      },
    ]);
    // A draft is saved as it is; the buttons a message offers pass: a template's quick replies, an
    // interactive message's ids; a template the account does not have (yet) is checked when sent.
    for (const [message, buttons] of [
      [reminder, ['Confirm']],
      [
        {
          type: 'interactive',
          interactive: { kind: 'buttons', body: 'Still on?', buttons: [{ id: 'yes', title: 'Yes' }] },
        },
        ['yes'],
      ],
      [{ templateName: 'not_made_yet', templateLanguage: 'en_US' }, ['Confirm']],
    ] as const) {
      const ok = await create(t.apiKey, ask(message, [...buttons]));
      const published = await move(t.apiKey, ok.id, 'publish');
      expect(published.status, JSON.stringify(published.body)).toBe(200);
    }
    const text = await create(t.apiKey, ask({ type: 'text', text: 'Still on?' }, ['yes']));
    const noButtons = await move(t.apiKey, text.id, 'publish');
    expectError(noButtons, 400, 'INVALID_REQUEST');
    expect(noButtons.body.error.details[0].issue).toContain('(a text message with no buttons)');
  });

  it('moves through its life, one version per edit once published', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const j = await create(t.apiKey, hello());
    // A draft is edited in place.
    const renamed = await call(env.app, 'PATCH', `/journeys/${j.id}`, {
      key: t.apiKey,
      body: { name: 'Hi there' },
    });
    expect(renamed.body).toMatchObject({ name: 'Hi there', version: 1, status: 'draft' });
    expectError(await move(t.apiKey, j.id, 'pause'), 409, 'CONFLICT');
    expect((await move(t.apiKey, j.id, 'publish')).body).toMatchObject({ status: 'published', version: 1 });
    expectError(await move(t.apiKey, j.id, 'publish'), 409, 'CONFLICT');
    // An edit of a published journey is checked as a publish is, and makes the next version.
    const broken = await call(env.app, 'PATCH', `/journeys/${j.id}`, {
      key: t.apiKey,
      body: { edges: [{ from: 'pause', to: 'gone' }] },
    });
    expectError(broken, 400, 'INVALID_REQUEST');
    const v2 = await call(env.app, 'PATCH', `/journeys/${j.id}`, {
      key: t.apiKey,
      body: { settings: { maxRunDuration: 'P7D' } },
    });
    expect(v2.body).toMatchObject({ version: 2, status: 'published', settings: { maxRunDuration: 'P7D' } });
    expectError(await call(env.app, 'DELETE', `/journeys/${j.id}`, { key: t.apiKey }), 409, 'CONFLICT');

    // Paused: no run starts; published again, it does.
    const ann = await contact(t.apiKey);
    expect((await move(t.apiKey, j.id, 'pause')).body.status).toBe('paused');
    const refused = await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
      key: t.apiKey,
      body: { contactId: ann.id },
    });
    expectError(refused, 409, 'CONFLICT');
    expect((await move(t.apiKey, j.id, 'publish')).body).toMatchObject({ status: 'published', version: 2 });
    const run = await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
      key: t.apiKey,
      body: { contactId: ann.id },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    expect(run.body).toMatchObject({ journeyVersion: 2, contactId: ann.id });
    // reentry never: once per contact.
    expectError(
      await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
        key: t.apiKey,
        body: { contactId: ann.id },
      }),
      409,
      'CONFLICT',
    );

    // Archived: its runs are canceled, and it no longer changes.
    expect((await move(t.apiKey, j.id, 'archive')).body.status).toBe('archived');
    const canceled = await call(env.app, 'GET', `/journeys/${j.id}/runs/${run.body.id}`, { key: t.apiKey });
    expect(canceled.body).toMatchObject({
      status: 'canceled',
      error: { code: 'JOURNEY_ARCHIVED' },
      resumeAt: null,
    });
    expectError(
      await call(env.app, 'PATCH', `/journeys/${j.id}`, { key: t.apiKey, body: { name: 'x' } }),
      409,
      'CONFLICT',
    );
    expectError(await move(t.apiKey, j.id, 'publish'), 409, 'CONFLICT');
    expect((await call(env.app, 'DELETE', `/journeys/${j.id}`, { key: t.apiKey })).status).toBe(204);
    expectError(
      await call(env.app, 'GET', `/journeys/${j.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('triggers for a number (making the contact), once per Idempotency-Key; bad triggers are 4xx', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const j = await create(t.apiKey, hello({ entry: { trigger: 'api', start: 'pause', reentry: 'always' } }));
    expectError(
      await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
        key: t.apiKey,
        body: { to: '+14155550999' },
      }),
      409,
      'CONFLICT',
    );
    // Refused before the contact was made.
    expect((await call(env.app, 'GET', '/contacts', { key: t.apiKey })).body.data).toEqual([]);
    await move(t.apiKey, j.id, 'publish');
    const headers = { 'idempotency-key': 'trigger-once' };
    const body = { to: '+14155550999', data: { plan: 'gold' } };
    const first = await call(env.app, 'POST', `/journeys/${j.id}/trigger`, { key: t.apiKey, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body).toMatchObject({ triggerData: { plan: 'gold' }, vars: {} });
    const again = await call(env.app, 'POST', `/journeys/${j.id}/trigger`, { key: t.apiKey, body, headers });
    expect(again.body.id).toBe(first.body.id);
    const runs = await call(env.app, 'GET', `/journeys/${j.id}/runs`, { key: t.apiKey });
    expect(runs.body.data).toHaveLength(1);
    const made = await call(env.app, 'GET', `/contacts/${first.body.contactId}`, { key: t.apiKey });
    expect(made.body.phone).toBe('+14155550999');
    // The same number again (reentry always) is the same contact.
    const second = await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
      key: t.apiKey,
      body: { to: '+14155550999' },
    });
    expect(second.body.contactId).toBe(first.body.contactId);

    for (const bad of [{}, { contactId: 'ctc_x', to: '+14155550999' }, { to: 'not a number' }]) {
      expectError(
        await call(env.app, 'POST', `/journeys/${j.id}/trigger`, { key: t.apiKey, body: bad }),
        400,
        'INVALID_REQUEST',
      );
    }
    expectError(
      await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
        key: t.apiKey,
        body: { contactId: 'ctc_01jh0000000000000000000000' },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('402 below Pro; another tenant sees nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const j = await create(t.apiKey, hello());
    await move(t.apiKey, j.id, 'publish');
    const ann = await contact(t.apiKey);
    const run = await call(env.app, 'POST', `/journeys/${j.id}/trigger`, {
      key: t.apiKey,
      body: { contactId: ann.id },
    });
    const starter = await provision(env.app, env.partner.partnerKey, { planCode: 'starter' });
    expectError(
      await call(env.app, 'GET', '/journeys', { key: env.partner.partnerKey, accountId: starter.accountId }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
    const b = await tenant(env.app, env.partner.partnerKey);
    for (const [method, path] of [
      ['GET', `/journeys/${j.id}`],
      ['GET', `/journeys/${j.id}/runs`],
      ['GET', `/journeys/${j.id}/runs/${run.body.id}`],
      ['GET', `/journeys/${j.id}/stats`],
      ['POST', `/journeys/${j.id}/runs/${run.body.id}/cancel`],
      ['POST', `/journeys/${j.id}/pause`],
      ['DELETE', `/journeys/${j.id}`],
    ] as const) {
      expectError(await call(env.app, method, path, { key: b.apiKey }), 404, 'RESOURCE_NOT_FOUND');
    }
    expect((await call(env.app, 'GET', '/journeys', { key: b.apiKey })).body.data).toEqual([]);
  });
});
