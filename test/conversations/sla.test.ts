// SLA policies through HTTP, on a clock the test moves: the policies and their checks, the due times
// a new conversation gets (the first policy that holds, by label or team, around the clock or in
// business hours), a first reply in time meeting its target, the breach scan telling each missed
// target once (two scans at once: one tells it), a late reply or close still a breach, a rule on
// conversation.sla_breached, a reopen starting the clock again, the due-first inbox order.
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

const MINUTE = 60_000;
// Monday 2 November 2026, 10:00 in Berlin (09:00 UTC): open.
const START = Date.parse('2026-11-02T09:00:00Z');
const clock = new FakeClock(START);
const env = useMessagingApp({
  now: clock.now,
  config: { automationScanMs: 3_600_000, automationPollMs: 50 },
});
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);
const scan = () => env.app.ctx.automation.scan();

let numbers = 0;
const newNumber = () => `+1415555${String(7000 + numbers++).padStart(4, '0')}`;

async function api(
  t: SandboxTenant,
  method: Parameters<typeof call>[1],
  path: string,
  body?: unknown,
  query?: Record<string, string>,
) {
  return call(env.app, method, path, { key: t.apiKey, body, query });
}

async function customerWrites(t: SandboxTenant, from: string, text = 'Hello?') {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; conversationId: string; contactId: string };
}

const conversation = async (t: SandboxTenant, id: string) =>
  (await api(t, 'GET', `/conversations/${id}`)).body;

async function breaches(t: SandboxTenant) {
  const res = await api(t, 'GET', '/events', undefined, { type: 'conversation.sla_breached', limit: '100' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as any[]).map((e) => ({ id: e.data.id, target: e.data.target, dueAt: e.data.dueAt }));
}

const at = (ms: number) => new Date(ms).toISOString();

describe('SLA policies', () => {
  it('are made, listed in order, changed and deleted; every fault named', async () => {
    const t = await account();
    const bad = await api(t, 'POST', '/sla-policies', {
      name: ' ',
      labels: ['no!'],
      teamIds: ['tem_01jv4e2k7qf3x8m2n5p6r9s0tb'],
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect((bad.body.error.details as any[]).map((d) => d.field)).toEqual([
      'name',
      'firstResponseMinutes',
      'labels[0]',
      'teamIds[0]',
    ]);
    expectError(
      await api(t, 'POST', '/sla-policies', { name: 'x', resolutionMinutes: 43_201 }),
      400,
      'INVALID_REQUEST',
    );

    const general = await api(t, 'POST', '/sla-policies', {
      name: 'General',
      firstResponseMinutes: 60,
      position: 10,
    });
    expect(general.status, JSON.stringify(general.body)).toBe(201);
    expect(general.body).toMatchObject({
      name: 'General',
      firstResponseMinutes: 60,
      resolutionMinutes: null,
      businessHours: false,
      labels: [],
      teamIds: [],
      position: 10,
    });
    expect(general.body.id).toMatch(/^sla_/);
    const vip = await api(t, 'POST', '/sla-policies', {
      name: 'VIP',
      firstResponseMinutes: 5,
      labels: ['VIP'],
    });
    expect(vip.body.labels).toEqual(['vip']);
    const taken = await api(t, 'POST', '/sla-policies', { name: 'VIP', resolutionMinutes: 5 });
    expectError(taken, 409, 'CONFLICT');
    expect(taken.body.error.details[0].policyId).toBe(vip.body.id);

    const list = await api(t, 'GET', '/sla-policies');
    expect(list.body.data.map((p: any) => p.name)).toEqual(['VIP', 'General']);
    const changed = await api(t, 'PATCH', `/sla-policies/${general.body.id}`, { resolutionMinutes: 480 });
    expect(changed.body).toMatchObject({ firstResponseMinutes: 60, resolutionMinutes: 480 });
    expectError(
      await api(t, 'PATCH', `/sla-policies/${general.body.id}`, {
        firstResponseMinutes: null,
        resolutionMinutes: null,
      }),
      400,
      'INVALID_REQUEST',
    );
    expect((await api(t, 'DELETE', `/sla-policies/${vip.body.id}`)).status).toBe(204);
    expectError(await api(t, 'GET', `/sla-policies/${vip.body.id}`), 404, 'RESOURCE_NOT_FOUND');
  });

  it('give a conversation due times; a reply in time meets its target, a miss is told once', async () => {
    clock.set(new Date(START));
    const t = await account();
    await api(t, 'POST', '/sla-policies', {
      name: 'Standard',
      firstResponseMinutes: 30,
      resolutionMinutes: 120,
    });
    const quick = await customerWrites(t, newNumber());
    const slow = await customerWrites(t, newNumber());
    const opened = await conversation(t, quick.conversationId);
    expect(opened.sla).toMatchObject({
      startedAt: at(START),
      firstResponseDueAt: at(START + 30 * MINUTE),
      firstResponseAt: null,
      resolutionDueAt: at(START + 120 * MINUTE),
      nextDueAt: at(START + 30 * MINUTE),
      firstResponseBreachedAt: null,
    });

    // The business answers one in time: the next due time is the resolution's.
    clock.advance(10 * MINUTE);
    const reply = await api(t, 'POST', `/conversations/${quick.conversationId}/messages`, {
      type: 'text',
      text: 'On it',
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    expect((await conversation(t, quick.conversationId)).sla).toMatchObject({
      firstResponseAt: at(START + 10 * MINUTE),
      nextDueAt: at(START + 120 * MINUTE),
    });

    // Past the first due time: the slow one is missed, told once though two scans look at once.
    clock.advance(25 * MINUTE);
    await Promise.all([scan(), scan()]);
    await scan();
    expect(await breaches(t)).toEqual([
      { id: slow.conversationId, target: 'first_response', dueAt: at(START + 30 * MINUTE) },
    ]);
    expect((await conversation(t, slow.conversationId)).sla).toMatchObject({
      firstResponseBreachedAt: at(START + 35 * MINUTE),
      nextDueAt: at(START + 120 * MINUTE),
    });

    // Closing the quick one in time meets its resolution; the slow one's passes open: missed.
    await api(t, 'POST', `/conversations/${quick.conversationId}/close`);
    clock.advance(100 * MINUTE);
    await scan();
    expect((await breaches(t)).map((b) => [b.id, b.target])).toEqual([
      [slow.conversationId, 'resolution'],
      [slow.conversationId, 'first_response'],
    ]);
    expect((await conversation(t, quick.conversationId)).sla).toMatchObject({
      firstResponseBreachedAt: null,
      resolutionBreachedAt: null,
      nextDueAt: null,
    });
    await scan();
    expect(await breaches(t)).toHaveLength(2);
  });

  it('count a late reply or a late close missed, even when the scan comes after', async () => {
    clock.set(new Date(START));
    const t = await account();
    await api(t, 'POST', '/sla-policies', { name: 'Tight', firstResponseMinutes: 5, resolutionMinutes: 10 });
    const c = await customerWrites(t, newNumber());
    clock.advance(7 * MINUTE);
    await api(t, 'POST', `/conversations/${c.conversationId}/messages`, {
      type: 'text',
      text: 'Sorry for the wait',
    });
    clock.advance(5 * MINUTE);
    await api(t, 'POST', `/conversations/${c.conversationId}/close`);
    await scan();
    expect((await breaches(t)).map((b) => b.target).sort()).toEqual(['first_response', 'resolution']);
  });

  it('follow labels and teams (the first that holds, lowest position first), and business hours', async () => {
    clock.set(new Date('2026-11-02T15:30:00Z')); // 16:30 in Berlin, an hour before closing
    const t = await account();
    await api(t, 'PUT', '/account/business-hours', {
      timezone: 'Europe/Berlin',
      weekly: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, from: '09:00', until: '17:30' })),
    });
    const team = await api(t, 'POST', '/teams', { name: 'Billing', assignment: { mode: 'manual' } });
    await api(t, 'POST', '/sla-policies', { name: 'Everyone', firstResponseMinutes: 240, position: 20 });
    const billing = await api(t, 'POST', '/sla-policies', {
      name: 'Billing hours',
      firstResponseMinutes: 120,
      businessHours: true,
      teamIds: [team.body.id],
      position: 10,
    });
    const vip = await api(t, 'POST', '/sla-policies', {
      name: 'VIP',
      firstResponseMinutes: 15,
      labels: ['vip'],
    });
    const c = await customerWrites(t, newNumber());
    expect((await conversation(t, c.conversationId)).sla.firstResponseDueAt).toBe('2026-11-02T19:30:00.000Z');

    // Moved to the team: two open hours, one today and one from 9:00 tomorrow.
    const moved = await api(t, 'POST', `/conversations/${c.conversationId}/assign`, { teamId: team.body.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.sla).toMatchObject({
      policyId: billing.body.id,
      firstResponseDueAt: '2026-11-03T09:00:00.000Z',
    });

    // Labelled vip: VIP comes first (position 0), around the clock from the conversation's start.
    const labelled = await api(t, 'POST', `/conversations/${c.conversationId}/labels`, { labels: ['vip'] });
    expect(labelled.body.sla).toMatchObject({
      policyId: vip.body.id,
      firstResponseDueAt: '2026-11-02T15:45:00.000Z',
    });
    const unlabelled = await api(t, 'DELETE', `/conversations/${c.conversationId}/labels/vip`);
    expect(unlabelled.body.sla.policyId).toBe(billing.body.id);

    // A deleted policy's conversations keep no due times (none missed: no SLA shown).
    expect((await api(t, 'DELETE', `/sla-policies/${billing.body.id}`)).status).toBe(204);
    expect((await conversation(t, c.conversationId)).sla).toBeNull();
  });

  it('fire rules on a breach; a reopen starts the clock again; the inbox lists the soonest due first', async () => {
    clock.set(new Date(START));
    const t = await account();
    const rule = await api(t, 'POST', '/rules', {
      name: 'escalate',
      trigger: { event: 'conversation.sla_breached' },
      actions: [{ type: 'add_label', label: 'escalated' }],
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    await api(t, 'POST', '/sla-policies', { name: 'Standard', firstResponseMinutes: 30, position: 10 });
    const late = await customerWrites(t, newNumber());
    clock.advance(10 * MINUTE);
    const later = await customerWrites(t, newNumber());
    await api(t, 'POST', '/sla-policies', { name: 'Quick', firstResponseMinutes: 5, labels: ['urgent'] });
    await api(t, 'POST', `/conversations/${later.conversationId}/labels`, { labels: ['urgent'] });
    const untimed = await customerWrites(t, newNumber());

    // Due first: later (Quick: START+15), late (START+30), untimed (START+40).
    const due = await api(t, 'GET', '/conversations', undefined, {
      status: 'open',
      order: 'sla_due',
      limit: '2',
    });
    expect(due.status, JSON.stringify(due.body)).toBe(200);
    expect(due.body.data.map((c: any) => c.id)).toEqual([later.conversationId, late.conversationId]);
    const rest = await api(t, 'GET', '/conversations', undefined, {
      status: 'open',
      order: 'sla_due',
      cursor: due.body.nextCursor,
    });
    expect(rest.body.data.map((c: any) => c.id)).toEqual([untimed.conversationId]);
    expectError(
      await api(t, 'GET', '/conversations', undefined, { order: 'sla_due' }),
      400,
      'INVALID_REQUEST',
    );
    // A cursor of one order is refused by the other.
    expectError(
      await api(t, 'GET', '/conversations', undefined, { status: 'open', cursor: due.body.nextCursor }),
      400,
      'INVALID_REQUEST',
    );

    clock.advance(25 * MINUTE);
    await scan();
    await eventually(
      async () => (await conversation(t, late.conversationId)).labels,
      (labels: string[]) => labels.includes('escalated'),
      10_000,
    );
    expect((await conversation(t, later.conversationId)).labels).toEqual(['urgent', 'escalated']);

    // Closed and reopened: a new clock, due 30 minutes after the reopen; the old breach stays.
    await api(t, 'POST', `/conversations/${late.conversationId}/close`);
    const reopened = await api(t, 'POST', `/conversations/${late.conversationId}/reopen`);
    expect(reopened.body.sla).toMatchObject({
      startedAt: at(START + 35 * MINUTE),
      firstResponseAt: null,
      firstResponseDueAt: at(START + 65 * MINUTE),
      firstResponseBreachedAt: at(START + 35 * MINUTE),
      nextDueAt: null,
    });
  });
});
