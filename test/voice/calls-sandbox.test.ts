// Calls on the sandbox, end to end through HTTP: each magic number's call played by the simulator,
// whose Twilio-shaped callbacks go through the real, signed callback route; an IVR where the callee
// presses 1 and is tagged; keys sent with the sandbox's digits route; machine detection with
// onMachine; cancel in each state; events; 402 below Business; another tenant's call is 404.
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { Receiver, verifySignature } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({
  workers: true,
  config: { voiceSandboxStepMs: 20, voicePollMs: 20, webhookAllowedHosts: ['127.0.0.1'] },
});

const ENDED = ['completed', 'busy', 'no_answer', 'failed', 'canceled'];

const ivr = {
  name: 'Confirm',
  type: 'ivr',
  ivr: {
    start: 'menu',
    nodes: {
      menu: {
        say: 'Hello {{ contact.name | default: "there" }}, press 1 to confirm.',
        gather: {
          timeoutSeconds: 2,
          retries: 0,
          options: { '1': { action: { type: 'tag', tag: 'confirmed', next: 'thanks' } } },
          noInput: { next: 'bye' },
        },
      },
      thanks: { say: 'Thank you, {{ variables.when }}.', action: { type: 'hangup' } },
      bye: { say: 'Goodbye.' },
    },
  },
};

async function published(key: string, body: object): Promise<string> {
  const made = await call(env.app, 'POST', '/voice/scripts', { key, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return made.body.id;
}

async function place(key: string, body: object) {
  const res = await call(env.app, 'POST', '/voice/calls', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

async function ended(key: string, id: string) {
  const res = await eventually(
    () => call(env.app, 'GET', `/voice/calls/${id}`, { key }),
    (r) => ENDED.includes(r.body.status),
  );
  expect(ENDED, JSON.stringify(res.body)).toContain(res.body.status);
  return res.body;
}

describe('sandbox calls', () => {
  it('plays each magic number through the signed callback route', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const tts = await published(t.apiKey, {
      name: 'Hi',
      type: 'tts',
      tts: { text: 'Hello {{ variables.name }}' },
    });
    const cases: [string, string, boolean][] = [
      ['+15005550001', 'completed', true],
      ['+15005550002', 'busy', false],
      ['+15005550003', 'no_answer', false],
      ['+15005550004', 'failed', false],
    ];
    const calls = await Promise.all(
      cases.map(([to]) =>
        place(t.apiKey, { to, scriptId: tts, variables: { name: 'Ann' }, ringTimeoutSeconds: 5 }),
      ),
    );
    for (const c of calls) expect(c).toMatchObject({ status: 'queued', provider: 'sandbox', sandbox: false });
    for (const [i, [, status, answered]] of cases.entries()) {
      const done = await ended(t.apiKey, calls[i].id);
      expect(done.status).toBe(status);
      expect(done.providerCallId).toMatch(/^CA/);
      expect(done.answeredAt !== null).toBe(answered);
      expect(done.charged).toEqual({ amount: '0.0000', currency: 'USD' });
      if (status === 'failed') expect(done.error).toMatchObject({ code: 'CALL_FAILED' });
      if (status === 'completed') {
        expect(done.durationSeconds).toBeGreaterThanOrEqual(0);
        expect(done.billableMinutes).toBe(done.durationSeconds === 0 ? 0 : 1);
      }
    }
  });

  it('an IVR where the callee presses 1: the digits recorded per node, the contact tagged', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const script = await published(t.apiKey, ivr);
    const c = await place(t.apiKey, { to: '+15005550006', scriptId: script, variables: { when: 'Monday' } });
    const done = await ended(t.apiKey, c.id);
    expect(done.status).toBe('completed');
    expect(done.digits).toEqual([{ nodeId: 'menu', input: '1', at: expect.any(String) }]);
    const contact = await call(env.app, 'GET', `/contacts/${done.contactId}`, { key: t.apiKey });
    expect(contact.body.tags).toContain('confirmed');
  });

  it("an IVR option's webhook action: the call and its digits posted, signed with the script's secret", async () => {
    const hook = await Receiver.start();
    try {
      const t = await tenant(env.app, env.partner.partnerKey);
      const made = await call(env.app, 'POST', '/voice/scripts', {
        key: t.apiKey,
        body: {
          name: 'Callback request',
          type: 'ivr',
          ivr: {
            start: 'menu',
            nodes: {
              menu: {
                say: 'Press 1 and we call you back.',
                gather: {
                  options: { '1': { action: { type: 'webhook', url: hook.url(), next: 'thanks' } } },
                },
              },
              thanks: { say: 'We will call you back.', action: { type: 'hangup' } },
            },
          },
        },
      });
      expect(made.body.signingSecret).toMatch(/^whsec_/);
      expect(
        (await call(env.app, 'GET', `/voice/scripts/${made.body.id}`, { key: t.apiKey })).body.signingSecret,
      ).toBeUndefined();
      await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key: t.apiKey });
      const c = await place(t.apiKey, { to: '+15005550006', scriptId: made.body.id });
      await ended(t.apiKey, c.id);
      const [received] = await hook.waitFor(1);
      expect(verifySignature(made.body.signingSecret, received!)).toMatchObject({
        type: 'call.ivr_action',
        callId: c.id,
        nodeId: 'menu',
        to: '+15005550006',
        digits: [{ nodeId: 'menu', input: '1' }],
      });
    } finally {
      await hook.close();
    }
  });

  it('nothing pressed: the gather times out and noInput is taken; keys sent are pressed at the gather', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const script = await published(t.apiKey, ivr);
    const silent = await place(t.apiKey, {
      to: '+15005550001',
      scriptId: script,
      variables: { when: 'Monday' },
    });
    const pressed = await place(t.apiKey, {
      to: '+15005550009',
      scriptId: script,
      variables: { when: 'Monday' },
    });
    const keys = await call(env.app, 'POST', `/sandbox/calls/${pressed.id}/digits`, {
      key: t.apiKey,
      body: { digits: '7' },
    });
    expect(keys.status, JSON.stringify(keys.body)).toBe(200);
    const a = await ended(t.apiKey, silent.id);
    expect(a.digits).toEqual([{ nodeId: 'menu', input: '', at: expect.any(String) }]);
    const b = await ended(t.apiKey, pressed.id);
    // 7 is no option: invalid, with no retry and no `invalid` route: the call hangs up.
    expect(b.digits).toEqual([{ nodeId: 'menu', input: '7', at: expect.any(String) }]);
    expect(b.status).toBe('completed');
    const contact = await call(env.app, 'GET', `/contacts/${b.contactId}`, { key: t.apiKey });
    expect(contact.body.tags).not.toContain('confirmed');
    expectError(
      await call(env.app, 'POST', `/sandbox/calls/${b.id}/digits`, { key: t.apiKey, body: { digits: '1' } }),
      409,
      'CONFLICT',
    );
  });

  it('machine detection: answeredBy machine, and onMachine hangup ends the call at once', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const script = await published(t.apiKey, { ...ivr, onMachine: 'hangup' });
    const c = await place(t.apiKey, {
      to: '+15005550005',
      scriptId: script,
      variables: { when: 'x' },
      machineDetection: true,
    });
    const done = await ended(t.apiKey, c.id);
    expect(done).toMatchObject({ status: 'completed', answeredBy: 'machine', digits: [] });
    const human = await place(t.apiKey, {
      to: '+15005550006',
      scriptId: script,
      variables: { when: 'x' },
      machineDetection: true,
    });
    expect(await ended(t.apiKey, human.id)).toMatchObject({ answeredBy: 'human', digits: [{ input: '1' }] });
  });

  it('cancel: a queued call at once, never placed', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const script = await published(t.apiKey, { name: 'Hi', type: 'tts', tts: { text: 'Hi' } });
    // The dialler stopped: the call stays queued.
    await env.app.ctx.voice.stop();
    try {
      const c = await place(t.apiKey, { to: '+15005550001', scriptId: script });
      const res = await call(env.app, 'POST', `/voice/calls/${c.id}/cancel`, { key: t.apiKey });
      expect(res.body).toMatchObject({
        status: 'canceled',
        initiatedAt: null,
        providerCallId: null,
        endedAt: expect.any(String),
      });
    } finally {
      env.app.ctx.voice.start();
    }
  });

  it('cancel: a ringing call canceled, one in progress hung up, an ended one 409', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const script = await published(t.apiKey, {
      ...ivr,
      ivr: {
        ...ivr.ivr,
        nodes: {
          ...ivr.ivr.nodes,
          menu: { ...ivr.ivr.nodes.menu, gather: { ...ivr.ivr.nodes.menu.gather, timeoutSeconds: 30 } },
        },
      },
    });
    const body = { to: '+15005550001', scriptId: script, variables: { when: 'x' } };
    const ringing = await place(t.apiKey, { ...body, to: '+15005550003', ringTimeoutSeconds: 150 });
    const seen = await eventually(
      () => call(env.app, 'GET', `/voice/calls/${ringing.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'ringing',
    );
    expect(seen.body.status).toBe('ringing');
    const canceled = await call(env.app, 'POST', `/voice/calls/${ringing.id}/cancel`, { key: t.apiKey });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body.status).toBe('canceled');

    const talking = await place(t.apiKey, body);
    await eventually(
      () => call(env.app, 'GET', `/voice/calls/${talking.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'in_progress',
    );
    const hung = await call(env.app, 'POST', `/voice/calls/${talking.id}/cancel`, { key: t.apiKey });
    expect(hung.body).toMatchObject({ status: 'completed', answeredAt: expect.any(String) });
    expectError(
      await call(env.app, 'POST', `/voice/calls/${talking.id}/cancel`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );
    // Whatever the simulator reports later, an ended call never moves.
    await new Promise((r) => setTimeout(r, 300));
    expect((await call(env.app, 'GET', `/voice/calls/${talking.id}`, { key: t.apiKey })).body.status).toBe(
      'completed',
    );
  });

  it('refuses a draft script (409), a bad number (400), a missing variable (400); 402 below Business; 404 across tenants', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const draft = await call(env.app, 'POST', '/voice/scripts', { key: t.apiKey, body: ivr });
    expectError(
      await call(env.app, 'POST', '/voice/calls', {
        key: t.apiKey,
        body: { to: '+15005550001', scriptId: draft.body.id },
      }),
      409,
      'CONFLICT',
    );
    const script = await published(t.apiKey, ivr);
    expectError(
      await call(env.app, 'POST', '/voice/calls', { key: t.apiKey, body: { to: 'nope', scriptId: script } }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await call(env.app, 'POST', '/voice/calls', {
        key: t.apiKey,
        body: { to: '+15005550001', scriptId: script },
      }),
      400,
      'INVALID_REQUEST',
    );
    const pro = await tenant(env.app, env.partner.partnerKey, { planCode: 'pro', addons: ['api_access'] });
    expectError(
      await call(env.app, 'GET', '/voice/calls', { key: pro.apiKey }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
    const c = await place(t.apiKey, { to: '+15005550002', scriptId: script, variables: { when: 'x' } });
    const other = await tenant(env.app, env.partner.partnerKey);
    expectError(
      await call(env.app, 'GET', `/voice/calls/${c.id}`, { key: other.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const list = await call(env.app, 'GET', '/voice/calls', { key: t.apiKey, query: { to: '+15005550002' } });
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([c.id]);
  });

  it("holds the plan's calls per second (Business: 1); usage sums the calls by status and country", async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    const tts = await published(t.apiKey, { name: 'Hi', type: 'tts', tts: { text: 'Hi' } });
    const made = await Promise.all(
      ['+15005550001', '+15005550002', '+15005550003'].map((to) =>
        place(t.apiKey, { to, scriptId: tts, ringTimeoutSeconds: 5 }),
      ),
    );
    const calls = await Promise.all(made.map((c) => ended(t.apiKey, c.id)));
    const seconds = calls.map((c) => Math.floor(Date.parse(c.initiatedAt) / 1000));
    expect(new Set(seconds).size).toBe(3);
    const usage = await call(env.app, 'GET', '/voice/usage', { key: t.apiKey });
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    expect(usage.body).toMatchObject({
      calls: 3,
      answered: 1,
      byStatus: { completed: 1, busy: 1, no_answer: 1 },
      byCountry: [{ country: 'US', calls: 3 }],
      cost: { amount: '0.0000' },
    });
    expectError(
      await call(env.app, 'GET', '/voice/usage', {
        key: t.apiKey,
        query: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
      }),
      400,
      'INVALID_REQUEST',
    );
  });
});
