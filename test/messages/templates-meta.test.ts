// Templates from Meta: POST /templates/sync pages through the fake Graph API's
// GET /{waba-id}/message_templates (cursors, as Meta pages) and brings Tidings' templates in line,
// nothing written when a page fails; the sandbox's answer; NAMED templates submitted and sent with
// parameters by name; quick-reply payloads per send; and Meta's quality and category webhooks
// turned into template.quality_changed and template.category_changed.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCallback } from '../../src/channels/whatsapp-cloud/callbacks.ts';
import { readTemplatePage } from '../../src/channels/whatsapp-cloud/templates.ts';
import { routeBatch } from '../../src/modules/callbacks/service.ts';
import { scheduleTemplateSyncs } from '../../src/modules/templates/sync-job.ts';
import { type FakeBusiness, graphError } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  credit,
  type MessagingTenant,
  messageWhen,
  sandboxTenant,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { verifySignature } from '../helpers/receiver.ts';
import { expectError } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

let base: string;
const env = useMessagingApp({ config: { providerTimeoutMs: 2000 } });
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: FakeBusiness };
type Body = Record<string, any>;

const callbackUrl = (t: Tenant) => `${base}/api/v1/callbacks/whatsapp/${t.accountId}`;
const liveTenant = () => whatsappTenant(env.app, env.partner.partnerKey, env.fake) as Promise<Tenant>;

let seq = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${++seq}`;

const body = (text: string, examples: string[]) => ({
  type: 'BODY',
  text,
  ...(examples.length ? { example: { body_text: [examples] } } : {}),
});

async function sync(t: MessagingTenant) {
  return call(env.app, 'POST', '/templates/sync', { key: t.apiKey });
}

async function allTemplates(t: MessagingTenant): Promise<Body[]> {
  const out: Body[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: Body } = await call(
      env.app,
      'GET',
      `/templates?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      {
        key: t.apiKey,
      },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return out;
}

/** Creates a template in Tidings and submits it to Meta (the fake keeps it PENDING). */
async function submitted(t: Tenant, input: Body) {
  const created = await call(env.app, 'POST', '/templates', { key: t.apiKey, body: input });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const res = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Body;
}

/** A submitted template approved by Meta's callback. */
async function approved(t: Tenant, input: Body) {
  const row = await submitted(t, input);
  const cb = await env.fake.postTemplateStatus(callbackUrl(t), t.business, {
    templateId: row.providerTemplateId,
    name: row.name,
    language: row.language,
    event: 'APPROVED',
  });
  expect(cb.status, cb.body).toBe(200);
  return row;
}

describe('POST /templates/sync', () => {
  it('reads every page Meta has, creates the missing templates and updates the changed ones; a second sync changes nothing', async () => {
    const t = await liveTenant();
    // Known to Tidings: submitted here, then changed at Meta (approved, recategorised, edited, rated).
    const known = await submitted(t, {
      name: unique('known'),
      language: 'en_US',
      category: 'UTILITY',
      components: [body('Hi {{1}}, your order is ready. Thanks!', ['Ann'])],
    });
    const { receiver, secret } = await env.subscribe(t.apiKey, ['template.*']);
    const atMeta = env.fake.templates.get(known.providerTemplateId)!;
    atMeta.status = 'APPROVED';
    atMeta.category = 'MARKETING';
    atMeta.components = [
      {
        type: 'BODY',
        text: 'Hi {{1}}, your order {{2}} is ready. Thanks!',
        example: { body_text: [['Ann', 'A-1']] },
      },
      { type: 'FOOTER', text: 'Reply STOP to opt out' },
    ];
    atMeta.qualityScore = 'GREEN';
    // Made at Meta only (WhatsApp Manager): more than two pages of 100.
    const made = Array.from({ length: 205 }, (_, i) =>
      env.fake.addTemplate(
        t.business,
        {
          name: `meta_only_${i}`,
          language: i % 2 ? 'en_US' : 'pt_BR',
          category: 'UTILITY',
          components: [body(`Order {{1}} number ${i} is on its way. Thanks!`, ['A-1'])],
          qualityScore: i === 7 ? 'YELLOW' : 'UNKNOWN',
        },
        i === 3 ? 'REJECTED' : 'APPROVED',
      ),
    );
    env.fake.setTemplateStatus(made[3]!.id, 'REJECTED', 'INVALID_FORMAT');
    // What Tidings does not model: a LOCATION header is reported in `skipped`, not brought in.
    env.fake.addTemplate(t.business, {
      name: unique('location'),
      language: 'en_US',
      components: [{ type: 'HEADER', format: 'LOCATION' }, body('Your parcel is here. Thanks!', [])],
    });
    const before = env.fake.requests.length;

    const res = await sync(t);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      provider: 'whatsapp_cloud',
      pages: 3,
      seen: 207,
      created: 205,
      updated: 1,
      unchanged: 0,
      skipped: [{ reason: expect.stringContaining('LOCATION') }],
    });
    // Meta was asked page after page with its cursors.
    const asked = env.fake.requests.slice(before).filter((r) => r.method === 'GET');
    expect(asked).toHaveLength(3);
    const query = asked.map((r) => new URL(r.path, 'http://x').searchParams);
    expect(query[0]!.get('after')).toBeNull();
    expect(query[1]!.get('after')).toBeTruthy();
    expect(query[2]!.get('after')).toBeTruthy();
    expect(query[0]!.get('limit')).toBe('100');
    expect(query[0]!.get('fields')).toContain('quality_score');

    const rows = await allTemplates(t);
    expect(rows).toHaveLength(206);
    const byName = new Map(rows.map((r) => [`${r.name}/${r.language}`, r]));
    expect(byName.get(`${known.name}/en_US`)).toMatchObject({
      id: known.id,
      status: 'APPROVED',
      category: 'MARKETING',
      parameterCount: 2,
      parameterFormat: 'POSITIONAL',
      qualityScore: { score: 'GREEN', updatedAt: expect.any(String) },
      components: atMeta.components,
    });
    expect(byName.get('meta_only_0/pt_BR')).toMatchObject({
      status: 'APPROVED',
      provider: 'whatsapp_cloud',
      providerTemplateId: made[0]!.id,
      parameterCount: 1,
      qualityScore: { score: 'UNKNOWN' },
    });
    expect(byName.get('meta_only_3/en_US')).toMatchObject({
      status: 'REJECTED',
      rejectionReason: 'INVALID_FORMAT',
    });
    expect(byName.get('meta_only_7/en_US')).toMatchObject({ qualityScore: { score: 'YELLOW' } });

    // The known template's changes: the events a callback would have emitted, one each.
    const events = (await receiver.waitFor(3)).map((r) => {
      expect(verifySignature(secret, r)).toEqual(r.json);
      return r.json;
    });
    const byType = new Map(events.map((e) => [e.type, e.data]));
    expect(byType.get('template.status_changed')).toMatchObject({
      id: known.id,
      status: 'APPROVED',
      previousStatus: 'PENDING',
    });
    expect(byType.get('template.category_changed')).toMatchObject({
      id: known.id,
      category: 'MARKETING',
      previousCategory: 'UTILITY',
    });
    expect(byType.get('template.quality_changed')).toMatchObject({
      id: known.id,
      qualityScore: { score: 'GREEN' },
      previousQualityScore: null,
    });

    // An imported APPROVED template is sendable at once.
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: '+14155552000',
        templateName: 'meta_only_1',
        templateLanguage: 'en_US',
        parameters: ['B-2'],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await messageWhen(env.app, t.apiKey, sent.body.id, 'sent');

    const again = await sync(t);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ pages: 3, created: 0, updated: 0, unchanged: 206 });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(3);
  });

  it('writes nothing when Meta fails on a later page: 503 with Retry-After, then a sync that goes through', async () => {
    const t = await liveTenant();
    for (let i = 0; i < 150; i++) {
      env.fake.addTemplate(t.business, {
        name: `half_${i}`,
        language: 'en_US',
        components: [body('Your code {{1}} is valid today. Thanks!', ['1234'])],
      });
    }
    const business = t.business.businessAccountId;
    env.fake.respond = (req) =>
      req.method === 'GET' &&
      req.path.includes(`/${business}/message_templates`) &&
      req.path.includes('after=')
        ? graphError(131000)
        : undefined;
    try {
      const res = await sync(t);
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body.error.message).toContain('page 2');
    } finally {
      env.fake.respond = undefined;
    }
    expect(await allTemplates(t)).toHaveLength(0);

    // Meta refusing (a revoked token) is a 409 with Meta's reason; nothing written either.
    env.fake.respond = (req) =>
      req.method === 'GET' && req.path.includes(`/${business}/message_templates`)
        ? graphError(190)
        : undefined;
    try {
      expectError(await sync(t), 409, 'CONFLICT');
    } finally {
      env.fake.respond = undefined;
    }
    expect(await allTemplates(t)).toHaveLength(0);

    const res = await sync(t);
    expect(res.body).toMatchObject({ pages: 2, created: 150 });
    expect(await allTemplates(t)).toHaveLength(150);
  });

  it('runs every hour for each account on the WhatsApp Cloud API, at most once an hour per account', async () => {
    const t = await liveTenant();
    for (const name of ['hourly_a', 'hourly_b']) {
      env.fake.addTemplate(t.business, {
        name,
        language: 'en_US',
        components: [body('Your visit {{1}} is booked. Thanks!', ['Monday'])],
      });
    }
    expect(await scheduleTemplateSyncs(env.app.ctx)).toBeGreaterThanOrEqual(1);
    const rows = await eventually(
      () => allTemplates(t),
      (r) => r.length === 2,
    );
    expect(rows.map((r) => r.name).sort()).toEqual(['hourly_a', 'hourly_b']);
    // The same clock hour: every account's sync is already there, whichever process sweeps.
    expect(await scheduleTemplateSyncs(env.app.ctx)).toBe(0);
  });

  it('leaves a DRAFT of the same name as it is, and says so', async () => {
    const t = await liveTenant();
    const name = unique('drafted');
    const draft = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name,
        language: 'en_US',
        category: 'UTILITY',
        components: [body('Hello there, welcome. Thanks!', [])],
      },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(201);
    const atMeta = env.fake.addTemplate(t.business, {
      name,
      language: 'en_US',
      components: [body('A different text made at Meta. Thanks!', [])],
    });
    const res = await sync(t);
    expect(res.body).toMatchObject({
      created: 0,
      updated: 0,
      skipped: [
        { name, language: 'en_US', providerTemplateId: atMeta.id, reason: expect.stringContaining('DRAFT') },
      ],
    });
    const now = await call(env.app, 'GET', `/templates/${draft.body.id}`, { key: t.apiKey });
    expect(now.body).toEqual(draft.body);
  });

  it('has no Meta to read on the sandbox: 200 with nothing read or changed', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const before = env.fake.requests.length;
    const res = await sync(t);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      provider: 'sandbox',
      pages: 0,
      seen: 0,
      created: 0,
      updated: 0,
      unchanged: 0,
      skipped: [],
    });
    expect(env.fake.requests.length).toBe(before);
  });
});

describe('NAMED templates', () => {
  const named = (name: string) => ({
    name,
    language: 'en_US',
    category: 'UTILITY',
    parameterFormat: 'NAMED',
    components: [
      {
        type: 'HEADER',
        format: 'TEXT',
        text: 'Order {{order_id}}',
        example: { header_text_named_params: [{ param_name: 'order_id', example: 'A-1' }] },
      },
      {
        type: 'BODY',
        text: 'Hi {{first_name}}, your order arrives on {{day}}. Thanks!',
        example: {
          body_text_named_params: [
            { param_name: 'first_name', example: 'Ada' },
            { param_name: 'day', example: 'Friday' },
          ],
        },
      },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Yes' },
          { type: 'QUICK_REPLY', text: 'No' },
        ],
      },
    ],
  });

  it('are submitted to Meta with parameter_format NAMED and named examples', async () => {
    const t = await liveTenant();
    const row = await submitted(t, named(unique('named')));
    expect(row).toMatchObject({ parameterFormat: 'NAMED', parameterCount: 3, status: 'PENDING' });
    const request = env.fake.requests.findLast(
      (r) => r.method === 'POST' && r.path.endsWith('/message_templates'),
    );
    expect(request!.body).toMatchObject({
      name: row.name,
      parameter_format: 'NAMED',
      components: [
        {
          type: 'HEADER',
          example: { header_text_named_params: [{ param_name: 'order_id', example: 'A-1' }] },
        },
        {
          type: 'BODY',
          example: {
            body_text_named_params: [
              { param_name: 'first_name', example: 'Ada' },
              { param_name: 'day', example: 'Friday' },
            ],
          },
        },
        { type: 'BUTTONS' },
      ],
    });
    expect(env.fake.templates.get(row.providerTemplateId)).toMatchObject({ parameterFormat: 'NAMED' });

    // Rejected, edited and submitted again: Meta's edit of its template says NAMED again.
    const cb = await env.fake.postTemplateStatus(callbackUrl(t), t.business, {
      templateId: row.providerTemplateId,
      name: row.name,
      language: 'en_US',
      event: 'REJECTED',
      reason: 'INVALID_FORMAT',
    });
    expect(cb.status, cb.body).toBe(200);
    const edited = await call(env.app, 'PATCH', `/templates/${row.id}`, {
      key: t.apiKey,
      body: { components: named(row.name).components.slice(1) },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body).toMatchObject({ status: 'DRAFT', parameterFormat: 'NAMED', parameterCount: 2 });
    const again = await call(env.app, 'POST', `/templates/${row.id}/submit`, { key: t.apiKey });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const edit = env.fake.requests.findLast(
      (r) => r.method === 'POST' && r.path.endsWith(`/${row.providerTemplateId}`),
    );
    expect(edit!.body).toMatchObject({
      parameter_format: 'NAMED',
      components: [{ type: 'BODY' }, { type: 'BUTTONS' }],
    });
  });

  it('refuse numbered placeholders, missing examples and names Meta would not take, naming the field', async () => {
    const t = await liveTenant();
    const input = named(unique('bad_named'));
    input.components[1] = {
      type: 'BODY',
      text: 'Hi {{1}}, and {{First}} too. Thanks!',
      example: { body_text_named_params: [{ param_name: 'first_name', example: 'Ada' }] },
    } as any;
    const res = await call(env.app, 'POST', '/templates', { key: t.apiKey, body: input });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toContainEqual({
      field: 'components[1].text',
      issue: expect.stringContaining('{{1}}'),
    });

    const missing = named(unique('bad_named'));
    (missing.components[1] as any).example.body_text_named_params.pop();
    const res2 = await call(env.app, 'POST', '/templates', { key: t.apiKey, body: missing });
    expectError(res2, 400, 'INVALID_REQUEST');
    expect(res2.body.error.details).toEqual([
      { field: 'components[1].example.body_text_named_params', issue: 'lacks an example for {{day}}' },
    ]);

    const positional = { ...named(unique('bad_named')), parameterFormat: 'POSITIONAL' };
    const res3 = await call(env.app, 'POST', '/templates', { key: t.apiKey, body: positional });
    expectError(res3, 400, 'INVALID_REQUEST');
    expect(res3.body.error.details).toContainEqual({
      field: 'components[1].text',
      issue: expect.stringContaining('set parameterFormat NAMED'),
    });
  });

  it('are sent with parameters by name: Meta gets each parameter_name; a missing or unknown name is a 400 naming it', async () => {
    const t = await liveTenant();
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const row = await approved(t, named(unique('named_send')));
    const base = { to: '+14155552001', templateName: row.name, templateLanguage: 'en_US' };
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...base, parameters: { first_name: 'Ada', day: 'Friday', order_id: 'A-7' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.template).toMatchObject({
      parameters: { first_name: 'Ada', day: 'Friday', order_id: 'A-7' },
      body: 'Hi Ada, your order arrives on Friday. Thanks!',
    });
    const sent = await messageWhen(env.app, t.apiKey, res.body.id, 'sent');
    const got = env.fake.sent.find((m) => m.body.biz_opaque_callback_data === sent.id)!;
    expect(got.body.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'text', parameter_name: 'order_id', text: 'A-7' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', parameter_name: 'first_name', text: 'Ada' },
          { type: 'text', parameter_name: 'day', text: 'Friday' },
        ],
      },
    ]);

    const wrong = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...base, parameters: { first_name: 'Ada', order_id: 'A-7', dya: 'Friday' } },
    });
    expectError(wrong, 400, 'INVALID_REQUEST');
    expect(wrong.body.error.details).toEqual([
      { field: 'parameters.day', issue: expect.stringContaining('is required') },
      { field: 'parameters.dya', issue: expect.stringContaining('is not a placeholder') },
    ]);
    const list = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...base, parameters: ['Ada', 'Friday', 'A-7'] },
    });
    expectError(list, 400, 'INVALID_REQUEST');
    expect(list.body.error.details[0]).toMatchObject({
      field: 'parameters',
      issue: expect.stringContaining('NAMED'),
    });

    // In bulk, each recipient's own object is checked under its own field.
    const bulk = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: {
        templateName: row.name,
        templateLanguage: 'en_US',
        parameters: { first_name: 'Ada', day: 'Friday', order_id: 'A-7' },
        recipients: [{ to: '+14155552002' }, { to: '+14155552003', parameters: { first_name: 'Bo' } }],
      },
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(202);
    expect(bulk.body.results[0]).toMatchObject({ messageId: expect.any(String), error: null });
    expect(bulk.body.results[1].error.details).toContainEqual({
      field: 'recipients[1].parameters.day',
      issue: expect.any(String),
    });
  });

  it('go through the sandbox too: reviewed, approved and sent with values by name', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const created = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: named(unique('sandbox_named')),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
    const decided = await eventually(
      () => call(env.app, 'GET', `/templates/${created.body.id}`, { key: t.apiKey }),
      (r) => r.body.status !== 'PENDING',
    );
    expect(decided.body).toMatchObject({ status: 'APPROVED', parameterFormat: 'NAMED', qualityScore: null });
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: '+14155552010',
        templateName: created.body.name,
        templateLanguage: 'en_US',
        parameters: { first_name: 'Ada', day: 'Friday', order_id: 'A-7' },
        buttonPayloads: [{ index: 1, payload: 'no-7' }],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.template).toMatchObject({
      body: 'Hi Ada, your order arrives on Friday. Thanks!',
      buttonPayloads: [{ index: 1, payload: 'no-7' }],
    });
    await messageWhen(env.app, t.apiKey, res.body.id, 'read');
  });

  it('are sent by campaigns with Liquid values by name', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const created = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: named(unique('campaign_named')),
    });
    await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
    await eventually(
      () => call(env.app, 'GET', `/templates/${created.body.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'APPROVED',
    );
    const phone = '+14155552021';
    const contact = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone, name: 'Ada' } });
    expect(contact.status, JSON.stringify(contact.body)).toBe(201);
    const message = { templateName: created.body.name, templateLanguage: 'en_US' };
    const audience = { contactIds: [contact.body.id] };

    const wrong = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'x',
        message: { ...message, parameters: { first_name: '{{ contact.name }}' } },
        audience,
      },
    });
    expectError(wrong, 400, 'INVALID_REQUEST');
    expect(wrong.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'message.parameters.day',
      'message.parameters.order_id',
    ]);
    const list = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: { name: 'x', message: { ...message, parameters: ['a', 'b', 'c'] }, audience },
    });
    expectError(list, 400, 'INVALID_REQUEST');

    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Delivery days',
        message: {
          ...message,
          parameters: { first_name: '{{ contact.name | default: "there" }}', day: 'Friday', order_id: 'A-7' },
        },
        audience,
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.message.parameters).toEqual({
      first_name: '{{ contact.name | default: "there" }}',
      day: 'Friday',
      order_id: 'A-7',
    });
    const started = await call(env.app, 'POST', `/campaigns/${made.body.id}/start`, { key: t.apiKey });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const sent = await eventually(
      () => call(env.app, 'GET', `/messages?to=${encodeURIComponent(phone)}`, { key: t.apiKey }),
      (r) => r.body.data?.length === 1,
    );
    expect(sent.body.data[0].template).toMatchObject({
      parameters: { first_name: 'Ada', day: 'Friday', order_id: 'A-7' },
      body: 'Hi Ada, your order arrives on Friday. Thanks!',
    });
  });

  it('a positional template given an object is a 400', async () => {
    const t = await liveTenant();
    const row = await approved(t, {
      name: unique('positional'),
      language: 'en_US',
      category: 'UTILITY',
      components: [body('Hi {{1}}, welcome aboard. Thanks!', ['Ada'])],
    });
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: '+14155552004',
        templateName: row.name,
        templateLanguage: 'en_US',
        parameters: { name: 'Ada' },
      },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details[0]).toMatchObject({
      field: 'parameters',
      issue: expect.stringContaining('POSITIONAL'),
    });
  });
});

describe('quick-reply payloads per send', () => {
  it('reach Meta as quick_reply button parameters, are kept with the message, and must name a QUICK_REPLY button', async () => {
    const t = await liveTenant();
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const row = await approved(t, {
      name: unique('quick'),
      language: 'en_US',
      category: 'UTILITY',
      components: [
        body('Is {{1}} still good for you? Thanks!', ['Friday']),
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Yes' },
            { type: 'QUICK_REPLY', text: 'No' },
            { type: 'URL', text: 'Details', url: 'https://example.com/booking' },
          ],
        },
      ],
    });
    const base = {
      to: '+14155552005',
      templateName: row.name,
      templateLanguage: 'en_US',
      parameters: ['Friday'],
    };
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        ...base,
        buttonPayloads: [
          { index: 0, payload: 'yes-123' },
          { index: 1, payload: 'no-123' },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.template.buttonPayloads).toEqual([
      { index: 0, payload: 'yes-123' },
      { index: 1, payload: 'no-123' },
    ]);
    await messageWhen(env.app, t.apiKey, res.body.id, 'sent');
    const got = env.fake.sent.find((m) => m.body.biz_opaque_callback_data === res.body.id)!;
    expect(got.body.template.components).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: 'Friday' }] },
      {
        type: 'button',
        sub_type: 'quick_reply',
        index: '0',
        parameters: [{ type: 'payload', payload: 'yes-123' }],
      },
      {
        type: 'button',
        sub_type: 'quick_reply',
        index: '1',
        parameters: [{ type: 'payload', payload: 'no-123' }],
      },
    ]);

    for (const [index, issue] of [
      [2, 'not a QUICK_REPLY'],
      [5, 'names no button'],
    ] as const) {
      const bad = await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: {
          ...base,
          buttonPayloads: [
            { index: 0, payload: 'ok' },
            { index, payload: 'x' },
          ],
        },
      });
      expectError(bad, 400, 'INVALID_REQUEST');
      expect(bad.body.error.details).toEqual([
        { field: 'buttonPayloads[1].index', issue: expect.stringContaining(issue) },
      ]);
    }
  });

  it('are kept with the message: a send retried after an outage carries the same payload', async () => {
    const t = await liveTenant();
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    const row = await approved(t, {
      name: unique('quick_retry'),
      language: 'en_US',
      category: 'UTILITY',
      components: [
        body('Shall we call you on {{1}}? Thanks!', ['Friday']),
        { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Yes' }] },
      ],
    });
    env.fake.failNext(graphError(131000));
    const res = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: '+14155552006',
        templateName: row.name,
        templateLanguage: 'en_US',
        parameters: ['Friday'],
        buttonPayloads: [{ index: 0, payload: 'call-me' }],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await messageWhen(env.app, t.apiKey, res.body.id, 'sent', 20_000);
    const got = env.fake.sent.find((m) => m.body.biz_opaque_callback_data === res.body.id)!;
    expect(got.body.template.components).toContainEqual({
      type: 'button',
      sub_type: 'quick_reply',
      index: '0',
      parameters: [{ type: 'payload', payload: 'call-me' }],
    });
  });
});

describe("Meta's template signals", () => {
  it('message_template_quality_update and template_category_update update the template, one event each', async () => {
    const t = await liveTenant();
    const row = await approved(t, {
      name: unique('signals'),
      language: 'en_US',
      category: 'UTILITY',
      components: [body('Hi {{1}}, your parcel is out. Thanks!', ['Ada'])],
    });
    const { receiver, secret } = await env.subscribe(t.apiKey, [
      'template.quality_changed',
      'template.category_changed',
    ]);

    const quality = await env.fake.postTemplateQuality(
      callbackUrl(t),
      t.business,
      row.providerTemplateId,
      'YELLOW',
    );
    expect(quality.status, quality.body).toBe(200);
    const [q] = await receiver.waitFor(1);
    expect(verifySignature(secret, q!)).toEqual(q!.json);
    expect(q!.json).toMatchObject({
      type: 'template.quality_changed',
      data: { id: row.id, qualityScore: { score: 'YELLOW' }, previousQualityScore: null },
    });

    // Announced a day ahead: the category stays until Meta makes the change.
    const notice = await env.fake.postTemplateCategory(
      callbackUrl(t),
      t.business,
      row.providerTemplateId,
      'MARKETING',
      {
        announce: true,
      },
    );
    expect(notice.status, notice.body).toBe(200);
    const [, n] = await receiver.waitFor(2);
    expect(n!.json).toMatchObject({
      type: 'template.category_changed',
      data: {
        id: row.id,
        category: 'UTILITY',
        previousCategory: 'UTILITY',
        upcoming: { category: 'MARKETING', at: expect.any(String) },
      },
    });

    const changed = await env.fake.postTemplateCategory(
      callbackUrl(t),
      t.business,
      row.providerTemplateId,
      'MARKETING',
    );
    expect(changed.status, changed.body).toBe(200);
    const [, , c] = await receiver.waitFor(3);
    expect(c!.json).toMatchObject({
      type: 'template.category_changed',
      data: { id: row.id, category: 'MARKETING', previousCategory: 'UTILITY', upcoming: null },
    });

    const now = await call(env.app, 'GET', `/templates/${row.id}`, { key: t.apiKey });
    expect(now.body).toMatchObject({
      category: 'MARKETING',
      qualityScore: { score: 'YELLOW', updatedAt: expect.any(String) },
    });

    // A repeat changes nothing and emits nothing; a later sync agrees with the callbacks.
    await env.fake.postTemplateQuality(callbackUrl(t), t.business, row.providerTemplateId, 'YELLOW');
    const synced = await sync(t);
    expect(synced.body).toMatchObject({ created: 0, updated: 0, unchanged: 1 });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(3);
  });
});

describe('reading what Meta sends', () => {
  const envelope = (field: string, value: unknown) => ({
    object: 'whatsapp_business_account',
    entry: [{ id: '102290129340398', time: 1739321024, changes: [{ field, value }] }],
  });
  const named = {
    message_template_id: 278077987957091,
    message_template_name: 'welcome',
    message_template_language: 'en_US',
  };

  it('turns the two template webhooks into updates, and anything malformed into unknown', () => {
    expect(
      parseCallback(
        envelope('message_template_quality_update', {
          ...named,
          previous_quality_score: 'GREEN',
          new_quality_score: 'RED',
        }),
      ),
    ).toEqual([
      {
        kind: 'template_quality',
        providerTemplateId: '278077987957091',
        name: 'welcome',
        language: 'en_US',
        previousScore: 'GREEN',
        score: 'RED',
      },
    ]);
    expect(
      parseCallback(
        envelope('template_category_update', {
          ...named,
          correct_category: 'MARKETING',
          new_category: 'UTILITY',
          category_update_timestamp: 1760711433,
        }),
      ),
    ).toEqual([
      {
        kind: 'template_category',
        providerTemplateId: '278077987957091',
        name: 'welcome',
        language: 'en_US',
        previousCategory: null,
        category: 'UTILITY',
        correctCategory: 'MARKETING',
        scheduledAt: new Date(1760711433 * 1000),
      },
    ]);
    expect(
      parseCallback(
        envelope('template_category_update', {
          ...named,
          previous_category: 'UTILITY',
          new_category: 'MARKETING',
        }),
      ),
    ).toMatchObject([
      {
        kind: 'template_category',
        previousCategory: 'UTILITY',
        category: 'MARKETING',
        correctCategory: null,
      },
    ]);
    expect(
      parseCallback(envelope('message_template_quality_update', { ...named, new_quality_score: 'PURPLE' })),
    ).toMatchObject([{ kind: 'unknown', field: 'message_template_quality_update' }]);
    expect(parseCallback(envelope('template_category_update', { new_category: 'MARKETING' }))).toMatchObject([
      { kind: 'unknown', field: 'template_category_update' },
    ]);
  });

  it('routes a quality or category update on a partner app URL to every account on the WABA', () => {
    const channels = [
      { accountId: 'acc_a', phoneNumberId: '1', businessAccountId: 'waba' },
      { accountId: 'acc_b', phoneNumberId: '2', businessAccountId: 'waba' },
    ];
    for (const value of [
      { ...named, previous_quality_score: 'GREEN', new_quality_score: 'RED' },
      { ...named, previous_category: 'UTILITY', new_category: 'MARKETING' },
    ]) {
      const field =
        'new_quality_score' in value ? 'message_template_quality_update' : 'template_category_update';
      const updates = parseCallback(envelope(field, value));
      const batch = { destination: { phoneNumberId: null, businessAccountId: 'waba' }, updates };
      expect(routeBatch(batch, channels)).toEqual({ accountIds: ['acc_a', 'acc_b'] });
    }
  });

  it('reads a page of templates: the last page is the one without paging.next', () => {
    const template = {
      id: '1',
      name: 'a',
      language: 'en',
      status: 'APPROVED',
      category: 'UTILITY',
      components: [],
    };
    expect(
      readTemplatePage({
        data: [template, { name: 'no id' }],
        paging: { cursors: { before: 'QVFI', after: 'QVFJ' }, next: 'https://graph.facebook.com/…' },
      }),
    ).toMatchObject({
      after: 'QVFJ',
      unreadable: 1,
      templates: [{ providerTemplateId: '1', parameterFormat: 'POSITIONAL', qualityScore: null }],
    });
    expect(
      readTemplatePage({ data: [template], paging: { cursors: { before: 'QVFI', after: 'QVFJ' } } }),
    ).toMatchObject({ after: null });
    expect(readTemplatePage({ data: [] })).toMatchObject({ after: null, templates: [] });
    expect(readTemplatePage({ error: {} })).toBeNull();
  });
});
