// Journeys with a timed entry (contact.inactive, conversation.unanswered with `after`), started by
// the automation worker's scan on a clock the test moves: the re_engagement journey config end to
// end (a run per silence, sends `spacing` apart, a reply ends it), and hand-written timed journeys
// (the entry's checks, one run per occasion however many scans look at once, no inbox interest).
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { FakeClock } from '../helpers/harness.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const clock = new FakeClock(Date.parse('2026-11-02T09:00:00Z'));
// Scans are run by the test (app.ctx.automation.scan), not by the timer.
const env = useMessagingApp({
  now: clock.now,
  config: { automationScanMs: 3_600_000, automationPollMs: 50 },
});

const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);
const scan = () => env.app.ctx.automation.scan();

const runsOf = (t: SandboxTenant, journeyId: string, done: (runs: any[]) => boolean) =>
  eventually(
    () => call(env.app, 'GET', `/journeys/${journeyId}/runs`, { key: t.apiKey, query: { limit: '100' } }),
    (r) => r.status === 200 && done(r.body.data),
  ).then((r) => r.body.data as any[]);

const runWhen = (t: SandboxTenant, journeyId: string, runId: string, done: (r: any) => boolean) =>
  eventually(
    () => call(env.app, 'GET', `/journeys/${journeyId}/runs/${runId}`, { key: t.apiKey }),
    (r) => r.status === 200 && done(r.body),
  ).then((r) => r.body);

const path = (r: { steps: { nodeId: string; edge: string | null }[] }) =>
  r.steps.map((s) => `${s.nodeId}${s.edge ? `:${s.edge}` : ''}`);

/** The event types the account's automation takes into its inbox. */
const interest = async (accountId: string) =>
  (
    await env.app.ctx.db.query<{ event_type: string }>(
      'SELECT event_type FROM automation_interest WHERE account_id = $1',
      [accountId],
    )
  ).rows.map((r) => r.event_type);

describe('re_engagement', () => {
  it('starts a run per silent contact, once per silence; sends spacing apart until a reply', async () => {
    const t = await account();
    const template = await approvedTemplate(env.app, t.apiKey, {
      name: 'we_miss_you',
      body: 'We miss you, {{1}}! Reply to hear about our news.',
      examples: ['Ann'],
    });
    const made = await call(env.app, 'POST', '/journey-configs', {
      key: t.apiKey,
      body: {
        name: 'Win back',
        type: 're_engagement',
        config: {
          inactiveFor: 'P30D',
          message: {
            templateName: template.name,
            templateLanguage: 'en_US',
            parameters: ['{{ contact.name | default: "friend" }}'],
          },
          maxAttempts: 2,
          spacing: 'P3D',
          exitOnReply: true,
        },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const journeyId = made.body.journeyId as string;
    const journey = (await call(env.app, 'GET', `/journeys/${journeyId}`, { key: t.apiKey })).body;
    expect(journey.entry).toEqual({
      trigger: 'event',
      event: 'contact.inactive',
      after: 'P30D',
      conditions: null,
      reentry: 'after_exit',
      start: 'send_1',
    });
    expect(journey.nodes.map((n: any) => n.id)).toEqual([
      'replied',
      'send_1',
      'reply_1',
      'send_2',
      'reply_2',
      'done',
    ]);
    // A timed entry is no event: the inbox does not take contact.inactive for it.
    expect(await interest(t.accountId)).not.toContain('contact.inactive');

    const ann = (
      await call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        body: { from: '+14155558101', text: 'hi' },
      })
    ).body.contactId as string;
    const bob = (
      await call(env.app, 'POST', '/contacts', {
        key: t.apiKey,
        body: { phone: '+14155558102', name: 'Bob' },
      })
    ).body.id as string;

    clock.advance(29 * DAY);
    expect(await scan()).toBe(0);
    clock.advance(2 * DAY);
    expect(await scan()).toBe(2);
    const started = await runsOf(
      t,
      journeyId,
      (runs) => runs.length === 2 && runs.every((r) => r.status === 'waiting'),
    );
    const runOf = (contactId: string) => started.find((r) => r.contactId === contactId);
    const bobContact = (await call(env.app, 'GET', `/contacts/${bob}`, { key: t.apiKey })).body;
    expect(runOf(bob)).toMatchObject({
      currentNodeId: 'reply_1',
      triggerData: { id: bob, inactiveSince: bobContact.createdAt },
    });
    // Once per occasion: the next scan finds them started.
    expect(await scan()).toBe(0);

    // Ann answers: her run ends; Bob's goes on when his wait is over.
    await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155558101', text: 'I am back' },
    });
    const answered = await runWhen(t, journeyId, runOf(ann).id, (r) => r.status === 'completed');
    expect(path(answered)).toEqual(['send_1:next', 'reply_1:reply', 'replied:end']);
    clock.advance(3 * DAY + MINUTE);
    await runWhen(
      t,
      journeyId,
      runOf(bob).id,
      (r) => r.currentNodeId === 'reply_2' && r.status === 'waiting',
    );
    clock.advance(3 * DAY + MINUTE);
    const gaveUp = await runWhen(t, journeyId, runOf(bob).id, (r) => r.status === 'completed');
    expect(path(gaveUp)).toEqual([
      'send_1:next',
      'reply_1:timeout',
      'send_2:next',
      'reply_2:timeout',
      'done:end',
    ]);
    const sent = await Promise.all(
      [gaveUp.steps[0], gaveUp.steps[2]].map(
        async (s: any) =>
          (await call(env.app, 'GET', `/messages/${s.output.messageId}`, { key: t.apiKey })).body,
      ),
    );
    expect(sent.map((m) => [m.to, m.template.parameters])).toEqual([
      ['+14155558102', ['Bob']],
      ['+14155558102', ['Bob']],
    ]);

    // Ann's new silence is a new occasion; Bob's is the one that had its run.
    expect(await scan()).toBe(0);
    clock.advance(31 * DAY);
    expect(await scan()).toBe(1);
    const all = await runsOf(t, journeyId, (runs) => runs.length === 3);
    expect(all[0]).toMatchObject({ contactId: ann });
  });
});

describe('timed entries of journeys', () => {
  const journey = (entry: Record<string, unknown>) => ({
    name: 'Nobody answered',
    entry: { trigger: 'event', start: 'tag', ...entry },
    nodes: [{ id: 'tag', type: 'update_contact', config: { addTags: ['waiting'] } }],
    edges: [],
  });

  it('takes `after` for a timed event only, and no conditions with it', async () => {
    const t = await account();
    const refused = async (entry: Record<string, unknown>) => {
      const res = await call(env.app, 'POST', '/journeys', { key: t.apiKey, body: journey(entry) });
      expectError(res, 400, 'INVALID_REQUEST');
      return res.body.error.details.map((d: any) => d.field);
    };
    expect(await refused({ event: 'contact.inactive' })).toEqual(['entry.after']);
    expect(await refused({ event: 'contact.inactive', after: 'P2M' })).toEqual(['entry.after']);
    expect(await refused({ event: 'message.received', after: 'P1D' })).toEqual(['entry.after']);
    expect(
      await refused({
        event: 'contact.inactive',
        after: 'P1D',
        conditions: { all: [{ field: 'contact.tags', op: 'contains', value: 'vip' }] },
      }),
    ).toEqual(['entry.conditions']);
  });

  it('starts one run per occasion, however many scans look at once', async () => {
    const t = await account();
    const made = await call(env.app, 'POST', '/journeys', {
      key: t.apiKey,
      body: journey({ event: 'conversation.unanswered', after: 'PT4H', reentry: 'always' }),
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.entry).toMatchObject({ event: 'conversation.unanswered', after: 'PT4H' });
    const published = await call(env.app, 'POST', `/journeys/${made.body.id}/publish`, { key: t.apiKey });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect(await interest(t.accountId)).not.toContain('conversation.unanswered');

    const inbound = (
      await call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        body: { from: '+14155558201', text: 'anyone?' },
      })
    ).body;
    clock.advance(4 * HOUR + MINUTE);
    // reentry always: only the occasion's unique run stops the second scan's start.
    const [a, b] = await Promise.all([scan(), scan()]);
    expect(a + b).toBe(1);
    const [run] = await runsOf(t, made.body.id, (runs) => runs[0]?.status === 'completed');
    expect(run).toMatchObject({
      contactId: inbound.contactId,
      triggerData: { id: inbound.conversationId, contactId: inbound.contactId },
    });
    expect(await scan()).toBe(0);
    expect(await runsOf(t, made.body.id, () => true)).toHaveLength(1);
    const contact = await call(env.app, 'GET', `/contacts/${inbound.contactId}`, { key: t.apiKey });
    expect(contact.body.tags).toEqual(['waiting']);
  });
});
