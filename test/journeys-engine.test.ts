// Journeys at work, through HTTP on sandbox accounts: a sandbox key starts runs and plays the
// customer, /sandbox/wake ends waits, and what the runs did is read back through the API (the run
// with its steps, the messages, the contact, the statistics, the webhook events).
import { describe, expect, it } from 'vitest';
import { call } from './helpers/client.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from './helpers/messaging.ts';
import { expectError } from './helpers/setup.ts';

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
    const sent = await call(env.app, 'GET', `/messages/${messageId}`, { key: t.apiKey });
    expect(sent.body).toMatchObject({ to, type: 'template' });

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
});
