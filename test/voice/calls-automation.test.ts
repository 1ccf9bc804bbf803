// place_call in automation, on the sandbox: a rule's action calls the contact the event is about;
// a journey's node calls the run's contact and waits for the call's end, going on by `answered`,
// `no_answer` or `failed`; a script that cannot be called is refused when the rule or journey is
// saved (400 naming the field).
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({
  workers: true,
  config: { voiceSandboxStepMs: 20, voicePollMs: 20, automationPollMs: 50 },
});

async function script(key: string, publish = true): Promise<string> {
  const made = await call(env.app, 'POST', '/voice/scripts', {
    key,
    body: { name: 'Reminder', type: 'tts', tts: { text: 'Hello {{ contact.name | default: "you" }}.' } },
  });
  expect(made.status).toBe(201);
  if (publish)
    expect((await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key })).status).toBe(200);
  return made.body.id;
}

const callsTo = async (key: string, to: string) =>
  (await call(env.app, 'GET', '/voice/calls', { key, query: { to } })).body.data as any[];

describe('place_call', () => {
  it("a rule's action calls the contact the event is about", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const scriptId = await script(t.apiKey);
    const rule = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'Call when tagged',
        trigger: { event: 'contact.tagged' },
        conditions: { all: [{ field: 'event.data.tagsAdded', op: 'contains', value: 'call-me' }] },
        actions: [{ type: 'place_call', scriptId }],
      },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const contact = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+15005550001' },
    });
    await call(env.app, 'POST', `/contacts/${contact.body.id}/tags`, {
      key: t.apiKey,
      body: { tags: ['call-me'] },
    });
    const calls = await eventually(
      () => callsTo(t.apiKey, '+15005550001'),
      (list) => list.length === 1 && list[0].status === 'completed',
    );
    expect(calls).toMatchObject([{ status: 'completed', contactId: contact.body.id, scriptId }]);
  });

  it("a journey's node waits for the call's end and goes on by answered, no_answer or failed", async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const scriptId = await script(t.apiKey);
    const made = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: {
        name: 'Call, then note how it went',
        entry: { trigger: 'api', start: 'ring' },
        nodes: [
          { id: 'ring', type: 'place_call', config: { scriptId } },
          { id: 'answered', type: 'update_contact', config: { addTags: ['answered'] } },
          { id: 'missed', type: 'update_contact', config: { addTags: ['missed'] } },
          { id: 'broken', type: 'update_contact', config: { addTags: ['call-failed'] } },
        ],
        edges: [
          { from: 'ring', to: 'answered', when: 'answered' },
          { from: 'ring', to: 'missed', when: 'no_answer' },
          { from: 'ring', to: 'broken', when: 'failed' },
        ],
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await call(env.app, 'POST', `/journeys/${made.body.id}/publish`, { key: t.apiKey })).status).toBe(
      200,
    );
    const cases: [string, string][] = [
      ['+15005550001', 'answered'],
      ['+15005550002', 'missed'],
      ['+15005550004', 'call-failed'],
    ];
    const runs: { id: string; contactId: string }[] = [];
    for (const [to] of cases) {
      const run = await call(env.app, 'POST', `/journeys/${made.body.id}/trigger`, {
        key: t.apiKey,
        body: { to },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(202);
      runs.push(run.body);
    }
    for (const [i, [, tag]] of cases.entries()) {
      const done = await eventually(
        () => call(env.app, 'GET', `/journeys/${made.body.id}/runs/${runs[i].id}`, { key: t.apiKey }),
        (r) => r.body.status === 'completed',
      );
      expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
      expect(done.body.vars.ring).toMatchObject({ callId: expect.stringMatching(/^call_/) });
      const contact = await call(env.app, 'GET', `/contacts/${runs[i].contactId}`, { key: t.apiKey });
      expect(contact.body.tags).toEqual([tag]);
    }
  });

  it('refuses, when saved, a script that is not published or not the account’s', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const draft = await script(t.apiKey, false);
    const res = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'x',
        trigger: { event: 'contact.created' },
        actions: [{ type: 'place_call', scriptId: draft }],
      },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'actions[0].scriptId', issue: expect.stringContaining('draft') },
    ]);
    const other = await tenant(env.app, env.partner.partnerKey);
    const theirs = await script(other.apiKey);
    const journey = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: {
        name: 'x',
        entry: { trigger: 'api', start: 'ring' },
        nodes: [{ id: 'ring', type: 'place_call', config: { scriptId: theirs } }],
        edges: [],
      },
    });
    expectError(journey, 400, 'INVALID_REQUEST');
    expect(JSON.stringify(journey.body.error.details)).toContain('not a voice script of this account');
  });
});
