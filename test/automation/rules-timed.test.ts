// Timed triggers: conversation.unanswered and contact.inactive fire once per occasion (a wait that
// a reply or a new message ends), on a clock the test moves; and once across two server processes
// that scan one PostgreSQL database at the same time.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { FakeClock, onPostgres } from '../helpers/harness.ts';
import { type SandboxTenant, sandboxTenantWithKey, useMessagingApp } from '../helpers/messaging.ts';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { eventually, sleep } from '../helpers/wait.ts';

const HOUR = 3600_000;
const clock = new FakeClock(Date.parse('2026-11-02T09:00:00Z'));
// Scans are run by the test (app.ctx.automation.scan), not by the timer.
const env = useMessagingApp({
  now: clock.now,
  config: { automationScanMs: 3_600_000, automationPollMs: 50 },
});

type Sandbox = SandboxTenant;
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

async function rule(t: Sandbox, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/rules', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

const runs = async (t: Sandbox, id: string) =>
  (await call(env.app, 'GET', `/rules/${id}/runs`, { key: t.apiKey, query: { limit: '100' } })).body
    .data as any[];
const scan = () => env.app.ctx.automation.scan();

describe('timed triggers', () => {
  it('conversation.unanswered fires once per wait, counted from the first unanswered message', async () => {
    const t = await account();
    const waiting = await rule(t, {
      name: 'nobody answered',
      trigger: { event: 'conversation.unanswered', after: 'PT4H' },
      actions: [{ type: 'add_tag', tag: 'waiting' }],
    });
    const first = (
      await call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        body: { from: '+14155557001', text: 'Is my order on its way?' },
      })
    ).body;
    clock.advance(2 * HOUR);
    // A second message does not restart the wait: the customer has waited since the first.
    await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155557001', text: 'Hello?' },
    });
    clock.advance(HOUR + 59 * 60_000);
    await scan();
    expect(await runs(t, waiting.id)).toEqual([]);
    clock.advance(2 * 60_000);
    await scan();
    const [run] = await runs(t, waiting.id);
    expect(run).toMatchObject({
      status: 'succeeded',
      contactId: first.contactId,
      eventId: expect.stringMatching(/^occ_unanswered_cnv_/),
      actions: [{ type: 'add_tag', status: 'succeeded' }],
    });
    const contact = (await call(env.app, 'GET', `/contacts/${first.contactId}`, { key: t.apiKey })).body;
    expect(contact.tags).toEqual(['waiting']);
    // Once per occasion.
    clock.advance(HOUR);
    await scan();
    expect(await runs(t, waiting.id)).toHaveLength(1);
    // The business answers: no wait. The customer writes again: a new wait, a new occasion.
    const reply = await call(env.app, 'POST', `/conversations/${first.conversationId}/messages`, {
      key: t.apiKey,
      body: { type: 'text', text: 'It is, arriving tomorrow.' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    clock.advance(5 * HOUR);
    await scan();
    expect(await runs(t, waiting.id)).toHaveLength(1);
    await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155557001', text: 'Thanks! One more question.' },
    });
    clock.advance(4 * HOUR + 60_000);
    await scan();
    const all = await runs(t, waiting.id);
    expect(all).toHaveLength(2);
    expect(all[0].eventId).not.toBe(all[1].eventId);
  });

  it('contact.inactive fires for contacts silent that long, once, and again after they write', async () => {
    const t = await account();
    const quiet = await rule(t, {
      name: 'gone quiet',
      trigger: { event: 'contact.inactive', after: 'P30D' },
      conditions: { all: [{ field: 'contact.tags', op: 'not_contains', value: 'staff' }] },
      actions: [{ type: 'set_attribute', key: 'lapsedAt', value: '{{ event.data.inactiveSince }}' }],
    });
    const ann = (
      await call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        body: { from: '+14155557101', text: 'hi' },
      })
    ).body;
    const staff = (
      await call(env.app, 'POST', '/contacts', {
        key: t.apiKey,
        body: { phone: '+14155557102', tags: ['staff'] },
      })
    ).body;
    clock.advance(29 * 24 * HOUR);
    await scan();
    expect(await runs(t, quiet.id)).toEqual([]);
    clock.advance(2 * 24 * HOUR);
    await scan();
    const fired = await runs(t, quiet.id);
    expect(fired.map((r) => `${r.contactId}:${r.status}`).sort()).toEqual(
      [`${ann.contactId}:succeeded`, `${staff.id}:not_matched`].sort(),
    );
    const contact = (await call(env.app, 'GET', `/contacts/${ann.contactId}`, { key: t.apiKey })).body;
    expect(contact.attributes.lapsedAt).toBe(contact.lastInboundAt);
    await scan();
    expect(await runs(t, quiet.id)).toHaveLength(2);
    await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: t.sandboxKey,
      body: { from: '+14155557101', text: 'back again' },
    });
    clock.advance(31 * 24 * HOUR);
    await scan();
    // Ann's new silence is a new occasion; the staff member's is the same one, already run.
    expect(await runs(t, quiet.id)).toHaveLength(3);
  });
});

describe.skipIf(!onPostgres)('a timed trigger on two server processes', () => {
  const store = useDurableStore('rules-timed', {
    TIDINGS_AUTOMATION_SCAN_MS: '100',
    TIDINGS_AUTOMATION_POLL_MS: '100',
  });

  it('fires once although both processes scan for it', async () => {
    const servers = await Promise.all([
      startServerProcess(store.settings),
      startServerProcess(store.settings),
    ]);
    store.servers.push(...servers);
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const partnerKey = await bootstrapOnProcess(a);
    const { accountId, apiKey } = await accountOnProcess(a, partnerKey, 'timed-two');
    const sandbox = await api(a, 'POST', `/partner/accounts/${accountId}/keys`, partnerKey, {
      name: 'sandbox',
      scope: 'sandbox',
    });
    const created = await api(b, 'POST', '/rules', apiKey, {
      name: 'nobody answered',
      trigger: { event: 'conversation.unanswered', after: 'PT1S' },
      actions: [{ type: 'add_tag', tag: 'waiting' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const inbound = await api(a, 'POST', '/sandbox/inbound-messages', sandbox.body.apiKey, {
      from: '+14155557201',
      text: 'anyone?',
    });
    expect(inbound.status).toBe(201);
    const first = await eventually(
      () => api(b, 'GET', `/rules/${created.body.id}/runs`, apiKey),
      (r) => r.body.data.length > 0,
      15_000,
    );
    expect(first.body.data).toHaveLength(1);
    // Both go on scanning every 100 ms: ten more scans each find it fired.
    await sleep(1000);
    const after = await api(a, 'GET', `/rules/${created.body.id}/runs`, apiKey);
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0]).toMatchObject({ status: 'succeeded' });
    const contact = await api(a, 'GET', `/contacts/${inbound.body.contactId}`, apiKey);
    expect(contact.body.tags).toEqual(['waiting']);
    const tagged = await store.tdb!.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND type = 'contact.tagged'`,
      [accountId],
    );
    expect(tagged.rows[0]!.n).toBe(1);
  });
});
