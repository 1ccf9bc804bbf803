// Messages through the WhatsApp Cloud API, against a local fake of Meta's Graph API that checks
// every request as Meta does and sends signed callbacks back over real HTTP: the exact bodies Meta
// receives, the charge and its refund when Meta refuses, retries of an outage, status callbacks in
// any order, the template lifecycle decided by Meta's callbacks, and callbacks whose signature
// does not check out (refused and logged).
import { beforeAll, describe, expect, it } from 'vitest';
import { type FakeWhatsAppCloud, graphError } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey } from '../helpers/client.ts';
import {
  balanceOf,
  credit,
  customerWrote,
  eventually,
  type MessagingTenant,
  messageWhen,
  sleep,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import type { Receiver } from '../helpers/receiver.ts';
import { expectError } from '../helpers/setup.ts';

let base: string;
const logs: string[] = [];
const env = useMessagingApp({
  config: {
    providerTimeoutMs: 1000,
    dispatchRetryLimit: 2,
    dispatchRetryDelaySeconds: 1,
    logLevel: 'warn',
  },
  logStream: { write: (line) => logs.push(line) },
});
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: ReturnType<FakeWhatsAppCloud['createBusiness']> };

const callbackUrl = (t: Tenant) => `${base}/api/v1/callbacks/whatsapp/${t.accountId}`;

async function liveTenant(money = '10.00'): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, money);
  return t;
}

async function subscribe(t: Tenant, events: string[]): Promise<Receiver> {
  return (await env.subscribe(t.apiKey, events)).receiver;
}

/** Creates and submits a template; Meta (the fake) takes it as PENDING and approves it by callback. */
async function metaApproved(
  t: Tenant,
  name: string,
  category = 'UTILITY',
  body = 'Hi {{1}}, your order {{2}} has shipped. Thanks!',
) {
  const created = await call(env.app, 'POST', '/templates', {
    key: t.apiKey,
    body: {
      name,
      language: 'en_US',
      category,
      components: [{ type: 'BODY', text: body, example: { body_text: [['Ann', 'A-1']] } }],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  expect(submitted.body).toMatchObject({ status: 'PENDING', provider: 'whatsapp_cloud' });
  const providerTemplateId = submitted.body.providerTemplateId as string;
  expect(env.fake.templates.get(providerTemplateId)).toMatchObject({ name, language: 'en_US', category });
  const cb = await env.fake.postTemplateStatus(callbackUrl(t), t.business, {
    templateId: providerTemplateId,
    name,
    language: 'en_US',
    event: 'APPROVED',
  });
  expect(cb.status, cb.body).toBe(200);
  const approved = await call(env.app, 'GET', `/templates/${created.body.id}`, { key: t.apiKey });
  expect(approved.body.status).toBe('APPROVED');
  return { ...approved.body, providerTemplateId } as { id: string; providerTemplateId: string };
}

async function send(t: Tenant, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body, headers });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

async function ledger(t: Tenant) {
  const res = await call(env.app, 'GET', '/account/wallet/transactions', { key: t.apiKey });
  return res.body.data as { type: string; amount: { amount: string }; reference: string | null }[];
}

describe('a template message through the WhatsApp Cloud API', () => {
  it('reaches Meta exactly as the Graph API has it, is charged, and follows Meta’s callbacks to read', async () => {
    const t = await liveTenant();
    await metaApproved(t, 'order_shipped');
    const hook = await subscribe(t, ['message.*']);
    const queued = await send(t, {
      to: '+14155550123',
      templateName: 'order_shipped',
      templateLanguage: 'en_US',
      parameters: ['Ann', 'A-1'],
    });
    expect(queued).toMatchObject({
      status: 'queued',
      channel: 'whatsapp_cloud',
      sandbox: false,
      pricing: { country: 'US', category: 'utility', charged: { amount: '0.0034' }, refunded: false },
    });
    const [sent] = await env.fake.waitForSends(1);
    expect(sent!.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '+14155550123',
      biz_opaque_callback_data: queued.id,
      type: 'template',
      template: {
        name: 'order_shipped',
        language: { code: 'en_US' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ann' },
              { type: 'text', text: 'A-1' },
            ],
          },
        ],
      },
    });
    const handedOver = await messageWhen(env.app, t.apiKey, queued.id, 'sent');
    expect(handedOver.providerMessageId).toBe(sent!.wamid);
    expect(await balanceOf(env.app, t.apiKey)).toBe('9.9966');

    for (const status of ['delivered', 'read'] as const) {
      const cb = await env.fake.postStatus(callbackUrl(t), t.business, {
        wamid: sent!.wamid,
        status,
        recipientId: '14155550123',
      });
      expect(cb.status, cb.body).toBe(200);
      expect(JSON.parse(cb.body)).toEqual({ applied: 1, dropped: 0 });
    }
    const read = await messageWhen(env.app, t.apiKey, queued.id, 'read');
    expect(read.deliveredAt).not.toBeNull();
    expect(read.readAt >= read.deliveredAt).toBe(true);
    const events = (await hook.waitFor(3)).map((r) => r.json);
    expect(events.map((e) => [e.type, e.data.previousStatus])).toEqual([
      ['message.sent', 'queued'],
      ['message.delivered', 'sent'],
      ['message.read', 'delivered'],
    ]);
    expect(events[2].data).toMatchObject({ id: queued.id, status: 'read', providerMessageId: sent!.wamid });
  });

  it('takes callbacks out of order and twice: a late delivered only fills its time, a repeat changes nothing', async () => {
    const t = await liveTenant();
    await metaApproved(t, 'out_of_order');
    const hook = await subscribe(t, ['message.*']);
    const queued = await send(t, {
      to: '+14155550124',
      templateName: 'out_of_order',
      templateLanguage: 'en_US',
      parameters: ['A', 'B'],
    });
    await messageWhen(env.app, t.apiKey, queued.id, 'sent');
    const wamid = env.fake.sent.find((s) => s.to === '+14155550124')!.wamid;
    const read = await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid,
      status: 'read',
      recipientId: '14155550124',
    });
    expect(JSON.parse(read.body)).toEqual({ applied: 1, dropped: 0 });
    const again = await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid,
      status: 'read',
      recipientId: '14155550124',
    });
    expect(JSON.parse(again.body)).toEqual({ applied: 0, dropped: 0 });
    const late = await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid,
      status: 'delivered',
      recipientId: '14155550124',
    });
    expect(late.status).toBe(200);
    const message = (await call(env.app, 'GET', `/messages/${queued.id}`, { key: t.apiKey })).body;
    expect(message.status).toBe('read');
    expect(message.deliveredAt).not.toBeNull();
    await hook.waitFor(2);
    await sleep(300);
    expect(hook.received.map((r) => r.json.type)).toEqual(['message.sent', 'message.read']);
  });
});

describe('free-form messages', () => {
  it('reach one number one at a time, in the order they were accepted, while Meta takes its time', async () => {
    const t = await liveTenant('1.00');
    const to = '+14155550126';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 3600_000));
    // Each hand-over takes 30 ms: sent concurrently, or by two dispatch loops at once, the later
    // messages would overtake the earlier ones.
    env.fake.latencyMs = 30;
    try {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await send(t, { to, type: 'text', text: `step ${i}` })).id);
      const arrived = await eventually(
        async () => env.fake.sent.filter((s) => s.to === to),
        (found) => found.length >= 12,
      );
      expect(arrived.map((s) => s.body.biz_opaque_callback_data)).toEqual(ids);
      expect(arrived.map((s) => s.body.text.body)).toEqual(ids.map((_, i) => `step ${i}`));
    } finally {
      env.fake.latencyMs = 0;
    }
  });

  it('reach Meta as text, media, reply buttons and a list, inside the customer service window, charged as service', async () => {
    const t = await liveTenant('1.00');
    const to = '+14155550125';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 3600_000));
    const bodies = [
      { type: 'text', text: 'Your table is ready', previewUrl: true },
      {
        type: 'media',
        media: {
          kind: 'document',
          url: 'https://example.com/menu.pdf',
          caption: 'Menu',
          filename: 'menu.pdf',
        },
      },
      {
        type: 'interactive',
        interactive: {
          kind: 'buttons',
          header: 'Table',
          body: 'Confirm?',
          footer: 'Reply below',
          buttons: [
            { id: 'yes', title: 'Yes' },
            { id: 'no', title: 'No' },
          ],
        },
      },
      {
        type: 'interactive',
        interactive: {
          kind: 'list',
          body: 'Pick a time',
          buttonText: 'Times',
          sections: [
            {
              title: 'Evening',
              rows: [
                { id: 't19', title: '19:00', description: 'Window seat' },
                { id: 't20', title: '20:00' },
              ],
            },
          ],
        },
      },
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const m = await send(t, { to, ...body });
      // Meta charges service messages from 2026-10-01: the market's rate (the shipped book's).
      expect(m.pricing).toMatchObject({ category: 'service', charged: { amount: '0.0034' } });
      ids.push(m.id);
    }
    const mine = (
      await eventually(
        async () => env.fake.sent.filter((s) => s.to === to),
        (found) => found.length >= 4,
      )
    ).map((s) => s.body);
    expect(mine).toEqual([
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to,
        biz_opaque_callback_data: ids[0],
        type: 'text',
        text: { body: 'Your table is ready', preview_url: true },
      },
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to,
        biz_opaque_callback_data: ids[1],
        type: 'document',
        document: { link: 'https://example.com/menu.pdf', caption: 'Menu', filename: 'menu.pdf' },
      },
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to,
        biz_opaque_callback_data: ids[2],
        type: 'interactive',
        interactive: {
          type: 'button',
          header: { type: 'text', text: 'Table' },
          body: { text: 'Confirm?' },
          footer: { text: 'Reply below' },
          action: {
            buttons: [
              { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
              { type: 'reply', reply: { id: 'no', title: 'No' } },
            ],
          },
        },
      },
      {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to,
        biz_opaque_callback_data: ids[3],
        type: 'interactive',
        interactive: {
          type: 'list',
          body: { text: 'Pick a time' },
          action: {
            button: 'Times',
            sections: [
              {
                title: 'Evening',
                rows: [
                  { id: 't19', title: '19:00', description: 'Window seat' },
                  { id: 't20', title: '20:00' },
                ],
              },
            ],
          },
        },
      },
    ]);
    for (const id of ids) await messageWhen(env.app, t.apiKey, id, 'sent');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9864');
  });
});

describe('failures and refunds', () => {
  it('refunds a message Meta refuses (131026), in the ledger as a refund of that message', async () => {
    const t = await liveTenant('1.00');
    await metaApproved(
      t,
      'promo_refused',
      'MARKETING',
      'Hi {{1}}, our {{2}} sale starts today. Reply STOP to opt out.',
    );
    const hook = await subscribe(t, ['message.failed']);
    env.fake.failNext(graphError(131026));
    const queued = await send(t, {
      to: '+14155550126',
      templateName: 'promo_refused',
      templateLanguage: 'en_US',
      parameters: ['Ann', 'spring'],
    });
    expect(queued.pricing.charged.amount).toBe('0.0250');
    const failed = await messageWhen(env.app, t.apiKey, queued.id, 'failed');
    expect(failed.error).toMatchObject({ code: 'RECIPIENT_UNREACHABLE', providerCode: 131026 });
    expect(failed.pricing.refunded).toBe(true);
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');
    const entries = await ledger(t);
    expect(entries.slice(0, 2).map((e) => [e.type, e.amount.amount, e.reference])).toEqual([
      ['refund', '0.0250', queued.id],
      ['debit', '-0.0250', queued.id],
    ]);
    const [event] = await hook.waitFor(1);
    expect(event!.json.data).toMatchObject({ id: queued.id, status: 'failed', previousStatus: 'queued' });
  });

  it('retries an outage and sends once Meta answers', async () => {
    const t = await liveTenant();
    await metaApproved(t, 'retry_me');
    const before = env.fake.requests.length;
    env.fake.failNext(graphError(131016));
    const queued = await send(t, {
      to: '+14155550127',
      templateName: 'retry_me',
      templateLanguage: 'en_US',
      parameters: ['A', 'B'],
    });
    const sent = await messageWhen(env.app, t.apiKey, queued.id, 'sent', 15_000);
    const attempts = env.fake.requests
      .slice(before)
      .filter((r) => r.method === 'POST' && r.path.endsWith('/messages'));
    expect(attempts).toHaveLength(2);
    expect(sent.pricing.refunded).toBe(false);
  });

  it('fails and refunds a message whose retries run out', async () => {
    const t = await liveTenant('1.00');
    await metaApproved(
      t,
      'never_up',
      'MARKETING',
      'Hi {{1}}, the {{2}} offer is waiting for you. Reply STOP to opt out.',
    );
    env.fake.failNext({ status: 500, body: 'upstream broke' }, 3);
    const queued = await send(t, {
      to: '+14155550128',
      templateName: 'never_up',
      templateLanguage: 'en_US',
      parameters: ['A', 'B'],
    });
    const failed = await messageWhen(env.app, t.apiKey, queued.id, 'failed', 20_000);
    expect(failed.error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(failed.pricing.refunded).toBe(true);
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');
  });

  it('refunds a message Meta reports failed after taking it, but not one reported failed after delivery', async () => {
    const t = await liveTenant('1.00');
    await metaApproved(
      t,
      'late_failure',
      'MARKETING',
      'Hi {{1}}, your {{2}} coupon expires soon. Reply STOP to opt out.',
    );
    const a = await send(t, {
      to: '+14155550129',
      templateName: 'late_failure',
      templateLanguage: 'en_US',
      parameters: ['A', 'B'],
    });
    const b = await send(t, {
      to: '+14155550130',
      templateName: 'late_failure',
      templateLanguage: 'en_US',
      parameters: ['A', 'B'],
    });
    await messageWhen(env.app, t.apiKey, a.id, 'sent');
    await messageWhen(env.app, t.apiKey, b.id, 'sent');
    const wamidOf = (to: string) => env.fake.sent.find((s) => s.to === to)!.wamid;
    const failure = {
      status: 'failed' as const,
      errors: [{ code: 131049, title: 'Not delivered to maintain healthy ecosystem engagement' }],
    };
    await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid: wamidOf('+14155550129'),
      recipientId: '14155550129',
      ...failure,
    });
    await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid: wamidOf('+14155550130'),
      recipientId: '14155550130',
      status: 'delivered',
    });
    const ignored = await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid: wamidOf('+14155550130'),
      recipientId: '14155550130',
      ...failure,
    });
    expect(JSON.parse(ignored.body)).toEqual({ applied: 0, dropped: 0 });
    const failedA = (await call(env.app, 'GET', `/messages/${a.id}`, { key: t.apiKey })).body;
    expect(failedA).toMatchObject({
      status: 'failed',
      error: { code: 'RECIPIENT_UNREACHABLE', providerCode: 131049 },
    });
    expect(failedA.pricing.refunded).toBe(true);
    expect((await call(env.app, 'GET', `/messages/${b.id}`, { key: t.apiKey })).body.status).toBe(
      'delivered',
    );
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
  });

  it('fails and refunds a message accepted for WhatsApp when the account has switched to the sandbox before it went', async () => {
    const t = await liveTenant('1.00');
    await metaApproved(
      t,
      'switched',
      'MARKETING',
      'Hi {{1}}, see the {{2}} catalogue. Reply STOP to opt out.',
    );
    await env.app.ctx.jobs.stop(5000);
    try {
      const queued = await send(t, {
        to: '+14155550131',
        templateName: 'switched',
        templateLanguage: 'en_US',
        parameters: ['A', 'B'],
      });
      expect(
        (await call(env.app, 'PUT', '/account/channel', { key: t.apiKey, body: { provider: 'sandbox' } }))
          .status,
      ).toBe(200);
      await env.app.ctx.jobs.start();
      await env.app.ctx.jobs.runWorkers();
      const failed = await messageWhen(env.app, t.apiKey, queued.id, 'failed');
      expect(failed.error.code).toBe('CHANNEL_NOT_CONFIGURED');
      expect(failed.pricing.refunded).toBe(true);
    } finally {
      await env.app.ctx.jobs.start();
    }
  });
});

describe('the template lifecycle through Meta', () => {
  it('follows Meta’s decisions: rejected with a reason, edited, approved, paused (sends refused), reinstated', async () => {
    const t = await liveTenant();
    const hook = await subscribe(t, ['template.status_changed']);
    const created = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name: 'lifecycle',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          { type: 'BODY', text: 'Your code {{1}} is ready. Thanks!', example: { body_text: [['42']] } },
        ],
      },
    });
    const id = created.body.id;
    const first = await call(env.app, 'POST', `/templates/${id}/submit`, { key: t.apiKey });
    const templateStatus = (event: string, reason?: string) =>
      env.fake.postTemplateStatus(callbackUrl(t), t.business, {
        templateId: first.body.providerTemplateId,
        name: 'lifecycle',
        language: 'en_US',
        event,
        reason: reason ?? null,
      });
    expect((await templateStatus('REJECTED', 'INVALID_FORMAT')).status).toBe(200);
    const rejected = (await call(env.app, 'GET', `/templates/${id}`, { key: t.apiKey })).body;
    expect(rejected).toMatchObject({
      status: 'REJECTED',
      rejectionReason: expect.stringContaining('INVALID_FORMAT'),
    });
    const edited = await call(env.app, 'PATCH', `/templates/${id}`, {
      key: t.apiKey,
      body: {
        components: [
          {
            type: 'BODY',
            text: 'Your order {{1}} is ready for pickup. Thanks!',
            example: { body_text: [['42']] },
          },
        ],
      },
    });
    expect(edited.body.status).toBe('DRAFT');
    const second = await call(env.app, 'POST', `/templates/${id}/submit`, { key: t.apiKey });
    expect(second.body.status).toBe('PENDING');
    await env.fake.postTemplateStatus(callbackUrl(t), t.business, {
      templateId: second.body.providerTemplateId,
      name: 'lifecycle',
      language: 'en_US',
      event: 'APPROVED',
    });
    const pause = () =>
      env.fake.postTemplateStatus(callbackUrl(t), t.business, {
        templateId: second.body.providerTemplateId,
        name: 'lifecycle',
        language: 'en_US',
        event: 'PAUSED',
        reason: 'Low quality',
      });
    await pause();
    const refused = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: '+14155550132', templateName: 'lifecycle', templateLanguage: 'en_US', parameters: ['7'] },
    });
    expectError(refused, 422, 'TEMPLATE_NOT_APPROVED');
    await env.fake.postTemplateStatus(callbackUrl(t), t.business, {
      templateId: second.body.providerTemplateId,
      name: 'lifecycle',
      language: 'en_US',
      event: 'REINSTATED',
    });
    expect((await call(env.app, 'GET', `/templates/${id}`, { key: t.apiKey })).body.status).toBe('APPROVED');
    const events = await eventually(
      async () => hook.received.map((r) => [r.json.data.previousStatus, r.json.data.status]),
      (e) => e.length >= 7,
    );
    expect(events).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'REJECTED'],
      ['REJECTED', 'DRAFT'],
      ['DRAFT', 'PENDING'],
      ['PENDING', 'APPROVED'],
      ['APPROVED', 'PAUSED'],
      ['PAUSED', 'APPROVED'],
    ]);
  });
});

describe('deleting a template submitted to Meta', () => {
  it('deletes it at Meta, then here; keeps it while Meta cannot be reached (503) or refuses (409); never for a sandbox key', async () => {
    const t = await liveTenant();
    const create = async (name: string) => {
      const created = await call(env.app, 'POST', '/templates', {
        key: t.apiKey,
        body: {
          name,
          language: 'en_US',
          category: 'UTILITY',
          components: [
            { type: 'BODY', text: 'Your order {{1}} has shipped. Thanks!', example: { body_text: [['42']] } },
          ],
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.id as string;
    };
    const id = await create('shipped');
    const submitted = await call(env.app, 'POST', `/templates/${id}/submit`, { key: t.apiKey });
    const metaId = submitted.body.providerTemplateId as string;
    expect(env.fake.templates.has(metaId)).toBe(true);
    const remove = (key = t.apiKey) => call(env.app, 'DELETE', `/templates/${id}`, { key });
    const stillHere = async () => {
      expect((await call(env.app, 'GET', `/templates/${id}`, { key: t.apiKey })).status).toBe(200);
      expect(env.fake.templates.has(metaId)).toBe(true);
    };

    const sandboxKey = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    expectError(await remove(sandboxKey.apiKey), 403, 'FORBIDDEN');
    await stillHere();

    env.fake.respond = (req) => (req.method === 'DELETE' ? graphError(2) : undefined);
    const unreachable = await remove();
    expectError(unreachable, 503, 'SERVICE_UNAVAILABLE');
    expect(unreachable.headers['retry-after']).toBe('5');
    await stillHere();

    env.fake.respond = (req) => (req.method === 'DELETE' ? graphError(190) : undefined);
    expectError(await remove(), 409, 'CONFLICT');
    await stillHere();

    env.fake.respond = undefined;
    expect((await remove()).status).toBe(204);
    expect((await call(env.app, 'GET', `/templates/${id}`, { key: t.apiKey })).status).toBe(404);
    expect(env.fake.templates.has(metaId)).toBe(false);
    const asked = env.fake.requests.filter((r) => r.method === 'DELETE').at(-1)!;
    const query = new URL(asked.path, 'http://graph.invalid').searchParams;
    expect([query.get('hsm_id'), query.get('name')]).toEqual([metaId, 'shipped']);
    expect(asked.path).toContain(`/${t.business.businessAccountId}/message_templates?`);

    // Deleted in WhatsApp Manager meanwhile: Meta no longer has it, so it goes here too.
    const gone = await create('gone_at_meta');
    const goneMetaId = (await call(env.app, 'POST', `/templates/${gone}/submit`, { key: t.apiKey })).body
      .providerTemplateId;
    env.fake.templates.delete(goneMetaId);
    expect((await call(env.app, 'DELETE', `/templates/${gone}`, { key: t.apiKey })).status).toBe(204);

    // Never submitted: nothing to ask Meta.
    const draft = await create('never_submitted');
    const deletesBefore = env.fake.requests.filter((r) => r.method === 'DELETE').length;
    expect((await call(env.app, 'DELETE', `/templates/${draft}`, { key: t.apiKey })).status).toBe(204);
    expect(env.fake.requests.filter((r) => r.method === 'DELETE')).toHaveLength(deletesBefore);
  });
});

describe('the callback endpoint', () => {
  it('answers Meta’s handshake with the challenge only for the configured verify token', async () => {
    const t = await liveTenant();
    const ok = await env.fake.handshake(callbackUrl(t), {
      verifyToken: t.business.verifyToken,
      challenge: '1158201444',
    });
    expect(ok).toEqual({ status: 200, text: '1158201444' });
    const wrong = await env.fake.handshake(callbackUrl(t), {
      verifyToken: 'not-the-token',
      challenge: '1158201444',
    });
    expect(wrong.status).toBe(403);
    const mode = await env.fake.handshake(callbackUrl(t), {
      verifyToken: t.business.verifyToken,
      challenge: '1',
      mode: 'unsubscribe',
    });
    expect(mode.status).toBe(403);
  });

  it('refuses callbacks whose signature is wrong or missing (401), applies nothing and logs it', async () => {
    const t = await liveTenant();
    await metaApproved(t, 'signed_only');
    const queued = await send(t, {
      to: '+14155550133',
      templateName: 'signed_only',
      templateLanguage: 'en_US',
      parameters: ['A', 'B'],
    });
    await messageWhen(env.app, t.apiKey, queued.id, 'sent');
    const wamid = env.fake.sent.find((s) => s.to === '+14155550133')!.wamid;
    for (const signature of ['wrong', 'missing'] as const) {
      logs.length = 0;
      const res = await env.fake.postStatus(
        callbackUrl(t),
        t.business,
        { wamid, status: 'read', recipientId: '14155550133' },
        { signature },
      );
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.code).toBe('INVALID_SIGNATURE');
      const warned = logs.map((l) => JSON.parse(l)).find((l) => l.msg?.includes('bad x-hub-signature-256'));
      expect(warned, logs.join('\n')).toMatchObject({
        level: 40,
        accountId: t.accountId,
        reason: signature === 'wrong' ? 'mismatch' : 'missing',
      });
      expect(JSON.stringify(warned)).not.toContain(t.business.appSecret);
    }
    // The same payload, tampered with after signing, is refused too.
    const payload = JSON.stringify(
      env.fake.statusPayload(t.business, { wamid, status: 'read', recipientId: '14155550133' }),
    );
    const { createHmac } = await import('node:crypto');
    const signatureOf = (body: string) =>
      `sha256=${createHmac('sha256', t.business.appSecret).update(body).digest('hex')}`;
    const tampered = await fetch(callbackUrl(t), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(payload) },
      body: payload.replace('"read"', '"delivered"'),
    });
    expect(tampered.status).toBe(401);
    expect((await call(env.app, 'GET', `/messages/${queued.id}`, { key: t.apiKey })).body.status).toBe(
      'sent',
    );
    const garbage = await env.fake.postCallback(callbackUrl(t), t.business, '{not json');
    expect(garbage.status).toBe(400);
  });

  it('is 404 for an account without a WhatsApp channel, or no account', async () => {
    const t = await liveTenant();
    const sandboxOnly = await call(env.app, 'PUT', '/account/channel', {
      key: t.apiKey,
      body: { provider: 'sandbox' },
    });
    expect(sandboxOnly.status).toBe(200);
    const res = await env.fake.postStatus(callbackUrl(t), t.business, {
      wamid: 'wamid.x',
      status: 'read',
      recipientId: '1',
    });
    expect(res.status).toBe(404);
    const nobody = await fetch(
      `${base}/api/v1/callbacks/whatsapp/acc_01jh0000000000000000000000?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`,
    );
    expect(nobody.status).toBe(404);
  });
});
