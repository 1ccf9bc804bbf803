// Voice campaigns on the sandbox, through HTTP: every field checked when saved; a campaign that
// calls its audience with retries on busy and no answer, counters that add up, contacts where it is
// night put off to their calling hours; pause and resume; cancel; 409 from a wrong state; its calls.
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({
  workers: true,
  config: { voiceSandboxStepMs: 20, voicePollMs: 20 },
});

/** A zone where the local hour now is in `hours` (some zone always is: offsets span a day). */
function zoneWhere(hours: (h: number) => boolean): string {
  const zones = Intl.supportedValuesOf('timeZone');
  const zone = zones.find(
    (z) =>
      hours(DateTime.now().setZone(z).hour) && hours(DateTime.now().plus({ minutes: 5 }).setZone(z).hour),
  );
  if (!zone) throw new Error('no zone found');
  return zone;
}
const DAY = zoneWhere((h) => h >= 10 && h < 19);
const NIGHT = zoneWhere((h) => h >= 23 || h < 6);

async function script(key: string): Promise<string> {
  const made = await call(env.app, 'POST', '/voice/scripts', {
    key,
    body: { name: 'Hi', type: 'tts', tts: { text: 'Hello' } },
  });
  await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key });
  return made.body.id;
}

async function contact(key: string, phone: string, tags: string[], timezone = DAY) {
  const res = await call(env.app, 'POST', '/contacts', {
    key,
    body: { phone, tags, attributes: { timezone } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

const get = (key: string, id: string) => call(env.app, 'GET', `/voice/campaigns/${id}`, { key });
const move = (key: string, id: string, what: string) =>
  call(env.app, 'POST', `/voice/campaigns/${id}/${what}`, { key });

describe('voice campaigns', () => {
  it('checks every field when saved', async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    const draft = await call(env.app, 'POST', '/voice/scripts', {
      key: t.apiKey,
      body: { name: 'd', type: 'tts', tts: { text: 'x' } },
    });
    const res = await call(env.app, 'POST', '/voice/campaigns', {
      key: t.apiKey,
      body: {
        name: ' ',
        scriptId: draft.body.id,
        audience: { contactIds: ['ctc_nope'] },
        schedule: { callingHours: { from: '07:00', until: '22:00' } },
        pacing: { callsPerSecond: 5 },
        retry: { after: 'P2D' },
      },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'audience.contactIds',
      'name',
      'pacing.callsPerSecond',
      'retry.after',
      'schedule.callingHours',
      'scriptId',
    ]);
    const pro = await tenant(env.app, env.partner.partnerKey, { planCode: 'pro', addons: ['api_access'] });
    expectError(
      await call(env.app, 'GET', '/voice/campaigns', { key: pro.apiKey }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
  });

  it('calls its audience, retries busy and unanswered calls, puts off contacts where it is night', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const scriptId = await script(t.apiKey);
    const tag = 'spring-reminders';
    const day = [
      await contact(t.apiKey, '+15005550001', [tag]),
      await contact(t.apiKey, '+15005550002', [tag]),
      await contact(t.apiKey, '+15005550003', [tag]),
      await contact(t.apiKey, '+15005550004', [tag]),
      await contact(t.apiKey, '+14155550101', [tag]),
    ];
    const night = await contact(t.apiKey, '+14155550199', [tag], NIGHT);
    await contact(t.apiKey, '+14155550198', ['other']);
    const made = await call(env.app, 'POST', '/voice/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Spring reminders',
        scriptId,
        audience: { tag },
        schedule: { callingHours: { from: '09:00', until: '20:00' } },
        pacing: { callsPerSecond: 5, maxConcurrent: 3 },
        retry: { on: ['busy', 'no_answer'], maxAttempts: 2, after: 'PT1S' },
        call: { ringTimeoutSeconds: 5 },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({
      status: 'draft',
      counters: { total: 0 },
      estimatedCost: { amount: '0.0000' },
    });
    expectError(await move(t.apiKey, made.body.id, 'pause'), 409, 'CONFLICT');
    const started = await move(t.apiKey, made.body.id, 'start');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({ status: 'running', counters: { total: 6 }, sandbox: false });
    expectError(await move(t.apiKey, made.body.id, 'start'), 409, 'CONFLICT');
    const settled = await eventually(
      () => get(t.apiKey, made.body.id),
      (r) => r.body.counters.queued === 1 && r.body.counters.inProgress === 0,
      20_000,
    );
    expect(settled.body.counters).toEqual({
      total: 6,
      queued: 1,
      inProgress: 0,
      completed: 2,
      answered: 2,
      busy: 1,
      noAnswer: 1,
      failed: 1,
      canceled: 0,
      skipped: 0,
    });
    expect(settled.body.status).toBe('running');
    const calls = (await call(env.app, 'GET', `/voice/campaigns/${made.body.id}/calls`, { key: t.apiKey }))
      .body.data as any[];
    const perContact = (id: string) => calls.filter((c) => c.contactId === id).length;
    // Busy and unanswered: called twice (maxAttempts 2); the others once; the night contact not yet.
    expect(day.map(perContact)).toEqual([1, 2, 2, 1, 1]);
    expect(perContact(night)).toBe(0);
    expect(calls.every((c) => c.campaignId === made.body.id)).toBe(true);
    const canceled = await move(t.apiKey, made.body.id, 'cancel');
    expect(canceled.body).toMatchObject({ status: 'canceled', counters: { queued: 0, canceled: 1 } });
    expectError(await move(t.apiKey, made.body.id, 'resume'), 409, 'CONFLICT');
    expect(
      (await call(env.app, 'DELETE', `/voice/campaigns/${made.body.id}`, { key: t.apiKey })).status,
    ).toBe(204);
  });

  it('pause places no new call until resumed; then it completes', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const scriptId = await script(t.apiKey);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await contact(t.apiKey, `+1415555020${i}`, []));
    const made = await call(env.app, 'POST', '/voice/campaigns', {
      key: t.apiKey,
      body: {
        name: 'One by one',
        scriptId,
        audience: { contactIds: ids },
        schedule: { callingHours: { from: '08:00', until: '21:00' } },
        pacing: { maxConcurrent: 1 },
      },
    });
    expect((await move(t.apiKey, made.body.id, 'start')).status).toBe(200);
    const first = await eventually(
      () => get(t.apiKey, made.body.id),
      (r) => r.body.counters.completed >= 1,
    );
    expect(first.body.counters.completed).toBeGreaterThanOrEqual(1);
    const paused = await move(t.apiKey, made.body.id, 'pause');
    expect(paused.body.status).toBe('paused');
    const callsNow = async () =>
      (await call(env.app, 'GET', `/voice/campaigns/${made.body.id}/calls`, { key: t.apiKey })).body.data
        .length;
    // What was placed ends; a call made but not yet placed waits, queued; nothing new starts.
    const statuses = async () =>
      (
        (await call(env.app, 'GET', `/voice/campaigns/${made.body.id}/calls`, { key: t.apiKey })).body
          .data as { status: string }[]
      ).map((c) => c.status);
    const settled = await eventually(statuses, (list) =>
      list.every(
        (s) => s === 'queued' || ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(s),
      ),
    );
    expect(settled.every((s) => s !== 'initiated' && s !== 'ringing' && s !== 'in_progress')).toBe(true);
    // A call the dialler was placing at the instant of the pause (still `queued`) ends as it will;
    // after that nothing moves and no call is made.
    await new Promise((r) => setTimeout(r, 300));
    const after = await eventually(statuses, (list) =>
      list.every(
        (s) => s === 'queued' || ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(s),
      ),
    );
    expect(after).toHaveLength(settled.length);
    const atPause = await get(t.apiKey, made.body.id);
    await new Promise((r) => setTimeout(r, 500));
    expect(await statuses()).toEqual(after);
    expect((await get(t.apiKey, made.body.id)).body.counters).toEqual(atPause.body.counters);
    expect((await move(t.apiKey, made.body.id, 'resume')).body.status).toBe('running');
    const done = await eventually(
      () => get(t.apiKey, made.body.id),
      (r) => r.body.status === 'completed',
      15_000,
    );
    expect(done.body).toMatchObject({
      status: 'completed',
      counters: { total: 4, completed: 4, answered: 4 },
      endedAt: expect.any(String),
    });
    expect(await callsNow()).toBe(4);
  });

  it('takes the campaign engine’s audiences: tags (all, any) and conditions over the contact', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const scriptId = await script(t.apiKey);
    const a = await contact(t.apiKey, '+14155550301', ['north', 'gold']);
    await contact(t.apiKey, '+14155550302', ['north']);
    const c = await contact(t.apiKey, '+14155550303', ['south', 'gold']);
    const fixed = async (audience: unknown) => {
      const made = await call(env.app, 'POST', '/voice/campaigns', {
        key: t.apiKey,
        body: { name: 'Audience', scriptId, audience, schedule: { startAt: '2099-01-01T00:00:00Z' } },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const started = await move(t.apiKey, made.body.id, 'start');
      expect(started.body.status).toBe('scheduled');
      return started.body.counters.total as number;
    };
    expect(await fixed({ tags: { all: ['gold'] } })).toBe(2);
    expect(await fixed({ tags: { all: ['north'], any: ['gold', 'silver'] } })).toBe(1);
    expect(
      await fixed({ conditions: { any: [{ field: 'contact.phone', op: 'eq', value: '+14155550303' }] } }),
    ).toBe(1);
    expect(await fixed({ contactIds: [a, c, a] })).toBe(2);
    const bad = await call(env.app, 'POST', '/voice/campaigns', {
      key: t.apiKey,
      body: {
        name: 'x',
        scriptId,
        audience: { conditions: { all: [{ field: 'time.localHour', op: 'gt', value: 3 }] } },
      },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'audience.conditions.all[0].field',
    ]);
  });
});
