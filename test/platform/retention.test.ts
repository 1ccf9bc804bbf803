// Retention (modules/retention/): the hourly prune deletes what is finished and older than each
// table's setting, and nothing else. A business's rows are made through the API on a clock the test
// moves; a month on a timed rule fires for the silent contacts, 91 days later more rows are made
// and the prune runs. What goes: old rule runs, an older finished journey run and enrollment of a
// contact who has a later one, a finished bulk job, the callbacks of an ended call, old daily usage,
// old messages. What stays: a waiting journey run and an active enrollment, a contact's latest run
// and enrollment (a "never" sequence still refuses it), the timed rule's runs (a scan then fires
// nothing again), the callbacks of a call not yet ended, everything recent, and the wallet's ledger.
// Then a prune of 50,000 old bulk jobs runs while the API reads and writes that table.
import { describe, expect, it } from 'vitest';
import { RetentionPruner } from '../../src/modules/retention/prune.ts';
import { call } from '../helpers/client.ts';
import { FakeClock } from '../helpers/harness.ts';
import { credit, sandboxTenantWithKey } from '../helpers/messaging.ts';
import { useTestApp } from '../helpers/setup.ts';
import { postCallStatus } from '../helpers/voice.ts';
import { eventually, until } from '../helpers/wait.ts';

const DAY = 24 * 3600_000;
const clock = new FakeClock();
const env = useTestApp({
  now: clock.now,
  workers: true,
  config: {
    automationRetentionDays: 90,
    bulkRetentionDays: 30,
    callCallbackRetentionDays: 30,
    usageRetentionDays: 32,
    messageRetentionDays: 60,
  },
});

type Caller = (
  method: 'DELETE' | 'GET' | 'PATCH' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any }>;

async function ok(res: Promise<{ status: number; body: any }>, status: number): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

const count = async (sql: string, params: unknown[]) =>
  (await env.tdb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0]!.n;

async function business() {
  const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
  await credit(env.app, env.partner.partnerKey, t.accountId, '20.00');
  const a: Caller = (method, path, body) => call(env.app, method, path, { key: t.apiKey, body });
  const contact = async (phone: string) => (await ok(a('POST', '/contacts', { phone }), 201)).id as string;
  const rule = await ok(
    a('POST', '/rules', {
      name: 'tag replies',
      trigger: { event: 'message.received' },
      actions: [{ type: 'add_tag', tag: 'replied' }],
    }),
    201,
  );
  const sequence = async (reenroll: string) => {
    const s = await ok(
      a('POST', '/sequences', {
        name: `retention ${reenroll}`,
        enrollment: { reenroll },
        steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Hello' } }],
      }),
      201,
    );
    await ok(a('POST', `/sequences/${s.id}/publish`), 200);
    return s.id as string;
  };
  const journey = await ok(
    a('POST', '/journeys', {
      name: 'retention journey',
      entry: { trigger: 'api', reentry: 'always', start: 'pause' },
      nodes: [{ id: 'pause', type: 'wait', config: { duration: 'P1D' } }],
      edges: [],
    }),
    201,
  );
  await ok(a('POST', `/journeys/${journey.id}/publish`), 200);
  const script = await ok(
    a('POST', '/voice/scripts', { name: 'retention script', type: 'tts', tts: { text: 'Hello' } }),
    201,
  );
  await ok(a('POST', `/voice/scripts/${script.id}/publish`), 200);
  const quiet = await ok(
    a('POST', '/rules', {
      name: 'gone quiet',
      trigger: { event: 'contact.inactive', after: 'P30D' },
      actions: [{ type: 'add_tag', tag: 'quiet' }],
    }),
    201,
  );
  return {
    t,
    a,
    contact,
    ruleId: rule.id,
    quietRuleId: quiet.id,
    sequence,
    journeyId: journey.id,
    scriptId: script.id,
  };
}

describe('the retention prune', () => {
  it('deletes finished rows past each retention, and keeps what is going, latest or recent', async () => {
    const b = await business();
    const { a, t } = b;
    const [ann, bob, cy] = [
      await b.contact('+14155550101'),
      await b.contact('+14155550102'),
      await b.contact('+14155550103'),
    ];

    // Automation: rule runs from a customer's message; Ann's two finished runs and enrollments
    // (the later one kept as her latest), Bob's waiting run and active enrollment, Cy's one
    // finished enrollment in a "never" sequence.
    const inbound = await ok(
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        body: { from: '+14155550101', text: 'Hello there' },
      }),
      201,
    );
    await eventually(
      () => a('GET', `/rules/${b.ruleId}/runs`),
      (r) => r.body.data?.length === 1,
      15_000,
    );
    const always = await b.sequence('always');
    const never = await b.sequence('never');
    const enrollments: string[] = [];
    for (let i = 0; i < 2; i++) {
      const e = await ok(a('POST', `/sequences/${always}/enrollments`, { contactId: ann }), 201);
      await ok(a('DELETE', `/sequences/${always}/enrollments/${e.id}`), 204);
      enrollments.push(e.id);
    }
    const active = await ok(a('POST', `/sequences/${always}/enrollments`, { contactId: bob }), 201);
    const once = await ok(a('POST', `/sequences/${never}/enrollments`, { contactId: cy }), 201);
    await ok(a('DELETE', `/sequences/${never}/enrollments/${once.id}`), 204);
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await ok(a('POST', `/journeys/${b.journeyId}/trigger`, { contactId: ann }), 202);
      await ok(a('POST', `/journeys/${b.journeyId}/runs/${r.id}/cancel`), 200);
      runs.push(r.id);
    }
    const waiting = await ok(a('POST', `/journeys/${b.journeyId}/trigger`, { contactId: bob }), 202);

    // A bulk import, finished; a message out; an ended call and one still ringing, each with a callback.
    const bulk = await ok(a('POST', '/bulk/contacts', { contacts: [{ phone: '+14155550104' }] }), 202);
    await eventually(
      () => a('GET', `/bulk/contacts/${bulk.jobId}`),
      (r) => r.body.status === 'completed',
      15_000,
    );
    const sent = await ok(a('POST', '/messages', { to: '+14155550101', type: 'text', text: 'Hi Ann' }), 202);
    const ended = await ok(a('POST', '/voice/calls', { to: '+14155550101', scriptId: b.scriptId }), 202);
    const ringing = await ok(a('POST', '/voice/calls', { to: '+14155550102', scriptId: b.scriptId }), 202);
    await env.app.ctx.voice.stop(); // the sandbox's simulation plays no more: the test says what happens
    const report = (callId: string, status: string) =>
      postCallStatus(env.app, env.tdb.db, t.accountId, callId, { CallStatus: status, SequenceNumber: '90' });
    await report(ended.id, 'completed');
    await report(ringing.id, 'ringing');
    await env.app.ctx.usage.flush({ all: true });
    const callbacks = async (id: string) => count('call_callbacks WHERE call_id = $1', [id]);
    const [endedHeard, ringingHeard] = [await callbacks(ended.id), await callbacks(ringing.id)];
    expect(ringingHeard).toBeGreaterThanOrEqual(1);
    expect((await ok(a('GET', `/voice/calls/${ringing.id}`), 200)).status).not.toBe('completed');
    const ledger = await count('wallet_transactions WHERE account_id = $1', [t.accountId]);
    expect(await count('api_usage_daily WHERE account_id = $1', [t.accountId])).toBe(1);

    // 122 days on, a customer writes again and a job runs: recent rows.
    await until(
      async () => (await count('automation_inbox', [])) === 0,
      15_000,
      () => 'automation busy',
    );
    await env.app.ctx.automation.stop();
    // A month on, the contacts have been silent long enough: the timed rule's occasions fire.
    clock.advance(31 * DAY);
    expect(await env.app.ctx.automation.scan()).toBeGreaterThanOrEqual(3);
    const quietRuns = async () =>
      (await ok(a('GET', `/rules/${b.quietRuleId}/runs?limit=100`), 200)).data.length;
    const occasions = await quietRuns();
    clock.advance(91 * DAY);
    const later = await ok(a('POST', '/bulk/contacts', { contacts: [{ phone: '+14155550105' }] }), 202);
    await eventually(
      () => a('GET', `/bulk/contacts/${later.jobId}`),
      (r) => r.body.status === 'completed',
      15_000,
    );
    const recent = await ok(
      call(env.app, 'POST', '/sandbox/inbound-messages', {
        key: t.sandboxKey,
        body: { from: '+14155550102', text: 'Hello again' },
      }),
      201,
    );

    const pruned = await env.app.ctx.retention.prune();
    expect(pruned).toEqual({
      rule_runs: 1,
      journey_runs: 1,
      sequence_enrollments: 1,
      automation_calls: 0,
      bulk_job_chunks: expect.any(Number),
      bulk_jobs: 1,
      call_callbacks: endedHeard,
      api_usage_daily: expect.any(Number), // this account's day, and its partner's
      messages: expect.any(Number),
    });
    expect(pruned.bulk_job_chunks).toBeGreaterThanOrEqual(1);
    expect(pruned.api_usage_daily).toBeGreaterThanOrEqual(1);
    expect(pruned.messages).toBeGreaterThanOrEqual(2); // the inbound one and Ann's text at least

    // Gone.
    expect((await ok(a('GET', `/rules/${b.ruleId}/runs`), 200)).data).toEqual([]);
    expect((await a('GET', `/sequences/${always}/enrollments/${enrollments[0]}`)).status).toBe(404);
    expect((await a('GET', `/journeys/${b.journeyId}/runs/${runs[0]}`)).status).toBe(404);
    expect((await a('GET', `/bulk/contacts/${bulk.jobId}`)).status).toBe(404);
    expect((await a('GET', `/messages/${inbound.id ?? inbound.messageId}`)).status).toBe(404);
    expect((await a('GET', `/messages/${sent.id}`)).status).toBe(404);
    expect(await callbacks(ended.id)).toBe(0);
    // Kept: the latest, the going, the recent, the calls themselves, the ledger.
    expect((await ok(a('GET', `/sequences/${always}/enrollments/${enrollments[1]}`), 200)).status).toBe(
      'canceled',
    );
    expect((await ok(a('GET', `/sequences/${always}/enrollments/${active.id}`), 200)).status).toBe('active');
    expect((await ok(a('GET', `/sequences/${never}/enrollments/${once.id}`), 200)).status).toBe('canceled');
    expect((await a('POST', `/sequences/${never}/enrollments`, { contactId: cy })).status).toBe(409);
    expect((await ok(a('GET', `/journeys/${b.journeyId}/runs/${runs[1]}`), 200)).status).toBe('canceled');
    expect((await ok(a('GET', `/journeys/${b.journeyId}/runs/${waiting.id}`), 200)).status).toBe('waiting');
    expect((await ok(a('GET', `/bulk/contacts/${later.jobId}`), 200)).status).toBe('completed');
    expect((await ok(a('GET', `/messages/${recent.id}`), 200)).id).toBe(recent.id);
    expect(await callbacks(ringing.id)).toBe(ringingHeard);
    expect((await ok(a('GET', `/voice/calls/${ended.id}`), 200)).status).toBe('completed');
    expect(await count('wallet_transactions WHERE account_id = $1', [t.accountId])).toBe(ledger);

    // The occasions' runs stay, so a scan finds nothing new to fire for contacts still silent.
    expect(await quietRuns()).toBe(occasions);
    expect(await env.app.ctx.automation.scan()).toBe(0);
    expect(await quietRuns()).toBe(occasions);
    // A second prune finds nothing more; unset, messages are kept.
    // (The test's own calls since are counted on the real day, which the moved clock finds old.)
    const again = await env.app.ctx.retention.prune();
    expect(
      Object.values({ ...again, api_usage_daily: 0 }).every((n) => n === 0),
      JSON.stringify(again),
    ).toBe(true);
    const keeping = new RetentionPruner({
      db: env.tdb.db,
      config: { ...env.app.ctx.config, messageRetentionDays: null },
      metrics: env.app.ctx.metrics,
      now: () => new Date(clock.now().getTime() + 1000 * DAY),
      log: env.app.log,
    });
    expect(await keeping.prune()).not.toHaveProperty('messages');
    expect((await ok(a('GET', `/messages/${recent.id}`), 200)).id).toBe(recent.id);
  }, 60_000);

  it('prunes 50,000 rows in batches while the API reads and writes the same table', async () => {
    const b = await business();
    const { a, t } = b;
    const old = new Date(clock.now().getTime() - 40 * DAY);
    // Old finished jobs, made directly: 50,000 imports through the API would take minutes.
    await env.tdb.db.query(
      `INSERT INTO bulk_jobs (id, account_id, kind, status, total, processed, succeeded, created_at, completed_at, updated_at)
       SELECT 'job_' || lpad(i::text, 26, '0'), $1, 'contacts', 'completed', 1, 1, 1, $2, $2, $2
         FROM generate_series(1, 50000) i`,
      [t.accountId, old],
    );
    const counted = async () =>
      (await env.app.ctx.metrics.retentionDeleted.get()).values.find((v) => v.labels.table === 'bulk_jobs')
        ?.value ?? 0;
    const before = await counted();
    let pruneDone = false;
    const pruning = env.app.ctx.retention.prune().then((r) => {
      pruneDone = true;
      return r;
    });
    const write = await ok(a('POST', '/bulk/contacts', { contacts: [{ phone: '+14155550109' }] }), 202);
    const read = await ok(a('GET', `/bulk/contacts/${write.jobId}`), 200);
    expect(read.id ?? read.jobId).toBe(write.jobId);
    expect(pruneDone, 'the API waited for the whole prune').toBe(false);
    const pruned = await pruning;
    expect(pruned.bulk_jobs).toBe(50_000);
    expect((await counted()) - before).toBe(50_000);
    expect(await count('bulk_jobs WHERE account_id = $1', [t.accountId])).toBe(1);
    const scraped = await env.app.inject({ method: 'GET', url: '/metrics' });
    expect(scraped.body).toMatch(/tidings_retention_deleted_total\{table="bulk_jobs"\} \d+/);
  }, 60_000);
});
