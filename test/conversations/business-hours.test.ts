// Business hours through HTTP, on a clock the test moves: the setting and its checks, the away
// message a customer who writes at night gets once per conversation per `awayEvery`, the greeting a
// conversation's first message gets in the day, and the rule condition time.businessHours.
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
// Monday 2 November 2026, 21:00 in Berlin (20:00 UTC): closed.
const clock = new FakeClock(Date.parse('2026-11-02T20:00:00Z'));
const env = useMessagingApp({
  now: clock.now,
  config: { automationScanMs: 3_600_000, automationPollMs: 50 },
});
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

let numbers = 0;
const newNumber = () => `+1415555${String(8000 + numbers++).padStart(4, '0')}`;

const HOURS = {
  timezone: 'Europe/Berlin',
  weekly: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, from: '09:00', until: '17:30' })),
  holidays: ['2026-12-25'],
  awayMessage: { text: 'We are closed: we answer from 9:00 tomorrow.' },
  awayEvery: 'PT4H',
  greeting: { text: 'Hello! An agent is with you shortly.' },
};

async function customerWrites(t: SandboxTenant, from: string, text = 'Hello?') {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; conversationId: string; contactId: string };
}

/** The business's messages in the conversation, oldest first. */
async function replies(t: SandboxTenant, conversationId: string): Promise<string[]> {
  const res = await call(env.app, 'GET', `/conversations/${conversationId}/messages`, {
    key: t.apiKey,
    query: { limit: '100' },
  });
  return (res.body.data as any[])
    .filter((m) => m.direction === 'outbound')
    .reverse()
    .map((m) => m.text);
}

/** Waits until the automation worker has taken every event it was given (nothing left in its inbox). */
async function settled() {
  await eventually(
    async () =>
      (await env.tdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM automation_inbox')).rows[0]!.n,
    (n) => n === 0,
    10_000,
  );
}

describe('business hours', () => {
  it('are off until set; set whole, every fault named', async () => {
    const t = await account();
    const off = await call(env.app, 'GET', '/account/business-hours', { key: t.apiKey });
    expect(off.body).toMatchObject({ enabled: false, openNow: true, awayMessage: null, updatedAt: null });
    const bad = await call(env.app, 'PUT', '/account/business-hours', {
      key: t.apiKey,
      body: {
        timezone: 'Mars/Olympus',
        weekly: [{ day: 'mon', from: '18:00', until: '09:00' }],
        holidays: ['2026-13-01'],
        awayEvery: 'PT10S',
      },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    const fields = (bad.body.error.details as any[]).map((d) => d.field);
    expect(fields).toEqual(['timezone', 'weekly[0].until', 'holidays[0]', 'awayEvery']);
    const set = await call(env.app, 'PUT', '/account/business-hours', { key: t.apiKey, body: HOURS });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({ ...HOURS, enabled: true, openNow: false });
    const read = await call(env.app, 'GET', '/account/business-hours', { key: t.apiKey });
    expect(read.body).toEqual(set.body);
    const turnedOff = await call(env.app, 'PUT', '/account/business-hours', {
      key: t.apiKey,
      body: { enabled: false },
    });
    expect(turnedOff.body).toMatchObject({ enabled: false, openNow: true });
  });

  it('answer a customer who writes at night once per awayEvery, and greet a conversation in the day', async () => {
    const t = await account();
    await call(env.app, 'PUT', '/account/business-hours', { key: t.apiKey, body: HOURS });
    const phone = newNumber();
    const first = await customerWrites(t, phone, 'Is anyone there?');
    await customerWrites(t, phone, 'Hello??');
    await settled();
    expect(await replies(t, first.conversationId)).toEqual([HOURS.awayMessage.text]);
    const [away] = (
      await call(env.app, 'GET', `/conversations/${first.conversationId}/messages`, { key: t.apiKey })
    ).body.data.filter((m: any) => m.direction === 'outbound');
    expect(away).toMatchObject({ source: 'automation', type: 'text' });

    // Four hours later, still closed: once more.
    clock.advance(4 * HOUR);
    await customerWrites(t, phone, 'Still nobody?');
    await settled();
    expect(await replies(t, first.conversationId)).toEqual([HOURS.awayMessage.text, HOURS.awayMessage.text]);

    // Tuesday 10:00 in Berlin: open. The same conversation is not greeted; a new one is, once.
    clock.set(new Date('2026-11-03T09:00:00Z'));
    await customerWrites(t, phone, 'Good morning');
    const other = newNumber();
    const fresh = await customerWrites(t, other, 'Hi, a question');
    await customerWrites(t, other, 'About my order');
    await settled();
    expect(await replies(t, first.conversationId)).toHaveLength(2);
    expect(await replies(t, fresh.conversationId)).toEqual([HOURS.greeting.text]);

    // A holiday is closed all day.
    clock.set(new Date('2026-12-25T10:00:00Z'));
    const holiday = await customerWrites(t, newNumber(), 'Merry Christmas, is the shop open?');
    await settled();
    expect(await replies(t, holiday.conversationId)).toEqual([HOURS.awayMessage.text]);
    clock.set(new Date('2026-11-02T20:00:00Z'));
  });

  it('are a rule condition: time.businessHours', async () => {
    const t = await account();
    await call(env.app, 'PUT', '/account/business-hours', {
      key: t.apiKey,
      body: { timezone: 'Europe/Berlin', weekly: HOURS.weekly },
    });
    const rule = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'after hours',
        trigger: { event: 'message.received' },
        conditions: { all: [{ field: 'time.businessHours', op: 'eq', value: 'closed' }] },
        actions: [{ type: 'add_tag', tag: 'after-hours' }],
      },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const night = await customerWrites(t, newNumber());
    await eventually(
      async () => (await call(env.app, 'GET', `/contacts/${night.contactId}`, { key: t.apiKey })).body.tags,
      (tags) => tags.includes('after-hours'),
      10_000,
    );
    clock.set(new Date('2026-11-03T09:00:00Z'));
    const day = await customerWrites(t, newNumber());
    await settled();
    expect((await call(env.app, 'GET', `/contacts/${day.contactId}`, { key: t.apiKey })).body.tags).toEqual(
      [],
    );
    clock.set(new Date('2026-11-02T20:00:00Z'));
    // A journey's graph cannot read it (its scope has no hours).
    const journey = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: {
        name: 'hours',
        entry: { trigger: 'api', start: 'check' },
        nodes: [
          {
            id: 'check',
            type: 'condition',
            config: { conditions: { all: [{ field: 'time.businessHours', op: 'eq', value: 'open' }] } },
          },
        ],
        edges: [],
      },
    });
    expect(journey.status).toBe(400);
  });
});
