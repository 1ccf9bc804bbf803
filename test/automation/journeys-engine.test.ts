// Journeys at work, through HTTP on sandbox accounts: a sandbox key starts runs and plays the
// customer, /sandbox/wake ends waits, and what the runs did is read back through the API (the run
// with its steps, the messages, the contact, the statistics, the webhook events).
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

const env = useMessagingApp({ config: { automationPollMs: 50, automationScanMs: 3_600_000 } });

let numbers = 0;
const newNumber = () => `+1415555${String(3000 + numbers++).padStart(4, '0')}`;
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

async function publishedJourney(t: SandboxTenant, body: Record<string, unknown>) {
  const made = await call(env.app, 'POST', '/journeys', { key: t.apiKey, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/journeys/${made.body.id}/publish`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; version: number };
}

async function trigger(t: SandboxTenant, journeyId: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', `/journeys/${journeyId}/trigger`, { key: t.sandboxKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body as { id: string; contactId: string; status: string };
}

const runWhen = (t: SandboxTenant, journeyId: string, runId: string, done: (r: any) => boolean) =>
  eventually(
    () => call(env.app, 'GET', `/journeys/${journeyId}/runs/${runId}`, { key: t.apiKey }),
    (r) => r.status === 200 && done(r.body),
  ).then((r) => r.body);

const wake = (t: SandboxTenant, runId: string, key = t.sandboxKey) =>
  call(env.app, 'POST', '/sandbox/wake', { key, body: { runId } });

const path = (r: { steps: { nodeId: string; edge: string | null }[] }) =>
  r.steps.map((s) => `${s.nodeId}${s.edge ? `:${s.edge}` : ''}`);

/** The appointment reminder of the issue: a template with Confirm/Cancel, a wait for the tap. */
async function reminderJourney(t: SandboxTenant) {
  const template = await approvedTemplate(env.app, t.apiKey, {
    name: `reminder_${numbers}`,
    components: [
      {
        type: 'BODY',
        text: 'Hi {{1}}, your appointment is on {{2}}. Please confirm.',
        example: { body_text: [['Ann', 'Monday 10:00']] },
      },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Confirm' },
          { type: 'QUICK_REPLY', text: 'Cancel' },
        ],
      },
    ],
  });
  return publishedJourney(t, {
    name: 'Appointment reminder',
    entry: { trigger: 'api', reentry: 'after_exit', start: 'remind' },
    nodes: [
      {
        id: 'remind',
        type: 'send_message',
        config: {
          message: {
            templateName: template.name,
            templateLanguage: 'en_US',
            parameters: ['{{ contact.name | default: "there" }}', '{{ trigger.data.when }}'],
          },
        },
      },
      {
        id: 'answer',
        type: 'wait_for_reply',
        config: { timeout: 'P1D', match: { buttons: ['Confirm', 'Cancel'] } },
      },
      {
        id: 'which',
        type: 'switch',
        config: { field: 'run.vars.answer.buttonId', cases: [{ key: 'confirm', value: 'Confirm' }] },
      },
      { id: 'confirmed', type: 'update_contact', config: { addTags: ['confirmed'] } },
      { id: 'canceled', type: 'update_contact', config: { addTags: ['canceled'] } },
      {
        id: 'nudge',
        type: 'send_message',
        config: {
          message: { templateName: template.name, templateLanguage: 'en_US', parameters: ['there', 'soon'] },
        },
      },
    ],
    edges: [
      { from: 'remind', to: 'answer' },
      { from: 'answer', to: 'which', when: 'reply' },
      { from: 'answer', to: 'nudge', when: 'timeout' },
      { from: 'which', to: 'confirmed', when: 'case:confirm' },
      { from: 'which', to: 'canceled', when: 'default' },
    ],
  });
}

describe('journeys at work', () => {
  it('runs the appointment reminder: template, the customer taps Confirm, tagged, completed', async () => {
    const t = await account();
    const journey = await reminderJourney(t);
    const { receiver } = await env.subscribe(t.apiKey, ['journey_run.completed']);
    const to = newNumber();
    const started = await trigger(t, journey.id, { to, data: { when: 'Monday 10:00' } });
    expect(started).toMatchObject({ status: 'running' });
    const waiting = await runWhen(t, journey.id, started.id, (r) => r.status === 'waiting');
    expect(waiting).toMatchObject({ currentNodeId: 'answer', journeyVersion: 1 });
    expect(path(waiting)).toEqual(['remind:next', 'answer']);
    const messageId = waiting.steps[0].output.messageId;
    // The customer can answer it once it has gone out.
    const sent = await eventually(
      () => call(env.app, 'GET', `/messages/${messageId}`, { key: t.apiKey }),
      (r) => ['sent', 'delivered', 'read'].includes(r.body.status),
    );
    expect(sent.body).toMatchObject({ to, type: 'template' });
    expect(['sent', 'delivered', 'read']).toContain(sent.body.status);

    const tap = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: to, replyTo: messageId, button: { text: 'Confirm' } },
    });
    expect(tap.status, JSON.stringify(tap.body)).toBe(201);
    const done = await runWhen(t, journey.id, started.id, (r) => r.status === 'completed');
    expect(path(done)).toEqual(['remind:next', 'answer:reply', 'which:case:confirm', 'confirmed:next']);
    expect(done.vars.answer).toMatchObject({ messageId: tap.body.id, buttonId: 'Confirm' });
    const contact = await call(env.app, 'GET', `/contacts/${started.contactId}`, { key: t.apiKey });
    expect(contact.body.tags).toEqual(['confirmed']);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.json).toMatchObject({
      type: 'journey_run.completed',
      data: { id: started.id, status: 'completed' },
    });
  });

  it('takes the timeout branch when the customer does not answer (woken in the sandbox)', async () => {
    const t = await account();
    const journey = await reminderJourney(t);
    const started = await trigger(t, journey.id, { to: newNumber(), data: { when: 'Tuesday' } });
    await runWhen(t, journey.id, started.id, (r) => r.status === 'waiting');
    expectError(await wake(t, started.id, t.apiKey), 403, 'FORBIDDEN');
    expect((await wake(t, started.id)).status).toBe(200);
    const done = await runWhen(t, journey.id, started.id, (r) => r.status === 'completed');
    expect(path(done)).toEqual(['remind:next', 'answer:timeout', 'nudge:next']);
    expectError(await wake(t, started.id), 409, 'CONFLICT');
  });

  it('update_contact opts the contact out and sets its name and email, as PATCH does, caused by the run', async () => {
    const t = await account();
    const journey = await publishedJourney(t, {
      name: 'Unsubscribe',
      entry: { trigger: 'api', reentry: 'always', start: 'stop' },
      nodes: [
        {
          id: 'stop',
          type: 'update_contact',
          config: {
            optedIn: false,
            marketingOptOut: true,
            name: '{{ trigger.data.name }}',
            email: '{{ trigger.data.email }}',
            addTags: ['unsubscribed'],
            setAttributes: { note: '{{ trigger.data.note }}' },
          },
        },
      ],
      edges: [],
    });
    const { receiver } = await env.subscribe(t.apiKey, ['contact.updated']);
    const made = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: newNumber(), optedIn: true },
    });
    const started = await trigger(t, journey.id, {
      contactId: made.body.id,
      data: { name: ' Ann Lee ', email: 'Ann@Example.com', note: 'by journey' },
    });
    const done = await runWhen(t, journey.id, started.id, (r) => r.status === 'completed');
    expect(path(done)).toEqual(['stop:next']);
    const contact = await call(env.app, 'GET', `/contacts/${made.body.id}`, { key: t.apiKey });
    expect(contact.body).toMatchObject({
      optedIn: false,
      marketingOptOut: true,
      name: 'Ann Lee',
      email: 'ann@example.com',
      tags: ['unsubscribed'],
    });
    const [updated] = await receiver.waitFor(1);
    expect(updated!.json).toMatchObject({
      type: 'contact.updated',
      data: { previous: { optedIn: true, marketingOptOut: false, name: null, email: null } },
      causedBy: { kind: 'journey', id: journey.id, runId: started.id },
    });
    // A rendered email that is not one, or a name too long, fails the step, naming the field;
    // nothing is changed.
    const fails = async (data: Record<string, string>, field: string, code = 'INVALID_REQUEST') => {
      const again = await trigger(t, journey.id, { contactId: made.body.id, data });
      const failed = await runWhen(t, journey.id, again.id, (r) => r.status === 'failed');
      expect(failed.error).toMatchObject({
        code,
        message: expect.stringContaining(field),
      });
    };
    await fails({ name: 'Bo', email: 'nope', note: 'x' }, 'email');
    await fails({ name: 'B'.repeat(201), email: 'bo@example.com', note: 'x' }, 'name');
    expect((await call(env.app, 'GET', `/contacts/${made.body.id}`, { key: t.apiKey })).body).toMatchObject({
      name: 'Ann Lee',
      attributes: { note: 'by journey' },
    });
    // A rendered attribute value is held to PATCH's 500 characters too: its rendering stops there.
    await fails(
      { name: 'Bo', email: 'bo@example.com', note: 'x'.repeat(501) },
      'attributes.note',
      'TEMPLATE_RENDER_FAILED',
    );
  });

  it('stops a run that loops: the same node 10 times in a row, or 500 steps in all', async () => {
    const t = await account();
    const past = '2020-01-01T00:00:00Z';
    const spin = await publishedJourney(t, {
      name: 'Spin',
      entry: { trigger: 'api', start: 'tick' },
      nodes: [{ id: 'tick', type: 'wait', config: { until: past } }],
      edges: [{ from: 'tick', to: 'tick' }],
    });
    const a = await trigger(t, spin.id, { to: newNumber() });
    const spun = await runWhen(t, spin.id, a.id, (r) => r.status === 'failed');
    expect(spun.error).toMatchObject({ code: 'NODE_REPEAT_LIMIT' });
    expect(spun.steps).toHaveLength(10);

    const pingPong = await publishedJourney(t, {
      name: 'Ping-pong',
      entry: { trigger: 'api', start: 'ping' },
      nodes: [
        { id: 'ping', type: 'wait', config: { until: past } },
        {
          id: 'pong',
          type: 'condition',
          config: { conditions: { all: [{ field: 'contact.optedIn', op: 'exists' }] } },
        },
      ],
      edges: [
        { from: 'ping', to: 'pong' },
        { from: 'pong', to: 'ping', when: 'yes' },
        { from: 'pong', to: 'ping', when: 'no' },
      ],
    });
    const b = await trigger(t, pingPong.id, { to: newNumber() });
    const long = await runWhen(t, pingPong.id, b.id, (r) => r.status === 'failed');
    expect(long.error).toMatchObject({ code: 'STEP_LIMIT' });
    expect(long.steps).toHaveLength(500);
    const stats = await call(env.app, 'GET', `/journeys/${pingPong.id}/stats`, { key: t.apiKey });
    expect(stats.body.nodes).toEqual([
      {
        nodeId: 'ping',
        type: 'wait',
        entered: 250,
        completed: 250,
        failed: 0,
        waiting: 0,
        edges: { next: 250 },
      },
      {
        nodeId: 'pong',
        type: 'condition',
        entered: 250,
        completed: 250,
        failed: 0,
        waiting: 0,
        edges: { yes: 250 },
      },
    ]);
    expect(stats.body.runs).toMatchObject({ total: 1, failed: 1 });
  });

  it('cancels a waiting run (its step too), and refuses to cancel an ended one', async () => {
    const t = await account();
    const j = await publishedJourney(t, {
      name: 'Slow',
      entry: { trigger: 'api', start: 'pause' },
      nodes: [
        { id: 'pause', type: 'wait', config: { duration: 'P3D' } },
        { id: 'hi', type: 'send_message', config: { message: { type: 'text', text: 'hi' } } },
      ],
      edges: [{ from: 'pause', to: 'hi' }],
    });
    const run = await trigger(t, j.id, { to: newNumber() });
    const waiting = await runWhen(t, j.id, run.id, (r) => r.status === 'waiting');
    expect(Date.parse(waiting.resumeAt) - Date.parse(waiting.steps[0].startedAt)).toBe(3 * 24 * 3600_000);
    const cancel = () => call(env.app, 'POST', `/journeys/${j.id}/runs/${run.id}/cancel`, { key: t.apiKey });
    const canceled = await cancel();
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', resumeAt: null });
    const read = await runWhen(t, j.id, run.id, () => true);
    expect(read.steps).toMatchObject([{ nodeId: 'pause', status: 'canceled', edge: null }]);
    expectError(await cancel(), 409, 'CONFLICT');
    expectError(await wake(t, run.id), 409, 'CONFLICT');
  });

  it('keeps each run on the version it started on', async () => {
    const t = await account();
    const body = (text: string) => ({
      name: 'Versions',
      entry: { trigger: 'api', reentry: 'always', start: 'pause' },
      nodes: [
        { id: 'pause', type: 'wait', config: { duration: 'P1D' } },
        { id: 'hi', type: 'send_message', config: { message: { type: 'text', text } } },
      ],
      edges: [{ from: 'pause', to: 'hi' }],
    });
    const j = await publishedJourney(t, body('version one'));
    const to = newNumber();
    // The customer writes first, so text messages may be sent.
    await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: to, text: 'hi' },
    });
    const first = await trigger(t, j.id, { to });
    await runWhen(t, j.id, first.id, (r) => r.status === 'waiting');
    const edited = await call(env.app, 'PATCH', `/journeys/${j.id}`, {
      key: t.apiKey,
      body: { nodes: body('version two').nodes },
    });
    expect(edited.body.version).toBe(2);
    const second = await trigger(t, j.id, { to });
    await runWhen(t, j.id, second.id, (r) => r.status === 'waiting');
    for (const id of [first.id, second.id]) expect((await wake(t, id)).status).toBe(200);
    const texts = [];
    for (const id of [first.id, second.id]) {
      const done = await runWhen(t, j.id, id, (r) => r.status === 'completed');
      const m = await call(env.app, 'GET', `/messages/${done.steps[1].output.messageId}`, { key: t.apiKey });
      texts.push([done.journeyVersion, m.body.text]);
    }
    expect(texts).toEqual([
      [1, 'version one'],
      [2, 'version two'],
    ]);
  });

  it('starts on its entry event (conditions, reentry) and from a rule, with the run as the cause', async () => {
    const t = await account();
    const j = await publishedJourney(t, {
      name: 'On keyword',
      entry: {
        trigger: 'event',
        event: 'message.received',
        conditions: {
          all: [
            { field: 'message.text', op: 'matches_keyword', value: { keywords: ['start'], mode: 'exact' } },
          ],
        },
        reentry: 'after_exit',
        start: 'tag',
      },
      nodes: [
        {
          id: 'tag',
          type: 'update_contact',
          config: { addTags: ['started'], setAttributes: { via: '{{ event.data.text }}' } },
        },
        { id: 'hold', type: 'wait', config: { duration: 'P1D' } },
      ],
      edges: [{ from: 'tag', to: 'hold' }],
    });
    // A rule on every message: its run records show which events the worker has taken.
    const rule = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'Begin starts it',
        trigger: { event: 'message.received' },
        conditions: { all: [{ field: 'message.text', op: 'eq', value: 'begin' }] },
        actions: [{ type: 'trigger_journey', journeyId: j.id, data: { said: '{{ message.text }}' } }],
      },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const taken = (n: number) =>
      eventually(
        () => call(env.app, 'GET', `/rules/${rule.body.id}/runs`, { key: t.apiKey }),
        (r) => r.body.data.length === n,
      ).then((r) => r.body.data);
    const { receiver } = await env.subscribe(t.apiKey, ['contact.tagged']);
    const from = newNumber();
    const say = (text: string) =>
      call(env.app, 'POST', '/sandbox/inbound-messages', { key: t.sandboxKey, body: { from, text } });
    expect((await say('hello')).status).toBe(201);
    const start = await say('Start');
    // after_exit: not again while its run is going.
    await say('start');
    await taken(3);
    const runs = await eventually(
      () => call(env.app, 'GET', `/journeys/${j.id}/runs`, { key: t.apiKey }),
      (r) => r.body.data.length === 1 && r.body.data[0].status === 'waiting',
    );
    const run = runs.body.data[0];
    expect(run).toMatchObject({ contactId: start.body.contactId, triggerData: { text: 'Start' } });
    const contact = await call(env.app, 'GET', `/contacts/${run.contactId}`, { key: t.apiKey });
    expect(contact.body).toMatchObject({ tags: ['started'], attributes: { via: 'Start' } });
    const [tagged] = await receiver.waitFor(1);
    expect(tagged!.json.causedBy).toMatchObject({ kind: 'journey', id: j.id, runId: run.id, depth: 1 });
    expect(
      (await call(env.app, 'POST', `/journeys/${j.id}/runs/${run.id}/cancel`, { key: t.apiKey })).status,
    ).toBe(200);

    // Once it ended, the rule's trigger_journey starts another, with its data.
    await say('begin');
    const [begun] = await taken(4);
    const both = await eventually(
      () => call(env.app, 'GET', `/journeys/${j.id}/runs`, { key: t.apiKey }),
      (r) => r.body.data.length === 2 && r.body.data[0].status === 'waiting',
    );
    expect(both.body.data[0]).toMatchObject({ triggerData: { said: 'begin' } });
    expect(begun.actions).toMatchObject([
      { type: 'trigger_journey', status: 'succeeded', ref: both.body.data[0].id },
    ]);
  });

  it('calls a webhook signed with the journey’s secret and branches on its answer', async () => {
    const t = await account();
    const hook = await env.receiver();
    hook.respond = (req) =>
      req.json.contact === 'vip'
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ score: 9 }) }
        : { status: 400, body: 'no such customer' };
    const made = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: {
        name: 'Score',
        entry: { trigger: 'api', reentry: 'always', start: 'ask' },
        nodes: [
          {
            id: 'ask',
            type: 'webhook',
            config: { url: hook.url(), body: { contact: '{{ trigger.data.who }}' } },
          },
          {
            id: 'high',
            type: 'condition',
            config: { conditions: { all: [{ field: 'run.vars.ask.body.score', op: 'gt', value: 5 }] } },
          },
          { id: 'vip', type: 'update_contact', config: { addTags: ['high-score'] } },
          { id: 'oops', type: 'update_contact', config: { addTags: ['lookup-failed'] } },
        ],
        edges: [
          { from: 'ask', to: 'high' },
          { from: 'ask', to: 'oops', when: 'failed' },
          { from: 'high', to: 'vip', when: 'yes' },
        ],
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await call(env.app, 'POST', `/journeys/${made.body.id}/publish`, { key: t.apiKey });
    const good = await trigger(t, made.body.id, { to: newNumber(), data: { who: 'vip' } });
    const done = await runWhen(t, made.body.id, good.id, (r) => r.status === 'completed');
    expect(path(done)).toEqual(['ask:next', 'high:yes', 'vip:next']);
    expect(done.vars.ask).toEqual({ status: 200, body: { score: 9 } });
    const [received] = await hook.waitFor(1);
    expect(verifySignature(made.body.signingSecret, received!)).toMatchObject({
      contact: 'vip',
      run: { id: good.id, journeyId: made.body.id, nodeId: 'ask' },
    });

    const bad = await trigger(t, made.body.id, { to: newNumber(), data: { who: 'nobody' } });
    const failed = await runWhen(t, made.body.id, bad.id, (r) => r.status === 'completed');
    expect(path(failed)).toEqual(['ask:failed', 'oops:next']);
    expect(failed.steps[0]).toMatchObject({ status: 'failed', error: { code: 'WEBHOOK_FAILED' } });
    expect(failed.vars.ask).toEqual({ status: 400, body: 'no such customer' });
    // A 4xx answer is not tried again.
    expect(hook.received).toHaveLength(2);
  });

  it('waits until a time the contact holds, skips a moment long gone by late, and expires', async () => {
    const t = await account();
    const j = await publishedJourney(t, {
      name: 'Until',
      entry: { trigger: 'api', reentry: 'always', start: 'before' },
      nodes: [
        { id: 'before', type: 'wait', config: { until: 'contact.attributes.visitAt', offset: '-P1D' } },
        { id: 'remind', type: 'update_contact', config: { addTags: ['reminded'] } },
        { id: 'gone', type: 'update_contact', config: { addTags: ['too-late'] } },
      ],
      edges: [
        { from: 'before', to: 'remind' },
        { from: 'before', to: 'gone', when: 'late' },
      ],
      settings: { maxRunDuration: 'PT2S' },
    });
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    const make = async (visitAt: string | null) => {
      const res = await call(env.app, 'POST', '/contacts', {
        key: t.apiKey,
        body: { phone: newNumber(), ...(visitAt ? { attributes: { visitAt } } : {}) },
      });
      return res.body.id as string;
    };
    const future = await trigger(t, j.id, { contactId: await make(at(3 * 86400_000)) });
    const longGone = await trigger(t, j.id, { contactId: await make(at(-86400_000 - 2 * 3600_000)) });
    const justNow = await trigger(t, j.id, { contactId: await make(at(86400_000 - 60_000)) });
    const none = await trigger(t, j.id, { contactId: await make(null) });

    const waiting = await runWhen(t, j.id, future.id, (r) => r.status === 'waiting');
    expect(Date.parse(waiting.steps[0].output.until)).toBeGreaterThan(Date.now() + 86400_000);
    expect(path(await runWhen(t, j.id, longGone.id, (r) => r.status === 'completed'))).toEqual([
      'before:late',
      'gone:next',
    ]);
    expect(path(await runWhen(t, j.id, justNow.id, (r) => r.status === 'completed'))).toEqual([
      'before:next',
      'remind:next',
    ]);
    const failed = await runWhen(t, j.id, none.id, (r) => r.status === 'failed');
    expect(failed.error).toMatchObject({ code: 'NO_DATE' });
    // maxRunDuration PT2S: the waiting run expires, its wait canceled.
    const { receiver } = await env.subscribe(t.apiKey, ['journey_run.failed']);
    const expired = await runWhen(t, j.id, future.id, (r) => r.status === 'expired');
    expect(expired).toMatchObject({ error: { code: 'RUN_EXPIRED' }, resumeAt: null });
    expect(expired.steps[0]).toMatchObject({ status: 'canceled' });
    const [event] = await receiver.waitFor(1);
    expect(event!.json).toMatchObject({
      type: 'journey_run.failed',
      data: { id: future.id, status: 'expired' },
    });
  });

  it('holds a send for the send window (a wake does not skip it), and splits runs by weight', async () => {
    const t = await account();
    // A window that is closed now, whatever the hour: an hour of the other half of the day.
    const hour = new Date().getUTCHours();
    const window = hour < 12 ? { from: '13:00', until: '14:00' } : { from: '01:00', until: '02:00' };
    const j = await publishedJourney(t, {
      name: 'Windowed',
      entry: { trigger: 'api', reentry: 'always', start: 'ab' },
      nodes: [
        { id: 'ab', type: 'split', config: { weights: { a: 1, b: 1 } } },
        { id: 'a', type: 'update_contact', config: { addTags: ['group-a'] } },
        { id: 'b', type: 'update_contact', config: { addTags: ['group-b'] } },
        { id: 'hi', type: 'send_message', config: { message: { type: 'text', text: 'hi' } } },
      ],
      edges: [
        { from: 'ab', to: 'a', when: 'split:a' },
        { from: 'ab', to: 'b', when: 'split:b' },
        { from: 'a', to: 'hi' },
        { from: 'b', to: 'hi' },
      ],
      settings: {
        sendWindow: { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], ...window },
      },
    });
    const runs = [];
    for (let i = 0; i < 12; i++) runs.push(await trigger(t, j.id, { to: newNumber() }));
    const waiting = [];
    for (const run of runs) waiting.push(await runWhen(t, j.id, run.id, (r) => r.status === 'waiting'));
    const opens = waiting[0].resumeAt;
    expect(new Date(opens).toISOString().slice(11, 16)).toBe(window.from);
    expect(waiting[0].steps.at(-1)).toMatchObject({
      nodeId: 'hi',
      status: 'waiting',
      output: { sendWindowOpensAt: opens },
    });
    const branches = waiting.map((r) => r.steps[0].edge);
    expect(new Set(branches)).toEqual(new Set(['split:a', 'split:b']));
    // Each run's branch shows on its contact.
    for (const [i, r] of waiting.entries()) {
      const c = await call(env.app, 'GET', `/contacts/${r.contactId}`, { key: t.apiKey });
      expect(c.body.tags).toEqual([branches[i] === 'split:a' ? 'group-a' : 'group-b']);
    }
    const woken = await wake(t, runs[0]!.id);
    expect(woken.status).toBe(200);
    expect(woken.body.resumeAt).not.toBe(opens);
    // Taken by the runner, it waits for the opening again, at the same step.
    const still = await runWhen(t, j.id, runs[0]!.id, (r) => r.resumeAt === opens);
    expect(still).toMatchObject({ status: 'waiting', currentNodeId: 'hi' });
    expect(still.steps).toHaveLength(3);
    const stats = await call(env.app, 'GET', `/journeys/${j.id}/stats`, { key: t.apiKey });
    const hi = stats.body.nodes.find((n: { nodeId: string }) => n.nodeId === 'hi');
    expect(hi).toMatchObject({ waiting: 12 });
    expect(stats.body.runs).toMatchObject({ total: 12, waiting: 12 });
  });
});
