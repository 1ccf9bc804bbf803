// Satisfaction surveys through HTTP: a close sends the survey once (never to an opted-out contact),
// the customer's tap on it is stored on the closed conversation with the agent who closed it (no new
// conversation opens), the comment asked for after it too, each told by csat.received.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { memberSession } from '../helpers/console.ts';
import {
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({ config: { automationPollMs: 50 } });
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

let numbers = 0;
const newNumber = () => `+1415555${String(9000 + numbers++).padStart(4, '0')}`;

async function customerSends(t: SandboxTenant, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', { key: t.sandboxKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; conversationId: string; contactId: string };
}

const outbound = async (t: SandboxTenant, conversationId: string) =>
  (
    (await call(env.app, 'GET', `/conversations/${conversationId}/messages`, { key: t.apiKey })).body
      .data as any[]
  )
    .filter((m) => m.direction === 'outbound')
    .reverse();

async function settled() {
  await eventually(
    async () =>
      (await env.tdb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM automation_inbox')).rows[0]!.n,
    (n) => n === 0,
    10_000,
  );
}

const SURVEY = {
  scale: 'faces',
  question: 'How did we do?',
  commentPrompt: 'Thanks! Anything you would like to add?',
  thanks: 'Thank you for your feedback.',
};

describe('CSAT', () => {
  it('is off until set, and set whole', async () => {
    const t = await account();
    expect((await call(env.app, 'GET', '/account/csat', { key: t.apiKey })).body).toMatchObject({
      enabled: false,
      updatedAt: null,
    });
    const set = await call(env.app, 'PUT', '/account/csat', { key: t.apiKey, body: SURVEY });
    expect(set.body).toMatchObject({ ...SURVEY, enabled: true });
    expect((await call(env.app, 'GET', '/account/csat', { key: t.apiKey })).body).toEqual(set.body);
    expectError(
      await call(env.app, 'PUT', '/account/csat', { key: t.apiKey, body: { scale: 'ten' } }),
      400,
      'INVALID_REQUEST',
    );
    const off = await call(env.app, 'PUT', '/account/csat', { key: t.apiKey, body: { enabled: false } });
    expect(off.body.enabled).toBe(false);
  });

  it('asks once per close; the answer and the comment stay on the closed conversation, with its agent', async () => {
    const t = await account();
    await call(env.app, 'PUT', '/account/csat', { key: t.apiKey, body: SURVEY });
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const phone = newNumber();
    const first = await customerSends(t, { from: phone, text: 'My order is late' });
    const closed = await call(env.app, 'POST', `/conversations/${first.conversationId}/close`, agent);
    expect(closed.body).toMatchObject({ status: 'closed', closedBy: agent.memberId, csat: null });
    await settled();
    const [survey] = await outbound(t, first.conversationId);
    expect(survey).toMatchObject({
      type: 'interactive',
      source: 'automation',
      interactive: { kind: 'buttons', body: 'How did we do?' },
    });
    expect(survey.interactive.buttons.map((b: any) => b.id)).toEqual(
      [1, 3, 5].map((n) => `csat:${first.conversationId}:${n}`),
    );
    // A customer answers a message once it has reached them: wait for it to be sent.
    await eventually(
      async () => (await call(env.app, 'GET', `/messages/${survey.id}`, { key: t.apiKey })).body.status,
      (status) => status !== 'queued',
      10_000,
    );
    // The tap: stored on the closed conversation, no new one opened.
    const tap = await customerSends(t, {
      from: phone,
      replyTo: survey.id,
      interactive: { id: `csat:${first.conversationId}:5` },
    });
    expect(tap.conversationId).toBe(first.conversationId);
    const answered = (await call(env.app, 'GET', `/conversations/${first.conversationId}`, { key: t.apiKey }))
      .body;
    expect(answered).toMatchObject({
      status: 'closed',
      csat: { score: 5, comment: null, agentId: agent.memberId, answeredAt: expect.any(String) },
    });
    expect((await call(env.app, 'GET', '/conversations?status=open', { key: t.apiKey })).body.data).toEqual(
      [],
    );
    await settled();
    expect((await outbound(t, first.conversationId)).map((m) => m.text ?? m.type)).toEqual([
      'interactive',
      SURVEY.commentPrompt,
    ]);
    // The comment, within the window: on the same conversation; then the thanks.
    const comment = await customerSends(t, { from: phone, text: 'Quick and kind, thanks' });
    expect(comment.conversationId).toBe(first.conversationId);
    await settled();
    const done = (await call(env.app, 'GET', `/conversations/${first.conversationId}`, { key: t.apiKey }))
      .body;
    expect(done.csat).toMatchObject({ score: 5, comment: 'Quick and kind, thanks' });
    expect((await outbound(t, first.conversationId)).map((m) => m.text ?? m.type)).toEqual([
      'interactive',
      SURVEY.commentPrompt,
      SURVEY.thanks,
    ]);
    const received = await call(env.app, 'GET', '/events', {
      key: t.apiKey,
      query: { type: 'csat.received', since: new Date(0).toISOString() },
    });
    expect(
      (received.body.data as any[]).map((e) => [e.data.csat.score, e.data.csat.comment]).reverse(),
    ).toEqual([
      [5, null],
      [5, 'Quick and kind, thanks'],
    ]);

    // A tap on the same survey again changes nothing: it opens a conversation as any message.
    const again = await customerSends(t, {
      from: phone,
      replyTo: survey.id,
      interactive: { id: `csat:${first.conversationId}:1` },
    });
    expect(again.conversationId).not.toBe(first.conversationId);
    expect(
      (await call(env.app, 'GET', `/conversations/${first.conversationId}`, { key: t.apiKey })).body.csat
        .score,
    ).toBe(5);
    // Erasing the customer takes their words with them; the score stays (a count, not their data).
    const erased = await call(env.app, 'DELETE', `/contacts/${first.contactId}`, {
      key: t.apiKey,
      query: { erase: 'true' },
    });
    expect(erased.status, JSON.stringify(erased.body)).toBe(204);
    const after = (await call(env.app, 'GET', `/conversations/${first.conversationId}`, { key: t.apiKey }))
      .body;
    expect(after.csat).toMatchObject({ score: 5, comment: null });
  });

  it('is never sent to an opted-out contact; a list of five when the scale says so', async () => {
    const t = await account();
    await call(env.app, 'PUT', '/account/csat', {
      key: t.apiKey,
      body: { scale: 'five', question: 'Rate us' },
    });
    const out = await customerSends(t, { from: newNumber(), text: 'Stop' });
    await call(env.app, 'PATCH', `/contacts/${out.contactId}`, {
      key: t.apiKey,
      body: { marketingOptOut: true },
    });
    await call(env.app, 'POST', `/conversations/${out.conversationId}/close`, { key: t.apiKey });
    const rated = await customerSends(t, { from: newNumber(), text: 'Hello' });
    await call(env.app, 'POST', `/conversations/${rated.conversationId}/close`, { key: t.apiKey });
    await settled();
    expect(await outbound(t, out.conversationId)).toEqual([]);
    const [survey] = await outbound(t, rated.conversationId);
    expect(survey.interactive).toMatchObject({ kind: 'list', body: 'Rate us' });
    expect(survey.interactive.sections[0].rows.map((r: any) => r.id)).toEqual(
      [5, 4, 3, 2, 1].map((n) => `csat:${rated.conversationId}:${n}`),
    );
    // Reopened and closed again: a new close, a new survey.
    await call(env.app, 'POST', `/conversations/${rated.conversationId}/reopen`, { key: t.apiKey });
    await call(env.app, 'POST', `/conversations/${rated.conversationId}/close`, { key: t.apiKey });
    await settled();
    expect(await outbound(t, rated.conversationId)).toHaveLength(2);
  });
});
