// Sequences through HTTP: created checked (every fault named with its field), moved through their
// life (draft → active ⇄ paused → archived, 409 for a move that does not apply), versioned once
// published, deleted only as drafts or archived; enrollments one at a time (the reenroll setting,
// unknown contacts) and in bulk (a job); 402 below Pro, 404 for another tenant.
import { describe, expect, it } from 'vitest';
import { call, provision, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({ workers: true });

const onboarding = (overrides: Record<string, unknown> = {}) => ({
  name: 'Onboarding',
  steps: [
    {
      id: 'welcome',
      delay: { after: 'PT1H' },
      message: { type: 'text', text: 'Welcome, {{ contact.name }}!' },
    },
    { delay: { after: 'P2D' }, message: { type: 'text', text: 'How is it going?' } },
  ],
  ...overrides,
});

async function create(key: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/sequences', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function published(key: string, body: Record<string, unknown> = onboarding()) {
  const seq = await create(key, body);
  const res = await call(env.app, 'POST', `/sequences/${seq.id}/publish`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

let numbers = 0;
async function contact(key: string, extra: Record<string, unknown> = {}) {
  const res = await call(env.app, 'POST', '/contacts', {
    key,
    body: { phone: `+1415555${String(3000 + numbers++).padStart(4, '0')}`, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

describe('sequences', () => {
  it('creates a draft with defaults and step ids, and reads and lists it back', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const seq = await create(t.apiKey, onboarding());
    expect(seq).toMatchObject({
      name: 'Onboarding',
      status: 'draft',
      version: 1,
      steps: [{ id: 'welcome' }, { id: 'step_1', delay: { after: 'P2D' } }],
      enrollment: { trigger: null, reenroll: 'never' },
      exit: { onReply: true, onTagAdded: null, onTagRemoved: null },
      sendWindow: null,
    });
    expect(seq.id).toMatch(/^seq_/);
    expect((await call(env.app, 'GET', `/sequences/${seq.id}`, { key: t.apiKey })).body).toEqual(seq);
    const list = await call(env.app, 'GET', '/sequences', { key: t.apiKey, query: { status: 'draft' } });
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([seq.id]);
  });

  it('names every fault of a sequence, and stores nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'POST', '/sequences', {
      key: t.apiKey,
      body: {
        name: '  ',
        steps: [
          { id: 'a', delay: { after: 'P1M' }, message: { type: 'text', text: 'Hi {{ contact.name' } },
          {
            id: 'a',
            delay: { at: 'contact.attributes.due', offset: 'soon' },
            message: { type: 'text', text: 'Soon.' },
          },
        ],
        enrollment: {
          trigger: {
            event: 'contact.created',
            conditions: { all: [{ field: 'message.text', op: 'eq', value: 'x' }] },
          },
        },
        exit: { onTagAdded: '#!' },
        sendWindow: { timezone: 'Mars/Olympus', days: ['mon'], from: '18:00', until: '09:00' },
      },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(
      [
        'enrollment.trigger.conditions.all[0].field',
        'exit.onTagAdded',
        'name',
        'sendWindow.timezone',
        'sendWindow.until',
        'steps[0].delay.after',
        'steps[0].message.text',
        'steps[1].delay.offset',
        'steps[1].id',
      ].sort(),
    );
    expect((await call(env.app, 'GET', '/sequences', { key: t.apiKey })).body.data).toEqual([]);
    // The schema's own faults: a delay is `after` or `at`, steps 1–20. A negative delay is refused
    // (a zero one, or none, is at once).
    expectError(
      await call(env.app, 'POST', '/sequences', {
        key: t.apiKey,
        body: { name: 'x', steps: [{ delay: {}, message: { type: 'text', text: 'x' } }] },
      }),
      400,
      'INVALID_REQUEST',
    );
    const negative = await call(env.app, 'POST', '/sequences', {
      key: t.apiKey,
      body: { name: 'x', steps: [{ delay: { after: '-PT1H' }, message: { type: 'text', text: 'x' } }] },
    });
    expectError(negative, 400, 'INVALID_REQUEST');
    expect(negative.body.error.details).toEqual([
      { field: 'steps[0].delay.after', issue: 'must not be negative' },
    ]);
    expectError(
      await call(env.app, 'POST', '/sequences', { key: t.apiKey, body: { name: 'x', steps: [] } }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('moves through draft → active ⇄ paused → archived, and refuses moves that do not apply', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const seq = await create(t.apiKey, onboarding());
    const move = (what: string) => call(env.app, 'POST', `/sequences/${seq.id}/${what}`, { key: t.apiKey });
    expectError(await move('pause'), 409, 'CONFLICT');
    expectError(await move('resume'), 409, 'CONFLICT');
    expect((await move('publish')).body).toMatchObject({ status: 'active', version: 1 });
    expectError(await move('publish'), 409, 'CONFLICT');
    expectError(await call(env.app, 'DELETE', `/sequences/${seq.id}`, { key: t.apiKey }), 409, 'CONFLICT');
    expect((await move('pause')).body.status).toBe('paused');
    expect((await move('resume')).body.status).toBe('active');
    expect((await move('archive')).body.status).toBe('archived');
    expectError(await move('archive'), 409, 'CONFLICT');
    expectError(
      await call(env.app, 'PATCH', `/sequences/${seq.id}`, { key: t.apiKey, body: { name: 'Again' } }),
      409,
      'CONFLICT',
    );
    expect((await call(env.app, 'DELETE', `/sequences/${seq.id}`, { key: t.apiKey })).status).toBe(204);
    expectError(
      await call(env.app, 'GET', `/sequences/${seq.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('edits a draft in place and versions a published sequence', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const seq = await create(t.apiKey, onboarding());
    const patch = (body: Record<string, unknown>) =>
      call(env.app, 'PATCH', `/sequences/${seq.id}`, { key: t.apiKey, body });
    expect((await patch({ name: 'Renamed' })).body).toMatchObject({ name: 'Renamed', version: 1 });
    await call(env.app, 'POST', `/sequences/${seq.id}/publish`, { key: t.apiKey });
    const v2 = await patch({
      exit: { onReply: false },
      sendWindow: { timezone: 'Europe/Berlin', days: ['mon'], from: '09:00', until: '17:00' },
    });
    expect(v2.body).toMatchObject({ version: 2, status: 'active', exit: { onReply: false } });
    expect(v2.body.steps).toEqual(seq.steps);
    expectError(
      await patch({ steps: [{ delay: { after: 'P400D' }, message: { type: 'text', text: 'x' } }] }),
      400,
      'INVALID_REQUEST',
    );
    expect((await call(env.app, 'GET', `/sequences/${seq.id}`, { key: t.apiKey })).body.version).toBe(2);
  });

  it('enrols one contact as the reenroll setting allows, never an unknown one', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const draft = await create(t.apiKey, onboarding());
    const ann = await contact(t.apiKey, { name: 'Ann' });
    const enrol = (seqId: string, contactId: string) =>
      call(env.app, 'POST', `/sequences/${seqId}/enrollments`, { key: t.apiKey, body: { contactId } });
    expectError(await enrol(draft.id, ann.id), 409, 'CONFLICT');

    const once = await published(t.apiKey);
    const first = await enrol(once.id, ann.id);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body).toMatchObject({
      sequenceId: once.id,
      sequenceVersion: 1,
      contactId: ann.id,
      status: 'active',
      exitReason: null,
      currentStepId: 'welcome',
      steps: [
        { stepId: 'welcome', status: 'pending' },
        { stepId: 'step_1', status: 'pending' },
      ],
    });
    expect(first.body.id).toMatch(/^enr_/);
    const due = Date.parse(first.body.nextRunAt) - Date.parse(first.body.createdAt);
    expect(due).toBe(3600_000);
    expectError(await enrol(once.id, ann.id), 409, 'CONFLICT');
    // Canceled: with `never`, still not again.
    const url = `/sequences/${once.id}/enrollments/${first.body.id}`;
    expect((await call(env.app, 'DELETE', url, { key: t.apiKey })).status).toBe(204);
    expect((await call(env.app, 'GET', url, { key: t.apiKey })).body).toMatchObject({
      status: 'canceled',
      exitReason: 'manual',
      currentStepId: null,
      nextRunAt: null,
    });
    expectError(await call(env.app, 'DELETE', url, { key: t.apiKey }), 409, 'CONFLICT');
    expectError(await enrol(once.id, ann.id), 409, 'CONFLICT');

    const again = await published(t.apiKey, onboarding({ enrollment: { reenroll: 'after_exit' } }));
    const a1 = await enrol(again.id, ann.id);
    expect(a1.status).toBe(201);
    expectError(await enrol(again.id, ann.id), 409, 'CONFLICT');
    await call(env.app, 'DELETE', `/sequences/${again.id}/enrollments/${a1.body.id}`, { key: t.apiKey });
    expect((await enrol(again.id, ann.id)).status).toBe(201);

    const always = await published(t.apiKey, onboarding({ enrollment: { reenroll: 'always' } }));
    expect((await enrol(always.id, ann.id)).status).toBe(201);
    expect((await enrol(always.id, ann.id)).status).toBe(201);
    const list = await call(env.app, 'GET', `/sequences/${always.id}/enrollments`, {
      key: t.apiKey,
      query: { contactId: ann.id, status: 'active' },
    });
    expect(list.body.data).toHaveLength(2);

    expectError(await enrol(always.id, 'ctc_nobody'), 404, 'RESOURCE_NOT_FOUND');
    expectError(
      await call(env.app, 'POST', `/sequences/${always.id}/enrollments`, {
        key: t.apiKey,
        body: { contactId: ann.id, contactIds: [ann.id] },
      }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('enrols up to 1,000 contacts in a bulk job, each with its outcome', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const seq = await published(t.apiKey);
    const ids = [(await contact(t.apiKey)).id, (await contact(t.apiKey)).id, 'ctc_nobody'];
    ids.push(ids[0]!);
    const accepted = await call(env.app, 'POST', `/sequences/${seq.id}/enrollments`, {
      key: t.apiKey,
      body: { contactIds: ids },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'queued', total: 4, sequenceId: seq.id });
    const job = await eventually(
      () => call(env.app, 'GET', `/bulk/enrollments/${accepted.body.jobId}`, { key: t.apiKey }),
      (r) => r.body.status === 'completed',
    );
    expect(job.body).toMatchObject({ processed: 4, succeeded: 2, failed: 2 });
    expect(
      job.body.results.map((r: { outcome: string; error: { code: string } | null }) => [
        r.outcome,
        r.error?.code ?? null,
      ]),
    ).toEqual([
      ['enrolled', null],
      ['enrolled', null],
      ['failed', 'RESOURCE_NOT_FOUND'],
      ['failed', 'CONFLICT'],
    ]);
    const list = await call(env.app, 'GET', `/sequences/${seq.id}/enrollments`, { key: t.apiKey });
    expect(list.body.data.map((e: { id: string }) => e.id).sort()).toEqual(
      [job.body.results[0].enrollmentId, job.body.results[1].enrollmentId].sort(),
    );
    expectError(
      await call(env.app, 'POST', `/sequences/${seq.id}/enrollments`, {
        key: t.apiKey,
        body: { contactIds: Array.from({ length: 1001 }, (_, i) => `ctc_${i}`) },
      }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('archiving ends active enrollments; 402 below Pro; another tenant sees nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const seq = await published(t.apiKey);
    const ann = await contact(t.apiKey);
    const enrolled = await call(env.app, 'POST', `/sequences/${seq.id}/enrollments`, {
      key: t.apiKey,
      body: { contactId: ann.id },
    });
    await call(env.app, 'POST', `/sequences/${seq.id}/archive`, { key: t.apiKey });
    expect(
      (await call(env.app, 'GET', `/sequences/${seq.id}/enrollments/${enrolled.body.id}`, { key: t.apiKey }))
        .body,
    ).toMatchObject({ status: 'exited', exitReason: 'archived' });

    const starter = await provision(env.app, env.partner.partnerKey, { planCode: 'starter' });
    expectError(
      await call(env.app, 'GET', '/sequences', { key: env.partner.partnerKey, accountId: starter.accountId }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
    const b = await tenant(env.app, env.partner.partnerKey);
    for (const [method, path] of [
      ['GET', `/sequences/${seq.id}`],
      ['GET', `/sequences/${seq.id}/enrollments`],
      ['GET', `/sequences/${seq.id}/enrollments/${enrolled.body.id}`],
      ['POST', `/sequences/${seq.id}/pause`],
      ['DELETE', `/sequences/${seq.id}`],
    ] as const) {
      expectError(await call(env.app, method, path, { key: b.apiKey }), 404, 'RESOURCE_NOT_FOUND');
    }
    expect((await call(env.app, 'GET', '/sequences', { key: b.apiKey })).body.data).toEqual([]);
  });
});
