// POST /bulk/messages and GET /bulk/messages/{jobId}: 1–100 recipients with their own parameters,
// the whole batch's price checked against the wallet before anything is sent, recipients refused on
// their own, each recipient's message and live status in the job, and bulk_job.completed.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  balanceOf,
  credit,
  eventually,
  sandboxTenant,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({ autoApprove: true });

const phone = (i: number) => `+1415555${String(3000 + i).padStart(4, '0')}`;
const template = { templateName: 'appointment_reminder', templateLanguage: 'en_US' };

async function jobWhenCompleted(key: string, jobId: string) {
  const res = await eventually(
    () => call(env.app, 'GET', `/bulk/messages/${jobId}`, { key }),
    (r) => r.body.status === 'completed',
    20_000,
  );
  expect(res.body.status, JSON.stringify(res.body)).toBe('completed');
  return res.body;
}

describe('bulk sends', () => {
  it('sends 100 recipients their own parameters: 202 with the job, then every message, then bulk_job.completed', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
    const r = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: r.url(), events: ['bulk_job.completed'] },
    });
    const recipients = Array.from({ length: 100 }, (_, i) => ({
      to: phone(i),
      parameters: [`Guest ${i}`, `day ${i}`],
    }));
    const res = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { ...template, recipients },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      jobId: expect.stringMatching(/^job_/),
      status: 'queued',
      total: 100,
      processed: 0,
      failed: 0,
    });
    expect(res.body.results).toHaveLength(100);
    expect(res.body.results[7]).toEqual({
      index: 7,
      to: phone(7),
      messageId: expect.stringMatching(/^msg_/),
      status: 'queued',
      error: null,
    });
    const job = await jobWhenCompleted(t.apiKey, res.body.jobId);
    expect(job).toMatchObject({
      total: 100,
      processed: 100,
      succeeded: 100,
      failed: 0,
      completedAt: expect.any(String),
    });
    const message = await call(env.app, 'GET', `/messages/${job.results[42].messageId}`, { key: t.apiKey });
    expect(message.body).toMatchObject({
      to: phone(42),
      bulkJobId: res.body.jobId,
      template: { parameters: ['Guest 42', 'day 42'] },
    });
    const [event] = await r.waitFor(1);
    expect(event!.json.data).toMatchObject({
      kind: 'messages',
      jobId: res.body.jobId,
      status: 'completed',
      succeeded: 100,
    });
    expect(event!.json.data.mode).toBeUndefined();
  });

  it('refuses recipients on their own (bad number, wrong parameters, closed window) and sends the rest', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
    const res = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: {
        ...template,
        parameters: ['Guest', 'Friday'],
        recipients: [
          { to: phone(1) },
          { to: 'not-a-number' },
          { to: phone(2), parameters: ['only one'] },
          { to: '+12125550101' },
        ],
      },
    });
    expect(res.status).toBe(202);
    expect(
      res.body.results.map((x: { status: string; error: { code: string } | null }) => [
        x.status,
        x.error?.code ?? null,
      ]),
    ).toEqual([
      ['queued', null],
      ['refused', 'INVALID_REQUEST'],
      ['refused', 'INVALID_REQUEST'],
      ['queued', null],
    ]);
    expect(res.body.results[2].error.details).toEqual([
      {
        field: 'recipients[2].parameters',
        issue: 'must hold 2 value(s) for template appointment_reminder, not 1',
      },
    ]);
    expect(res.body).toMatchObject({ processed: 2, failed: 2 });
    const job = await jobWhenCompleted(t.apiKey, res.body.jobId);
    expect(job).toMatchObject({ processed: 4, succeeded: 1, failed: 3 });
    expect(job.results[3]).toMatchObject({ status: 'failed', error: { code: 'RECIPIENT_UNREACHABLE' } });

    const text = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { type: 'text', text: 'We are open today', recipients: [{ to: phone(3) }, { to: phone(4) }] },
    });
    expect(text.body.results.map((x: { error: { code: string } }) => x.error.code)).toEqual([
      'CSW_VIOLATION',
      'CSW_VIOLATION',
    ]);
    expect(text.body).toMatchObject({ status: 'completed', processed: 2, failed: 2 });
    const contacts = await call(env.app, 'GET', '/contacts', { key: t.apiKey, query: { phone: phone(3) } });
    expect(contacts.body.data).toEqual([]);
  });

  it('checks the whole batch against the wallet: 402 and nothing sent when it cannot pay for all', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    await credit(env.app, env.partner.partnerKey, t.accountId, '0.10');
    await approvedTemplate(env.app, t.apiKey, {
      name: 'spring_sale',
      category: 'MARKETING',
      body: 'Hi {{1}}, our spring sale starts {{2}}. Reply STOP to opt out.',
    });
    const body = (n: number) => ({
      templateName: 'spring_sale',
      templateLanguage: 'en_US',
      parameters: ['friend', 'today'],
      recipients: Array.from({ length: n }, (_, i) => ({ to: phone(10 + i) })),
    });
    const estimate = await call(env.app, 'POST', '/messages/estimate', { key: t.apiKey, body: body(5) });
    expect(estimate.body).toMatchObject({ total: { amount: '0.1250' }, sufficient: false });
    const refused = await call(env.app, 'POST', '/bulk/messages', { key: t.apiKey, body: body(5) });
    expectError(refused, 402, 'INSUFFICIENT_BALANCE');
    expect(refused.body.error.details[0]).toMatchObject({ requiredMicros: 125_000, balanceMicros: 100_000 });
    const { rows } = await env.tdb.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM messages WHERE account_id = $1) + (SELECT count(*) FROM bulk_jobs WHERE account_id = $1)
              + (SELECT count(*) FROM contacts WHERE account_id = $1) AS n`,
      [t.accountId],
    );
    expect(Number(rows[0]!.n)).toBe(0);
    const accepted = await call(env.app, 'POST', '/bulk/messages', { key: t.apiKey, body: body(4) });
    expect(accepted.status).toBe(202);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0000');
    const job = await jobWhenCompleted(t.apiKey, accepted.body.jobId);
    expect(job.succeeded).toBe(4);
    expect(env.fake.sent.filter((s) => s.body.template?.name === 'spring_sale')).toHaveLength(4);
  });

  it('takes 1 to 100 recipients: none or 101 is a 400, and so is an unknown template (404) for the whole batch', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
    const none = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { ...template, recipients: [] },
    });
    expectError(none, 400, 'INVALID_REQUEST');
    const many = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: {
        ...template,
        parameters: ['a', 'b'],
        recipients: Array.from({ length: 101 }, (_, i) => ({ to: phone(i) })),
      },
    });
    expectError(many, 400, 'INVALID_REQUEST');
    expect(many.body.error.details[0].field).toBe('recipients');
    const unknown = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { templateName: 'nope', templateLanguage: 'en_US', recipients: [{ to: phone(1) }] },
    });
    expectError(unknown, 404, 'RESOURCE_NOT_FOUND');
    const { rows } = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM bulk_jobs WHERE account_id = $1',
      [t.accountId],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('keeps jobs to their account (404), and apart from contact imports', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
    const other = await sandboxTenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { ...template, parameters: ['a', 'b'], recipients: [{ to: phone(1) }] },
    });
    expectError(
      await call(env.app, 'GET', `/bulk/messages/${res.body.jobId}`, { key: other.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', `/bulk/contacts/${res.body.jobId}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const idem = { 'idempotency-key': 'campaign-1' };
    const body = { ...template, parameters: ['a', 'b'], recipients: [{ to: phone(2) }] };
    const first = await call(env.app, 'POST', '/bulk/messages', { key: t.apiKey, body, headers: idem });
    const replay = await call(env.app, 'POST', '/bulk/messages', { key: t.apiKey, body, headers: idem });
    expect(replay.body.jobId).toBe(first.body.jobId);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });
});
