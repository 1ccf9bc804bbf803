// Journey configs through HTTP on sandbox accounts: each type's journey at work (a sandbox key
// starts runs and plays the customer, /sandbox/wake ends waits), the checks at save with their
// fields, the life of a config and its journey (versions, pause, delete, read-only through
// /journeys), plans and tenants. The re-engagement config, started by the timed scan, is in
// journey-configs-timed.test.ts (it needs a clock the test moves).
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { call, provision, tenant } from '../helpers/client.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({ config: { automationPollMs: 50, automationScanMs: 3_600_000 } });

const HOUR = 3600_000;
let numbers = 0;
const newNumber = () => `+1415555${String(4000 + numbers++).padStart(4, '0')}`;
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);
const at = (ms: number) => new Date(Date.now() + ms).toISOString();

async function configOf(t: SandboxTenant, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/journey-configs', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; journeyId: string; status: string; config: any };
}

const runWhen = (t: SandboxTenant, journeyId: string, runId: string, done: (r: any) => boolean) =>
  eventually(
    () => call(env.app, 'GET', `/journeys/${journeyId}/runs/${runId}`, { key: t.apiKey }),
    (r) => r.status === 200 && done(r.body),
  ).then((r) => r.body);

const runsOf = (t: SandboxTenant, journeyId: string, done: (runs: any[]) => boolean) =>
  eventually(
    () => call(env.app, 'GET', `/journeys/${journeyId}/runs`, { key: t.apiKey }),
    (r) => r.status === 200 && done(r.body.data),
  ).then((r) => r.body.data as any[]);

const wake = async (t: SandboxTenant, runId: string) => {
  const res = await call(env.app, 'POST', '/sandbox/wake', { key: t.sandboxKey, body: { runId } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

const path = (r: { steps: { nodeId: string; edge: string | null }[] }) =>
  r.steps.map((s) => `${s.nodeId}${s.edge ? `:${s.edge}` : ''}`);

const messageOf = async (t: SandboxTenant, id: string) =>
  (await call(env.app, 'GET', `/messages/${id}`, { key: t.apiKey })).body;

let templates = 0;
/** An approved template with a name and a time, and Confirm/Cancel quick replies. */
const reminderTemplate = (t: SandboxTenant) =>
  approvedTemplate(env.app, t.apiKey, {
    name: `config_reminder_${templates++}`,
    components: [
      {
        type: 'BODY',
        text: 'Hi {{1}}, your appointment is at {{2}}. Please confirm.',
        example: { body_text: [['Ann', '2026-12-01T10:00:00Z']] },
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

const reminderMessage = (name: string, when = '{{ contact.attributes.appointmentAt }}') => ({
  templateName: name,
  templateLanguage: 'en_US',
  parameters: ['{{ contact.name | default: "there" }}', when],
});

describe('appointment_reminder', () => {
  it('reminds the largest lead first, waits for a tap between reminders, and acts on Confirm', async () => {
    const t = await account();
    const template = await reminderTemplate(t);
    const made = await configOf(t, {
      name: 'Dentist reminders',
      type: 'appointment_reminder',
      config: {
        appointmentAt: 'contact.attributes.appointmentAt',
        remindBefore: ['PT2H', 'P1D'],
        message: reminderMessage(
          template.name,
          '{{ contact.attributes.appointmentAt | date: "%A %-d %B %Y, %-I:%M %p" }}',
        ),
        confirm: {
          buttons: { confirm: 'Confirm', cancel: 'Cancel' },
          onConfirm: { addTags: ['confirmed'], reply: 'See you then, {{ contact.name }}!' },
          onCancel: { addTags: ['canceled'], setAttributes: { appointmentAt: null } },
        },
      },
    });
    expect(made).toMatchObject({ id: expect.stringMatching(/^jcf_/), status: 'active' });

    // The journey it owns: published, read-only, the graph of docs/history/issue-21.md.
    const journey = (await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey })).body;
    expect(journey).toMatchObject({
      status: 'published',
      version: 1,
      configId: made.id,
      entry: { trigger: 'api', reentry: 'after_exit', start: 'wait_1' },
    });
    expect(journey.nodes.map((n: any) => `${n.id}:${n.type}`)).toEqual([
      'wait_1:wait',
      'remind_1:send_message',
      'answer_1:wait_for_reply',
      'which_1:switch',
      'wait_2:wait',
      'remind_2:send_message',
      'answer_2:wait_for_reply',
      'which_2:switch',
      'confirmed:update_contact',
      'confirm_reply:send_message',
      'canceled:update_contact',
      'done:end',
    ]);
    expect(journey.nodes[0].config).toEqual({ until: 'contact.attributes.appointmentAt', offset: '-P1D' });
    expect(journey.nodes[4].config).toEqual({ until: 'contact.attributes.appointmentAt', offset: '-PT2H' });
    // Between the reminders: the gap between them; after the last: its own lead time.
    expect(journey.nodes[2].config).toEqual({ timeout: 'PT22H', match: { buttons: ['Confirm', 'Cancel'] } });
    expect(journey.nodes[6].config.timeout).toBe('PT2H');
    expect(journey.edges).toEqual(
      expect.arrayContaining([
        { from: 'wait_1', to: 'wait_2', when: 'late' },
        { from: 'wait_2', to: 'done', when: 'late' },
        { from: 'answer_1', to: 'wait_2', when: 'timeout' },
        { from: 'answer_2', to: 'done', when: 'timeout' },
        { from: 'which_2', to: 'confirmed', when: 'case:confirm' },
        { from: 'which_2', to: 'canceled', when: 'case:cancel' },
        { from: 'confirmed', to: 'confirm_reply', when: 'next' },
      ]),
    );

    const to = newNumber();
    const contact = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: to, name: 'Ann', attributes: { appointmentAt: at(3 * 24 * HOUR) } },
    });
    const started = await call(env.app, 'POST', `/journeys/${made.journeyId}/trigger`, {
      key: t.sandboxKey,
      body: { contactId: contact.body.id },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const runId = started.body.id as string;
    const first = await runWhen(t, made.journeyId, runId, (r) => r.status === 'waiting');
    expect(path(first)).toEqual(['wait_1']);
    // Two days ahead: a day before the appointment.
    expect(Date.parse(first.resumeAt)).toBeGreaterThan(Date.now() + 47 * HOUR);

    await wake(t, runId);
    const reminded = await runWhen(t, made.journeyId, runId, (r) => r.currentNodeId === 'answer_1');
    expect(path(reminded)).toEqual(['wait_1:next', 'remind_1:next', 'answer_1']);
    const reminder = await messageOf(t, reminded.steps[1].output.messageId);
    expect(reminder).toMatchObject({ to, type: 'template', template: { name: template.name } });
    // The appointment as the customer reads it: in their zone (a +1 number: New York's), not ISO.
    const local = DateTime.fromISO(contact.body.attributes.appointmentAt, { zone: 'America/New_York' });
    expect(reminder.template.parameters).toEqual([
      'Ann',
      local.setLocale('en-US').toFormat('cccc d LLLL yyyy, h:mm a'),
    ]);

    // No tap: the next reminder's wait, then the second reminder.
    await wake(t, runId);
    await runWhen(t, made.journeyId, runId, (r) => r.currentNodeId === 'wait_2' && r.status === 'waiting');
    await wake(t, runId);
    const second = await runWhen(t, made.journeyId, runId, (r) => r.currentNodeId === 'answer_2');
    const lastId = second.steps.at(-2).output.messageId as string;
    expect(lastId).not.toBe(reminder.id);
    // The customer can answer a message once it has been sent: the run reaches answer_2 as soon as
    // the reminder is accepted, and the sandbox hands it over a moment later (on a busy machine,
    // after the tap used to come: a flake in the PostgreSQL CI run).
    const handedOver = await eventually(
      () => call(env.app, 'GET', `/messages/${lastId}`, { key: t.apiKey }),
      (r) => r.status === 200 && r.body.providerMessageId !== null,
    );
    expect(handedOver.body.providerMessageId, JSON.stringify(handedOver.body)).not.toBeNull();

    const tap = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: to, replyTo: lastId, button: { text: 'Confirm' } },
    });
    expect(tap.status, JSON.stringify(tap.body)).toBe(201);
    const done = await runWhen(t, made.journeyId, runId, (r) => r.status === 'completed');
    expect(path(done)).toEqual([
      'wait_1:next',
      'remind_1:next',
      'answer_1:timeout',
      'wait_2:next',
      'remind_2:next',
      'answer_2:reply',
      'which_2:case:confirm',
      'confirmed:next',
      'confirm_reply:next',
    ]);
    const after = await call(env.app, 'GET', `/contacts/${contact.body.id}`, { key: t.apiKey });
    expect(after.body.tags).toEqual(['confirmed']);
    const reply = await messageOf(t, done.steps.at(-1).output.messageId);
    expect(reply).toMatchObject({ to, type: 'text', text: 'See you then, Ann!' });
  });

  it('skips a reminder whose time is gone by more than an hour (late), reading the time from the trigger', async () => {
    const t = await account();
    const template = await reminderTemplate(t);
    const made = await configOf(t, {
      name: 'Late reminders',
      type: 'appointment_reminder',
      config: {
        appointmentAt: 'trigger.data.at',
        remindBefore: ['P1D', 'PT1H'],
        message: reminderMessage(template.name, '{{ trigger.data.at }}'),
      },
    });
    const trigger = async (appointment: string) => {
      const res = await call(env.app, 'POST', `/journeys/${made.journeyId}/trigger`, {
        key: t.sandboxKey,
        body: { to: newNumber(), data: { at: appointment } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return res.body.id as string;
    };
    // In 90 minutes: the day-before reminder was due 22.5 hours ago; the hour-before one is ahead.
    const soon = await trigger(at(90 * 60_000));
    // Two hours ago: both are gone; nothing is sent.
    const past = await trigger(at(-2 * HOUR));

    const waiting = await runWhen(t, made.journeyId, soon, (r) => r.status === 'waiting');
    expect(path(waiting)).toEqual(['wait_1:late', 'wait_2']);
    await wake(t, soon);
    const sent = await runWhen(t, made.journeyId, soon, (r) => r.status === 'completed');
    expect(path(sent)).toEqual(['wait_1:late', 'wait_2:next', 'remind_2:next']);
    expect(await messageOf(t, sent.steps[2].output.messageId)).toMatchObject({ type: 'template' });

    const gone = await runWhen(t, made.journeyId, past, (r) => r.status === 'completed');
    expect(path(gone)).toEqual(['wait_1:late', 'wait_2:late', 'done:end']);
  });
});

describe('welcome_message', () => {
  it('greets each contact the account makes, once (contact.created)', async () => {
    const t = await account();
    const template = await approvedTemplate(env.app, t.apiKey, {
      name: `config_welcome_${templates++}`,
      body: 'Welcome, {{1}}! Glad to have you.',
      examples: ['Ann'],
    });
    const made = await configOf(t, {
      name: 'Welcome',
      type: 'welcome_message',
      config: {
        on: 'contact.created',
        message: {
          templateName: template.name,
          templateLanguage: 'en_US',
          parameters: ['{{ contact.name }}'],
        },
      },
    });
    const journey = (await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey })).body;
    expect(journey.entry).toMatchObject({ trigger: 'event', event: 'contact.created', reentry: 'never' });
    const to = newNumber();
    const contact = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: to, name: 'Bo' },
    });
    expect(contact.status).toBe(201);
    const [run] = await runsOf(t, made.journeyId, (runs) => runs[0]?.status === 'completed');
    expect(run).toMatchObject({ contactId: contact.body.id, status: 'completed' });
    const done = await runWhen(t, made.journeyId, run.id, () => true);
    expect(path(done)).toEqual(['welcome:next']);
    expect(await messageOf(t, done.steps[0].output.messageId)).toMatchObject({
      to,
      type: 'template',
      template: { name: template.name, parameters: ['Bo'] },
    });
  });

  it('greets a first message after a delay; a PATCH makes the next version, the run keeps its own', async () => {
    const t = await account();
    const made = await configOf(t, {
      name: 'Hello back',
      type: 'welcome_message',
      config: {
        on: 'first_inbound',
        delay: 'P1D',
        message: { type: 'text', text: 'Hi {{ contact.name | default: "there" }}!' },
      },
    });
    // A rule that never matches: its run records show which events the worker has taken.
    const marker = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'marker',
        trigger: { event: 'message.received' },
        conditions: { all: [{ field: 'message.text', op: 'eq', value: 'never said' }] },
        actions: [{ type: 'add_tag', tag: 'never' }],
      },
    });
    const taken = (n: number) =>
      eventually(
        () => call(env.app, 'GET', `/rules/${marker.body.id}/runs`, { key: t.apiKey }),
        (r) => r.body.data.length === n,
      );
    const from = newNumber();
    const say = (text: string) =>
      call(env.app, 'POST', '/sandbox/inbound-messages', { key: t.sandboxKey, body: { from, text } });
    expect((await say('hello')).status).toBe(201);
    const [run] = await runsOf(t, made.journeyId, (runs) => runs[0]?.status === 'waiting');
    expect(run).toMatchObject({ journeyVersion: 1, currentNodeId: 'pause' });

    const patched = await call(env.app, 'PATCH', `/journey-configs/${made.id}`, {
      key: t.apiKey,
      body: { config: { on: 'first_inbound', message: { type: 'text', text: 'Welcome back!' } } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.config).toEqual({
      on: 'first_inbound',
      message: { type: 'text', text: 'Welcome back!' },
    });
    const journey = (await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey })).body;
    expect(journey).toMatchObject({ version: 2, status: 'published', entry: { start: 'welcome' } });

    await wake(t, run.id);
    const done = await runWhen(t, made.journeyId, run.id, (r) => r.status === 'completed');
    expect(done.journeyVersion).toBe(1);
    expect(path(done)).toEqual(['pause:next', 'welcome:next']);
    expect(await messageOf(t, done.steps[1].output.messageId)).toMatchObject({
      type: 'text',
      text: 'Hi there!',
    });

    // reentry never: a second message starts nothing.
    await say('thanks');
    await taken(2);
    expect(await runsOf(t, made.journeyId, () => true)).toHaveLength(1);
  });
});

describe('journey configs: checks', () => {
  const refused = async (t: SandboxTenant, body: Record<string, unknown>) => {
    const res = await call(env.app, 'POST', '/journey-configs', { key: t.apiKey, body });
    expectError(res, 400, 'INVALID_REQUEST');
    return (res.body.error.details as { field: string; issue: string }[]).map((d) => d.field).sort();
  };

  it('refuses a bad appointment reminder, each fault at its config field', async () => {
    const t = await account();
    const message = { templateName: 'reminder', templateLanguage: 'en_US' };
    expect(
      await refused(t, {
        name: 'bad',
        type: 'appointment_reminder',
        config: {
          appointmentAt: 'contact.phone',
          remindBefore: ['P1D', 'PT24H', 'P40D', 'soon'],
          message: { ...message, parameters: ['{{ contact.name'] },
          confirm: {
            buttons: { confirm: 'Yes', cancel: 'yes' },
            onConfirm: { addTags: ['!nope'], reply: 'Thanks {% if %}' },
            onCancel: { setAttributes: { '1bad': 'x' } },
          },
        },
      }),
    ).toEqual(
      [
        'config.appointmentAt',
        'config.remindBefore[1]',
        'config.remindBefore[2]',
        'config.remindBefore[3]',
        'config.confirm.buttons.cancel',
      ].sort(),
    );
    // Once its own fields hold, the faults of the journey it makes come back at the config's fields.
    expect(
      await refused(t, {
        name: 'bad',
        type: 'appointment_reminder',
        config: {
          appointmentAt: 'trigger.data.at',
          remindBefore: ['P1D'],
          message: { ...message, parameters: ['{{ contact.name'] },
          confirm: {
            buttons: { confirm: 'Yes', cancel: 'No' },
            onConfirm: { addTags: ['!nope'], reply: 'Thanks {% if %}' },
            onCancel: { setAttributes: { '1bad': 'x' } },
          },
        },
      }),
    ).toEqual(
      [
        'config.message.parameters[0]',
        'config.confirm.onConfirm.addTags[0]',
        'config.confirm.onConfirm.reply',
        'config.confirm.onCancel.setAttributes.1bad',
      ].sort(),
    );
    expect(
      await refused(t, {
        name: 'bad',
        type: 'appointment_reminder',
        config: { appointmentAt: 'trigger.data.at', remindBefore: [], extra: 1 },
      }),
    ).toEqual(['config.extra', 'config.message', 'config.remindBefore'].sort());
  });

  it('holds confirm.buttons to the template’s quick replies, on create and PATCH; a template changed later fails the send', async () => {
    const t = await account();
    const withButtons = await reminderTemplate(t);
    const plain = await approvedTemplate(env.app, t.apiKey, { name: `plain_reminder_${templates++}` });
    const config = (templateName: string, buttons = { confirm: 'Confirm', cancel: 'Cancel' }) => ({
      appointmentAt: 'trigger.data.at',
      remindBefore: ['P1D', 'PT2H'],
      message: reminderMessage(templateName, '{{ trigger.data.at }}'),
      confirm: { buttons, onConfirm: { addTags: ['confirmed'] }, onCancel: { addTags: ['canceled'] } },
    });
    const create = (c: Record<string, unknown>) =>
      call(env.app, 'POST', '/journey-configs', {
        key: t.apiKey,
        body: { name: 'Reminders', type: 'appointment_reminder', config: c },
      });
    // A template without buttons: both buttons refused, each at its field, once.
    const none = await create(config(plain.name));
    expectError(none, 400, 'INVALID_REQUEST');
    expect(none.body.error.details).toEqual([
      {
        field: 'config.confirm.buttons.confirm',
        issue: `"Confirm" is not a button of the message sent before this wait (template ${plain.name} (en_US) has no quick-reply buttons)`,
      },
      {
        field: 'config.confirm.buttons.cancel',
        issue: `"Cancel" is not a button of the message sent before this wait (template ${plain.name} (en_US) has no quick-reply buttons)`,
      },
    ]);
    // A label the template does not have (quick replies are compared as they are tapped: exactly).
    const wrong = await create(config(withButtons.name, { confirm: 'Yes', cancel: 'Cancel' }));
    expectError(wrong, 400, 'INVALID_REQUEST');
    expect(wrong.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'config.confirm.buttons.confirm',
    ]);
    expect(wrong.body.error.details[0].issue).toContain('has quick-reply buttons "Confirm", "Cancel"');
    const made = await configOf(t, {
      name: 'Reminders',
      type: 'appointment_reminder',
      config: config(withButtons.name),
    });
    // On PATCH too; nothing changes.
    const patched = await call(env.app, 'PATCH', `/journey-configs/${made.id}`, {
      key: t.apiKey,
      body: { config: config(plain.name) },
    });
    expectError(patched, 400, 'INVALID_REQUEST');
    expect(patched.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'config.confirm.buttons.confirm',
      'config.confirm.buttons.cancel',
    ]);
    const journey = await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey });
    expect(journey.body.version).toBe(1);

    // A template the account does not have yet is not held against the buttons when saved; when
    // the run sends it, it is: made without the buttons, the reminder fails rather than wait for
    // a tap that cannot come.
    const later = `later_reminder_${templates++}`;
    const early = await configOf(t, { name: 'Early', type: 'appointment_reminder', config: config(later) });
    await approvedTemplate(env.app, t.apiKey, { name: later });
    const started = await call(env.app, 'POST', `/journeys/${early.journeyId}/trigger`, {
      key: t.sandboxKey,
      body: { to: newNumber(), data: { at: at(3 * 24 * HOUR) } },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await runWhen(t, early.journeyId, started.body.id, (r) => r.status === 'waiting');
    await wake(t, started.body.id);
    const failed = await runWhen(t, early.journeyId, started.body.id, (r) => r.status === 'failed');
    expect(path(failed)).toEqual(['wait_1:next', 'remind_1:failed']);
    expect(failed.error).toEqual({
      code: 'BUTTONS_MISSING',
      message: `Template ${later} (en_US) has no button "Confirm", "Cancel", which the wait after it waits for: it changed since the journey was published.`,
    });
  });

  it('refuses a bad welcome message and a bad re-engagement', async () => {
    const t = await account();
    expect(
      await refused(t, {
        name: 'bad',
        type: 'welcome_message',
        config: { on: 'contact.created', delay: 'P2M', message: { type: 'text' } },
      }),
    ).toEqual(['config.delay']);
    expect(
      await refused(t, {
        name: 'bad',
        type: 'welcome_message',
        config: { on: 'contact.created', message: { type: 'text' } },
      }),
    ).toEqual(['config.message.text']);
    expect(
      await refused(t, { name: 'bad', type: 'welcome_message', config: { on: 'birthday', message: {} } }),
    ).toEqual(['config.on']);
    const template = { templateName: 'come_back', templateLanguage: 'en_US' };
    const engage = {
      inactiveFor: 'P30D',
      message: template,
      maxAttempts: 2,
      spacing: 'P3D',
      exitOnReply: true,
    };
    expect(
      await refused(t, { name: 'bad', type: 're_engagement', config: { ...engage, maxAttempts: 6 } }),
    ).toEqual(['config.maxAttempts']);
    expect(
      await refused(t, { name: 'bad', type: 're_engagement', config: { ...engage, spacing: 'P8D' } }),
    ).toEqual(['config.spacing']);
    // Five attempts a week apart outlive a run (P30D).
    expect(
      await refused(t, {
        name: 'bad',
        type: 're_engagement',
        config: { ...engage, spacing: 'P7D', maxAttempts: 5 },
      }),
    ).toEqual(['config.spacing']);
    expect(
      await refused(t, { name: 'bad', type: 're_engagement', config: { ...engage, inactiveFor: 'soon' } }),
    ).toEqual(['config.inactiveFor']);
    expect(await refused(t, { name: '   ', type: 're_engagement', config: engage })).toEqual(['name']);
    // A body that is no object (the fuzzer found it answered 500: AJV's discriminator let it through).
    for (const body of ['"fuzz"', '[]', 'null']) {
      expectError(
        await call(env.app, 'POST', '/journey-configs', { key: t.apiKey, body }),
        400,
        'INVALID_REQUEST',
      );
    }
    // An unknown type is reported by the body's discriminator (kernel/http/error-handler.ts), at `type`.
    const unknown = await call(env.app, 'POST', '/journey-configs', {
      key: t.apiKey,
      body: { name: 'bad', type: 'birthday', config: engage },
    });
    expectError(unknown, 400, 'INVALID_REQUEST');
    expect(unknown.body.error.details).toEqual([
      { field: 'type', issue: '"birthday" is not a kind this takes' },
    ]);
  });

  it('checks a PATCH’s config against the config’s own type', async () => {
    const t = await account();
    const made = await configOf(t, {
      name: 'Welcome',
      type: 'welcome_message',
      config: { on: 'first_inbound', message: { type: 'text', text: 'Hi' } },
    });
    const patch = (body: Record<string, unknown>) =>
      call(env.app, 'PATCH', `/journey-configs/${made.id}`, { key: t.apiKey, body });
    const wrongType = await patch({ config: { inactiveFor: 'P30D', on: 'first_inbound' } });
    expectError(wrongType, 400, 'INVALID_REQUEST');
    expect(wrongType.body.error.details.map((d: any) => d.field).sort()).toEqual(
      ['config.inactiveFor', 'config.message'].sort(),
    );
    const badDelay = await patch({
      config: { on: 'first_inbound', delay: 'P31D', message: { type: 'text', text: 'Hi' } },
    });
    expectError(badDelay, 400, 'INVALID_REQUEST');
    expect(badDelay.body.error.details).toEqual([{ field: 'config.delay', issue: 'must be at most P30D' }]);
    expectError(await patch({}), 400, 'INVALID_REQUEST');
    // Nothing changed: the journey is still on its first version.
    const journey = (await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey })).body;
    expect(journey.version).toBe(1);
  });
});

describe('journey configs: life', () => {
  const welcome = (t: SandboxTenant) =>
    configOf(t, {
      name: 'Welcome',
      type: 'welcome_message',
      config: { on: 'first_inbound', delay: 'P1D', message: { type: 'text', text: 'Hi' } },
    });

  it('pauses and resumes its journey, lists by type and status, and deletes both', async () => {
    const t = await account();
    const made = await welcome(t);
    const other = await configOf(t, {
      name: 'Reminders',
      type: 'appointment_reminder',
      config: {
        appointmentAt: 'trigger.data.at',
        remindBefore: ['P1D'],
        message: { templateName: 'reminder', templateLanguage: 'en_US' },
      },
    });
    const journeyStatus = async (id: string) =>
      (await call(env.app, 'GET', `/journeys/${id}`, { key: t.apiKey })).body.status;
    const patch = (body: Record<string, unknown>) =>
      call(env.app, 'PATCH', `/journey-configs/${made.id}`, { key: t.apiKey, body });

    // A run waits; pausing holds it and starts no other.
    await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: newNumber(), text: 'hello' },
    });
    const [run] = await runsOf(t, made.journeyId, (runs) => runs[0]?.status === 'waiting');
    const paused = await patch({ status: 'paused', name: 'Welcome (paused)' });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', name: 'Welcome (paused)' });
    expect(await journeyStatus(made.journeyId)).toBe('paused');
    const refused = await call(env.app, 'POST', `/journeys/${made.journeyId}/trigger`, {
      key: t.sandboxKey,
      body: { to: newNumber() },
    });
    expectError(refused, 409, 'CONFLICT');
    expect((await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey })).body).toMatchObject(
      {
        name: 'Welcome (paused)',
        version: 2,
      },
    );
    expect((await patch({ status: 'active' })).body.status).toBe('active');
    expect(await journeyStatus(made.journeyId)).toBe('published');

    const list = (query: Record<string, string>) =>
      call(env.app, 'GET', '/journey-configs', { key: t.apiKey, query }).then((r) =>
        r.body.data.map((c: any) => c.id),
      );
    expect(await list({})).toEqual([other.id, made.id]);
    expect(await list({ type: 'welcome_message' })).toEqual([made.id]);
    expect(await list({ status: 'paused' })).toEqual([]);
    expect((await call(env.app, 'GET', `/journey-configs/${made.id}`, { key: t.apiKey })).body).toMatchObject(
      {
        id: made.id,
        type: 'welcome_message',
        journeyId: made.journeyId,
        config: { on: 'first_inbound', delay: 'P1D', message: { type: 'text', text: 'Hi' } },
      },
    );

    const gone = await call(env.app, 'DELETE', `/journey-configs/${made.id}`, { key: t.apiKey });
    expect(gone.status, JSON.stringify(gone.body)).toBe(204);
    expectError(
      await call(env.app, 'GET', `/journey-configs/${made.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', `/journeys/${made.journeyId}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', `/journeys/${made.journeyId}/runs/${run.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect(await list({})).toEqual([other.id]);
  });

  it('keeps its journey read-only through /journeys (409 naming the config)', async () => {
    const t = await account();
    const made = await welcome(t);
    const j = `/journeys/${made.journeyId}`;
    for (const [method, path, body] of [
      ['PATCH', j, { name: 'mine now' }],
      ['POST', `${j}/pause`, undefined],
      ['POST', `${j}/archive`, undefined],
      ['DELETE', j, undefined],
    ] as const) {
      const res = await call(env.app, method, path, { key: t.apiKey, body });
      expectError(res, 409, 'CONFLICT');
      expect(res.body.error.message).toContain(made.id);
    }
    const journey = (await call(env.app, 'GET', j, { key: t.apiKey })).body;
    expect(journey).toMatchObject({ status: 'published', version: 1, name: 'Welcome' });
  });

  it('402 below Pro; another tenant sees nothing', async () => {
    const t = await account();
    const made = await welcome(t);
    const starter = await provision(env.app, env.partner.partnerKey, { planCode: 'starter' });
    expectError(
      await call(env.app, 'GET', '/journey-configs', {
        key: env.partner.partnerKey,
        accountId: starter.accountId,
      }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
    const b = await tenant(env.app, env.partner.partnerKey);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'theirs' }],
      ['DELETE', undefined],
    ] as const) {
      expectError(
        await call(env.app, method, `/journey-configs/${made.id}`, { key: b.apiKey, body }),
        404,
        'RESOURCE_NOT_FOUND',
      );
    }
    expect((await call(env.app, 'GET', '/journey-configs', { key: b.apiKey })).body.data).toEqual([]);
    expect((await call(env.app, 'GET', `/journey-configs/${made.id}`, { key: t.apiKey })).body.name).toBe(
      'Welcome',
    );
  });
});
