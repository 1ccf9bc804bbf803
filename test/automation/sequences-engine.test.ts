// Sequences at work, through HTTP on a sandbox account, on a clock the test moves: steps sent in
// order (days of waiting skipped with /sandbox/wake), exits on reply, opt-out and a tag, versions
// kept by enrollments through an edit, a send window that defers across a weekend in another time
// zone, enrollment on a trigger event and by rules, past-due steps skipped, and a send that fails.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { FakeClock } from '../helpers/harness.ts';
import {
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const clock = new FakeClock(Date.parse('2026-11-23T10:00:00Z'));
const env = useMessagingApp({
  now: clock.now,
  config: { automationPollMs: 50, automationScanMs: 3_600_000 },
});

let numbers = 0;
const newNumber = () => `+1415555${String(8000 + numbers++).padStart(4, '0')}`;
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

async function published(t: SandboxTenant, body: Record<string, unknown>) {
  const made = await call(env.app, 'POST', '/sequences', { key: t.apiKey, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/sequences/${made.body.id}/publish`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; version: number };
}

async function inbound(t: SandboxTenant, from: string, text: string) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; contactId: string };
}

async function enrol(t: SandboxTenant, sequenceId: string, contactId: string) {
  const res = await call(env.app, 'POST', `/sequences/${sequenceId}/enrollments`, {
    key: t.sandboxKey,
    body: { contactId },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; nextRunAt: string; sequenceVersion: number };
}

const enrollmentWhen = (t: SandboxTenant, sequenceId: string, id: string, done: (e: any) => boolean) =>
  eventually(
    () => call(env.app, 'GET', `/sequences/${sequenceId}/enrollments/${id}`, { key: t.apiKey }),
    (r) => r.status === 200 && done(r.body),
  ).then((r) => r.body);

const wake = (t: SandboxTenant, enrollmentId: string, key = t.sandboxKey) =>
  call(env.app, 'POST', '/sandbox/wake', { key, body: { enrollmentId } });

const textOf = async (t: SandboxTenant, messageId: string) =>
  (await call(env.app, 'GET', `/messages/${messageId}`, { key: t.apiKey })).body.text;

/** Wakes the enrollment step by step (from step `first`) until it ends; answers it. */
async function wakeThrough(t: SandboxTenant, sequenceId: string, id: string, steps: number, first = 0) {
  for (let i = first; i < steps; i++) {
    expect((await wake(t, id)).status).toBe(200);
    await enrollmentWhen(t, sequenceId, id, (e) => e.steps[i].status !== 'pending');
  }
  return enrollmentWhen(t, sequenceId, id, (e) => e.status !== 'active');
}

describe('sequences at work', () => {
  it('sends a three-step sequence with day-long delays, each step once, woken through the sandbox', async () => {
    const t = await account();
    const seq = await published(t, {
      name: 'Trial',
      steps: [
        {
          id: 'day1',
          delay: { after: 'P1D' },
          message: { type: 'text', text: 'Day 1 for {{ contact.name }}' },
        },
        { id: 'day3', delay: { after: 'P2D' }, message: { type: 'text', text: 'Day 3' } },
        { id: 'day6', delay: { after: 'P3D' }, message: { type: 'text', text: 'Day 6' } },
      ],
    });
    const { receiver } = await env.subscribe(t.apiKey, ['enrollment.completed']);
    const from = newNumber();
    const hello = await inbound(t, from, 'hi');
    await call(env.app, 'PATCH', `/contacts/${hello.contactId}`, { key: t.apiKey, body: { name: 'Ann' } });
    const e = await enrol(t, seq.id, hello.contactId);
    expect(Date.parse(e.nextRunAt)).toBe(clock.now().getTime() + DAY);
    expectError(await wake(t, e.id, t.apiKey), 403, 'FORBIDDEN');

    expect((await wake(t, e.id)).status).toBe(200);
    const afterFirst = await enrollmentWhen(t, seq.id, e.id, (x) => x.steps[0].status === 'sent');
    // The next wait counts from the step just sent.
    expect(afterFirst).toMatchObject({ currentStepId: 'day3', status: 'active' });
    expect(Date.parse(afterFirst.nextRunAt)).toBe(clock.now().getTime() + 2 * DAY);

    const done = await wakeThrough(t, seq.id, e.id, 3, 1);
    expect(done).toMatchObject({ status: 'completed', currentStepId: null, nextRunAt: null });
    expect(done.steps.map((s: any) => [s.stepId, s.status])).toEqual([
      ['day1', 'sent'],
      ['day3', 'sent'],
      ['day6', 'sent'],
    ]);
    expect(await Promise.all(done.steps.map((s: any) => textOf(t, s.messageId)))).toEqual([
      'Day 1 for Ann',
      'Day 3',
      'Day 6',
    ]);
    // Each step once: the contact got exactly the three.
    const sent = await call(env.app, 'GET', '/messages', {
      key: t.apiKey,
      query: { to: from, direction: 'outbound' },
    });
    expect(sent.body.data, JSON.stringify(sent.body)).toHaveLength(3);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery!.json).toMatchObject({
      type: 'enrollment.completed',
      data: { id: e.id, status: 'completed' },
    });
    expectError(await wake(t, e.id), 409, 'CONFLICT');
  });

  it('sends a step without a delay, or with PT0S, at once: on enrolment and right after the step before', async () => {
    const t = await account();
    const made = await call(env.app, 'POST', '/sequences', {
      key: t.apiKey,
      body: {
        name: 'Welcome drip',
        steps: [
          { id: 'hello', message: { type: 'text', text: 'Welcome!' } },
          { id: 'tips', delay: { after: 'PT0S' }, message: { type: 'text', text: 'Tip 1' } },
          { id: 'later', delay: { after: 'P1D' }, message: { type: 'text', text: 'Tip 2' } },
        ],
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // An omitted delay is stored as what it means.
    expect(made.body.steps.map((s: any) => s.delay)).toEqual([
      { after: 'PT0S' },
      { after: 'PT0S' },
      { after: 'P1D' },
    ]);
    expect(
      (await call(env.app, 'POST', `/sequences/${made.body.id}/publish`, { key: t.apiKey })).status,
    ).toBe(200);
    const ann = (await inbound(t, newNumber(), 'hi')).contactId;
    const e = await enrol(t, made.body.id, ann);
    expect(Date.parse(e.nextRunAt)).toBe(clock.now().getTime());
    // Nothing woken: the first two steps go on their own, the third waits its day.
    const after = await enrollmentWhen(t, made.body.id, e.id, (x) => x.steps[1].status !== 'pending');
    expect(after).toMatchObject({ status: 'active', currentStepId: 'later' });
    expect(after.steps.map((s: any) => s.status)).toEqual(['sent', 'sent', 'pending']);
    expect(Date.parse(after.nextRunAt)).toBe(clock.now().getTime() + DAY);
    expect(await Promise.all(after.steps.slice(0, 2).map((s: any) => textOf(t, s.messageId)))).toEqual([
      'Welcome!',
      'Tip 1',
    ]);
  });

  it('exits on a reply, an opt-out and a tag, and says so', async () => {
    const t = await account();
    const seq = await published(t, {
      name: 'Nurture',
      steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Still there?' } }],
      exit: { onTagAdded: 'Customer' },
    });
    const { receiver } = await env.subscribe(t.apiKey, ['enrollment.exited']);
    const annNumber = newNumber();
    const ann = (await inbound(t, annNumber, 'hi')).contactId;
    const bo = (
      await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: newNumber(), optedIn: true } })
    ).body.id;
    const cy = (await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: newNumber() } }))
      .body.id;
    const [a, b, c] = [await enrol(t, seq.id, ann), await enrol(t, seq.id, bo), await enrol(t, seq.id, cy)];

    // A change that is not an opt-out (cy was never opted in) ends nothing.
    await call(env.app, 'PATCH', `/contacts/${cy}`, { key: t.apiKey, body: { name: 'Cy' } });
    clock.advance(1000);
    await inbound(t, annNumber, 'What is this about?');
    await call(env.app, 'PATCH', `/contacts/${bo}`, { key: t.apiKey, body: { optedIn: false } });
    await call(env.app, 'POST', `/contacts/${cy}/tags`, { key: t.apiKey, body: { tags: ['customer'] } });

    for (const [e, reason] of [
      [a, 'replied'],
      [b, 'opted_out'],
      [c, 'tag_added'],
    ] as const) {
      const ended = await enrollmentWhen(t, seq.id, e.id, (x) => x.status !== 'active');
      expect(ended, reason).toMatchObject({
        status: 'exited',
        exitReason: reason,
        steps: [{ status: 'pending' }],
      });
    }
    const events = await receiver.waitFor(3);
    expect(events.map((d) => d.json.data.exitReason).sort()).toEqual(['opted_out', 'replied', 'tag_added']);
  });

  it('keeps each enrollment on its version through an edit', async () => {
    const t = await account();
    const step = (text: string) => ({ delay: { after: 'P1D' }, message: { type: 'text', text } });
    const seq = await published(t, {
      name: 'Versions',
      steps: [step('v1 a'), step('v1 b')],
      exit: { onReply: false },
    });
    const ann = (await inbound(t, newNumber(), 'hi')).contactId;
    const first = await enrol(t, seq.id, ann);
    const edited = await call(env.app, 'PATCH', `/sequences/${seq.id}`, {
      key: t.apiKey,
      body: { steps: [step('v2 a'), step('v2 b'), step('v2 c')] },
    });
    expect(edited.body).toMatchObject({ version: 2, status: 'active' });
    const bo = (await inbound(t, newNumber(), 'hi')).contactId;
    const second = await enrol(t, seq.id, bo);
    expect([first.sequenceVersion, second.sequenceVersion]).toEqual([1, 2]);

    const a = await wakeThrough(t, seq.id, first.id, 2);
    const b = await wakeThrough(t, seq.id, second.id, 3);
    expect(a.status).toBe('completed');
    expect(b.status).toBe('completed');
    expect(await Promise.all(a.steps.map((s: any) => textOf(t, s.messageId)))).toEqual(['v1 a', 'v1 b']);
    expect(await Promise.all(b.steps.map((s: any) => textOf(t, s.messageId)))).toEqual([
      'v2 a',
      'v2 b',
      'v2 c',
    ]);
  });

  it('defers a step due on a weekend to the next opening in the contact’s zone; waking ends the wait, not the window', async () => {
    const t = await account();
    clock.set(new Date('2026-11-27T20:00:00Z')); // Friday 20:00 UTC: Saturday 05:00 in Tokyo
    const seq = await published(t, {
      name: 'Digest',
      steps: [{ delay: { after: 'PT1H' }, message: { type: 'text', text: 'Your weekly digest' } }],
      exit: { onReply: false },
      sendWindow: {
        timezone: 'contact',
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        from: '09:00',
        until: '17:00',
      },
    });
    const from = newNumber();
    const contact = (await inbound(t, from, 'hi')).contactId;
    await call(env.app, 'PATCH', `/contacts/${contact}`, {
      key: t.apiKey,
      body: { attributes: { timezone: 'Asia/Tokyo' } },
    });
    const e = await enrol(t, seq.id, contact);
    // Due Saturday 06:00 in Tokyo: sent Monday 09:00 there, Monday 00:00 UTC.
    expect(e.nextRunAt).toBe('2026-11-30T00:00:00.000Z');
    expect((await wake(t, e.id)).status).toBe(200);
    const waiting = await enrollmentWhen(t, seq.id, e.id, (x) => x.nextRunAt === '2026-11-30T00:00:00.000Z');
    expect(waiting.steps[0].status).toBe('pending');

    // The customer writes in late on Sunday (the service window opens again), before the step is due.
    clock.set(new Date('2026-11-29T23:59:00Z'));
    await inbound(t, from, 'good evening');
    clock.set(new Date('2026-11-30T00:00:05Z'));
    const sent = await enrollmentWhen(t, seq.id, e.id, (x) => x.status !== 'active');
    expect(sent).toMatchObject({
      status: 'completed',
      steps: [{ status: 'sent', at: '2026-11-30T00:00:05.000Z' }],
    });
  });

  it('enrols on its trigger event as reenroll allows, and through rules; a rule ends enrollments', async () => {
    const t = await account();
    const join = await published(t, {
      name: 'Join',
      steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Welcome aboard' } }],
      enrollment: {
        trigger: {
          event: 'message.received',
          conditions: {
            all: [
              { field: 'message.text', op: 'matches_keyword', value: { keywords: ['join'], mode: 'exact' } },
            ],
          },
        },
      },
      exit: { onReply: false },
    });
    const vip = await published(t, {
      name: 'VIP',
      steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Hello VIP' } }],
    });
    for (const body of [
      {
        name: 'VIPs get the VIP sequence',
        trigger: { event: 'contact.tagged' },
        conditions: { all: [{ field: 'event.data.tagsAdded', op: 'contains', value: 'vip' }] },
        actions: [{ type: 'enroll_in_sequence', sequenceId: vip.id }],
      },
      {
        name: 'Done ends them all',
        trigger: { event: 'contact.tagged' },
        conditions: { all: [{ field: 'event.data.tagsAdded', op: 'contains', value: 'done' }] },
        actions: [{ type: 'exit_sequences' }],
      },
    ]) {
      const res = await call(env.app, 'POST', '/rules', { key: t.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const from = newNumber();
    const contact = (await inbound(t, from, 'hello')).contactId;
    await inbound(t, from, 'JOIN');
    await inbound(t, from, 'join');
    const listOf = (seqId: string) =>
      call(env.app, 'GET', `/sequences/${seqId}/enrollments`, { key: t.apiKey }).then((r) => r.body.data);
    const joined = (
      await eventually(
        () => listOf(join.id),
        (d) => d.length > 0,
      )
    )[0];
    expect(joined).toMatchObject({ contactId: contact, status: 'active' });

    await call(env.app, 'POST', `/contacts/${contact}/tags`, { key: t.apiKey, body: { tags: ['vip'] } });
    const [inVip] = await eventually(
      () => listOf(vip.id),
      (d) => d.length > 0,
    );
    expect(inVip).toMatchObject({ contactId: contact, status: 'active' });
    // The third message was processed before the tag: `never` kept it at one enrollment.
    expect(await listOf(join.id)).toHaveLength(1);

    await call(env.app, 'POST', `/contacts/${contact}/tags`, { key: t.apiKey, body: { tags: ['done'] } });
    for (const [seqId, id] of [
      [join.id, joined.id],
      [vip.id, inVip.id],
    ]) {
      expect(await enrollmentWhen(t, seqId, id, (x) => x.status !== 'active')).toMatchObject({
        status: 'exited',
        exitReason: 'manual',
      });
    }
  });

  it('skips a step more than an hour overdue, sends nothing while paused, and fails a send it cannot make', async () => {
    const t = await account();
    clock.set(new Date('2026-12-01T10:00:00Z'));
    const seq = await published(t, {
      name: 'Overdue',
      steps: [
        { id: 'one', delay: { after: 'P1D' }, message: { type: 'text', text: 'One' } },
        { id: 'two', delay: { after: 'P1D' }, message: { type: 'text', text: 'Two' } },
      ],
      exit: { onReply: false },
    });
    const contact = (await inbound(t, newNumber(), 'hi')).contactId;
    const e = await enrol(t, seq.id, contact);
    clock.advance(DAY + 2 * HOUR); // the service was down when step one was due
    const skipped = await enrollmentWhen(t, seq.id, e.id, (x) => x.steps[0].status !== 'pending');
    expect(skipped.steps[0]).toMatchObject({ status: 'skipped', reason: 'past_due' });
    expect(Date.parse(skipped.nextRunAt)).toBe(clock.now().getTime() + DAY);

    await call(env.app, 'POST', `/sequences/${seq.id}/pause`, { key: t.apiKey });
    clock.advance(DAY + 30 * 60_000);
    await env.app.ctx.automation.runDue();
    expect((await enrollmentWhen(t, seq.id, e.id, () => true)).steps[1].status).toBe('pending');
    // Resumed within the hour: sent, except that the customer service window closed two days ago.
    await call(env.app, 'POST', `/sequences/${seq.id}/resume`, { key: t.apiKey });
    const failed = await enrollmentWhen(t, seq.id, e.id, (x) => x.status !== 'active');
    expect(failed).toMatchObject({ status: 'failed', steps: [{ status: 'skipped' }, { status: 'failed' }] });
    expect(failed.reason).toMatch(/window/i);
  });
});
