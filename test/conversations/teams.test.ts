// Teams and auto-assignment through HTTP: a new conversation goes to the default team's next
// available member under capacity, or waits in its queue until someone has room (a close, a member
// coming online); a member going offline gives theirs back; rules and people route conversations to
// other teams; every change is one conversation.assigned saying why. And many at once: nobody over
// capacity, no conversation given twice.
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

const clock = new FakeClock(Date.parse('2026-11-02T09:00:00Z'));
const env = useMessagingApp({
  now: clock.now,
  config: { automationScanMs: 3_600_000, automationPollMs: 50 },
});
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

let numbers = 0;
const newNumber = () => `+1415555${String(7000 + numbers++).padStart(4, '0')}`;

const api = (t: SandboxTenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
  call(env.app, method, path, { key: t.apiKey, body });

async function customerWrites(t: SandboxTenant, from = newNumber(), text = 'Hello') {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { conversationId: string; contactId: string };
}

async function members(t: SandboxTenant, ...names: string[]) {
  const ids: string[] = [];
  for (const name of names) {
    const res = await api(t, 'POST', '/team/members', {
      name,
      email: `${name.toLowerCase()}-${numbers++}@example.com`,
      role: 'agent',
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

async function team(t: SandboxTenant, body: Record<string, unknown>) {
  const res = await api(t, 'POST', '/teams', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

const conversation = async (t: SandboxTenant, id: string) =>
  (await api(t, 'GET', `/conversations/${id}`)).body;
const availability = (t: SandboxTenant, memberId: string, value: string) =>
  api(t, 'PATCH', `/team/members/${memberId}`, { availability: value });

async function assignedEvents(t: SandboxTenant) {
  const res = await call(env.app, 'GET', '/events', {
    key: t.apiKey,
    query: { type: 'conversation.assigned', since: new Date(0).toISOString(), limit: '100' },
  });
  return (res.body.data as any[]).reverse().map((e) => e.data);
}

describe('teams', () => {
  it('are made, read, changed and deleted; members the account has, one name and one default', async () => {
    const t = await account();
    const [ann, bo] = await members(t, 'Ann', 'Bo');
    const support = await api(t, 'POST', '/teams', {
      name: 'Support',
      members: [ann, bo],
      assignment: { mode: 'least_busy', capacity: 5 },
      default: true,
    });
    expect(support.status, JSON.stringify(support.body)).toBe(201);
    expect(support.body).toMatchObject({
      id: expect.stringMatching(/^tem_/),
      name: 'Support',
      members: [ann, bo],
      assignment: { mode: 'least_busy', capacity: 5 },
      default: true,
      onOffline: 'requeue',
    });
    const again = await api(t, 'POST', '/teams', { name: 'Support' });
    expectError(again, 409, 'CONFLICT');
    expect(again.body.error.details[0].teamId).toBe(support.body.id);
    const stranger = await api(t, 'POST', '/teams', {
      name: 'Sales',
      members: [bo, 'usr_01jv0000000000000000000000'],
    });
    expectError(stranger, 400, 'INVALID_REQUEST');
    expect(stranger.body.error.details).toEqual([
      { field: 'members[1]', issue: 'is not a team member of this account' },
    ]);

    // The default moves to the team that takes it.
    const sales = await team(t, { name: 'Sales', members: [bo], default: true });
    expect((await api(t, 'GET', `/teams/${support.body.id}`)).body.default).toBe(false);
    expect((await api(t, 'GET', `/teams/${sales.id}`)).body).toMatchObject({
      default: true,
      assignment: { mode: 'round_robin', capacity: null },
    });
    const changed = await api(t, 'PATCH', `/teams/${support.body.id}`, {
      members: [bo, ann],
      assignment: { capacity: null },
      onOffline: 'keep',
    });
    expect(changed.body).toMatchObject({
      members: [bo, ann],
      assignment: { mode: 'least_busy', capacity: null },
      onOffline: 'keep',
    });
    expect((await api(t, 'GET', '/teams')).body.data.map((x: any) => x.name)).toEqual(['Sales', 'Support']);
    // A removed member leaves their teams.
    await api(t, 'DELETE', `/team/members/${ann}`);
    expect((await api(t, 'GET', `/teams/${support.body.id}`)).body.members).toEqual([bo]);

    const b = await account();
    expectError(await api(b, 'GET', `/teams/${sales.id}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await api(b, 'PATCH', `/teams/${sales.id}`, { name: 'Mine' }), 404, 'RESOURCE_NOT_FOUND');
    expect((await api(t, 'DELETE', `/teams/${sales.id}`)).status).toBe(204);
    expectError(await api(t, 'GET', `/teams/${sales.id}`), 404, 'RESOURCE_NOT_FOUND');
  });
});

describe('auto-assignment', () => {
  it('gives new conversations round robin under capacity; the rest wait until someone has room', async () => {
    const t = await account();
    const [ann, bo] = await members(t, 'Ann', 'Bo');
    const support = await team(t, {
      name: 'Support',
      members: [ann, bo],
      assignment: { capacity: 1 },
      default: true,
    });
    const first = await customerWrites(t);
    const second = await customerWrites(t);
    const third = await customerWrites(t);
    expect((await conversation(t, first.conversationId)).assigneeId).toBe(ann);
    expect((await conversation(t, second.conversationId)).assigneeId).toBe(bo);
    expect(await conversation(t, third.conversationId)).toMatchObject({
      assigneeId: null,
      teamId: support.id,
    });
    const queue = await api(t, 'GET', `/conversations?teamId=${support.id}&unassigned=true`);
    expect(queue.body.data.map((c: any) => c.id)).toEqual([third.conversationId]);

    // Ann closes hers: the waiting one is hers now.
    await api(t, 'POST', `/conversations/${first.conversationId}/close`);
    expect((await conversation(t, third.conversationId)).assigneeId).toBe(ann);
    const events = await assignedEvents(t);
    expect(events.map((e) => [e.id, e.assigneeId, e.reason, e.previousTeamId])).toEqual([
      [first.conversationId, ann, 'auto', null],
      [second.conversationId, bo, 'auto', null],
      [third.conversationId, null, 'auto', null],
      [third.conversationId, ann, 'auto', support.id],
    ]);
  });

  it('gives the least busy member the next one, and only members online', async () => {
    const t = await account();
    const [ann, bo, cy] = await members(t, 'Ann', 'Bo', 'Cy');
    await team(t, {
      name: 'Support',
      members: [ann, bo, cy],
      assignment: { mode: 'least_busy' },
      default: true,
    });
    await availability(t, cy, 'away');
    const given = [];
    for (let i = 0; i < 4; i++)
      given.push((await conversation(t, (await customerWrites(t)).conversationId)).assigneeId);
    expect(given).toEqual([ann, bo, ann, bo]);
  });

  it('takes back an offline member’s conversations to the queue (or leaves them, as the team says)', async () => {
    const t = await account();
    const [ann, bo] = await members(t, 'Ann', 'Bo');
    const requeuing = await team(t, {
      name: 'Support',
      members: [ann, bo],
      assignment: { capacity: 2 },
      default: true,
    });
    const one = await customerWrites(t); // Ann
    const two = await customerWrites(t); // Bo
    const three = await customerWrites(t); // Ann
    await availability(t, bo, 'offline');
    // Bo's went back to the queue and Ann took it, within her capacity of 2? She has 2: it waits.
    expect(await conversation(t, two.conversationId)).toMatchObject({
      assigneeId: null,
      teamId: requeuing.id,
    });
    await api(t, 'POST', `/conversations/${one.conversationId}/close`);
    expect((await conversation(t, two.conversationId)).assigneeId).toBe(ann);
    // Bo comes back: the next new one is his, and the queue is empty.
    await availability(t, bo, 'online');
    const four = await customerWrites(t);
    expect((await conversation(t, four.conversationId)).assigneeId).toBe(bo);
    expect((await conversation(t, three.conversationId)).assigneeId).toBe(ann);

    // A team that keeps them: Bo going offline leaves his conversation with him.
    await api(t, 'PATCH', `/teams/${requeuing.id}`, { onOffline: 'keep' });
    await availability(t, bo, 'offline');
    expect((await conversation(t, four.conversationId)).assigneeId).toBe(bo);
  });

  it('gives a reopened conversation again unless its member is online, and drains on the timed scan', async () => {
    const t = await account();
    const [ann, bo] = await members(t, 'Ann', 'Bo');
    const support = await team(t, { name: 'Support', members: [ann, bo], default: true });
    const first = await customerWrites(t); // Ann
    await api(t, 'POST', `/conversations/${first.conversationId}/close`);
    expect((await api(t, 'POST', `/conversations/${first.conversationId}/reopen`)).body.assigneeId).toBe(ann);
    await api(t, 'POST', `/conversations/${first.conversationId}/close`);
    await availability(t, ann, 'offline');
    expect((await api(t, 'POST', `/conversations/${first.conversationId}/reopen`)).body.assigneeId).toBe(bo);

    // Nobody online: it waits; a member added by PATCH takes it at once; the scan is the safety net.
    await availability(t, bo, 'offline');
    const waiting = await customerWrites(t);
    expect((await conversation(t, waiting.conversationId)).assigneeId).toBeNull();
    const [cy] = await members(t, 'Cy');
    await api(t, 'PATCH', `/teams/${support.id}`, { members: [ann, bo, cy] });
    expect((await conversation(t, waiting.conversationId)).assigneeId).toBe(cy);
    await availability(t, cy, 'offline');
    const later = await customerWrites(t);
    await env.tdb.db.query(`UPDATE team_members SET availability = 'online' WHERE id = $1`, [cy]);
    expect((await conversation(t, later.conversationId)).assigneeId).toBeNull();
    await env.app.ctx.automation.scan();
    expect((await conversation(t, later.conversationId)).assigneeId).toBe(cy);
  });

  it('routes to another team by a rule or by hand, saying why', async () => {
    const t = await account();
    const [ann, bo] = await members(t, 'Ann', 'Bo');
    await team(t, { name: 'Support', members: [ann], default: true });
    const billing = await team(t, { name: 'Billing', members: [bo] });
    const bad = await api(t, 'POST', '/rules', {
      name: 'nowhere',
      trigger: { event: 'message.received' },
      actions: [{ type: 'assign_team', teamId: 'tem_01jv0000000000000000000000' }],
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    const rule = await api(t, 'POST', '/rules', {
      name: 'invoices to billing',
      trigger: { event: 'message.received' },
      conditions: { all: [{ field: 'message.text', op: 'contains', value: 'invoice' }] },
      actions: [{ type: 'assign_team', teamId: billing.id }],
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const invoice = await customerWrites(t, newNumber(), 'Where is my invoice?');
    await eventually(
      () => conversation(t, invoice.conversationId),
      (c) => c.teamId === billing.id,
      10_000,
    );
    expect((await conversation(t, invoice.conversationId)).assigneeId).toBe(bo);
    const reasons = (await assignedEvents(t)).map((e) => [e.assigneeId, e.teamId, e.reason]);
    expect(reasons).toEqual([
      [ann, expect.any(String), 'auto'],
      [bo, billing.id, 'rule'],
    ]);

    // By hand: back to a team whose member is named, then out of any team.
    const other = await customerWrites(t);
    const moved = await api(t, 'POST', `/conversations/${other.conversationId}/assign`, {
      teamId: billing.id,
    });
    expect(moved.body).toMatchObject({ teamId: billing.id, assigneeId: bo });
    const out = await api(t, 'POST', `/conversations/${other.conversationId}/assign`, {
      teamId: null,
      assigneeId: ann,
    });
    expect(out.body).toMatchObject({ teamId: null, assigneeId: ann });
    expectError(
      await api(t, 'POST', `/conversations/${other.conversationId}/assign`, {
        teamId: 'tem_01jv0000000000000000000000',
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await api(t, 'POST', `/conversations/${other.conversationId}/assign`, {}),
      400,
      'INVALID_REQUEST',
    );
    expect((await assignedEvents(t)).slice(-2).map((e) => e.reason)).toEqual(['manual', 'manual']);
  });

  it('gives many new conversations at once exactly once each, nobody over capacity', async () => {
    const t = await account();
    const team_ = await members(t, 'Ann', 'Bo', 'Cy');
    await team(t, { name: 'Support', members: team_, assignment: { capacity: 5 }, default: true });
    const opened = await Promise.all(Array.from({ length: 20 }, () => customerWrites(t)));
    const views = await Promise.all(opened.map((o) => conversation(t, o.conversationId)));
    const load = new Map<string, number>();
    for (const v of views) if (v.assigneeId) load.set(v.assigneeId, (load.get(v.assigneeId) ?? 0) + 1);
    expect([...load.values()].sort()).toEqual([5, 5, 5]);
    expect(views.filter((v) => v.assigneeId === null)).toHaveLength(5);
    // One event per conversation: given (15) or queued (5).
    const events = await assignedEvents(t);
    expect(events).toHaveLength(20);
    expect(new Set(events.map((e) => e.id)).size).toBe(20);
  });
});
