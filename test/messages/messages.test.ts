// POST /messages, GET /messages and GET /messages/{id} through the sandbox channel: every message
// type accepted and taken through sent → delivered → read with its events, every refusal with its
// documented error (and nothing left behind), the customer service window both ways, the contact
// made for an unknown number, the sandbox's test numbers, listing filters, and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAccountKey, listAll } from '../helpers/client.ts';
import {
  approvedTemplate,
  customerWrote,
  eventually,
  INSTANT_SANDBOX,
  type MessagingTenant,
  messageWhen,
  type SandboxDelays,
  sandboxTenant,
  sleep,
} from '../helpers/messaging.ts';
import { Receiver } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({
  workers: true,
  config: {
    webhookAllowedHosts: ['127.0.0.1'],
    webhookPollMs: 50,
    dispatchRetryLimit: 1,
    dispatchRetryDelaySeconds: 1,
  },
});
const receivers: Receiver[] = [];
beforeAll(() => env.app.ctx.dispatcher.start());
afterAll(() => Promise.all(receivers.map((r) => r.close())));

const HOUR = 3600_000;

async function subscribe(t: MessagingTenant, events: string[]): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  const res = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: r.url(), events } });
  expect(res.status).toBe(201);
  return r;
}

async function countRows(table: string, accountId: string): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`,
    [accountId],
  );
  return rows[0]!.n;
}

async function tenantWithTemplate(sandbox: Partial<SandboxDelays> = INSTANT_SANDBOX) {
  const t = await sandboxTenant(env.app, env.partner.partnerKey, sandbox);
  const template = await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
  return { t, template };
}

const reminder = (to: string, parameters = ['Ann', 'Monday 10:00']) => ({
  to,
  templateName: 'appointment_reminder',
  templateLanguage: 'en_US',
  parameters,
});

describe('sending through the sandbox', () => {
  it('accepts a template message (202 queued) and takes it to read, with one event per status', async () => {
    const { t, template } = await tenantWithTemplate();
    const hook = await subscribe(t, ['message.*']);
    const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder('+14155550100') });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^msg_[0-9a-z]{26}$/),
      direction: 'outbound',
      type: 'template',
      to: '+14155550100',
      from: null,
      status: 'queued',
      template: {
        id: template.id,
        name: 'appointment_reminder',
        language: 'en_US',
        category: 'UTILITY',
        parameters: ['Ann', 'Monday 10:00'],
        body: 'Hi Ann, your appointment is on Monday 10:00. Reply to confirm.',
      },
      text: null,
      channel: 'sandbox',
      sandbox: false,
      providerMessageId: null,
      pricing: {
        country: 'US',
        category: 'utility',
        listPrice: { amount: '0.0034', currency: 'USD' },
        charged: { amount: '0.0000', currency: 'USD' },
        freeReason: 'sandbox',
        refunded: false,
      },
      error: null,
      sentAt: null,
    });
    const read = await messageWhen(env.app, t.apiKey, res.body.id, 'read');
    expect(read.providerMessageId).toMatch(/^sandbox\./);
    expect(read.sentAt <= read.deliveredAt && read.deliveredAt <= read.readAt).toBe(true);
    const events = await hook.waitFor(3);
    expect(events.map((e) => [e.json.type, e.json.data.status, e.json.data.previousStatus])).toEqual([
      ['message.sent', 'sent', 'queued'],
      ['message.delivered', 'delivered', 'sent'],
      ['message.read', 'read', 'delivered'],
    ]);
    expect(events[0]!.json.data.id).toBe(res.body.id);
  });

  it('delivers after the account’s sandbox delays, and never reads when readAfterMs is null', async () => {
    const { t } = await tenantWithTemplate({ deliveredAfterMs: 1200, readAfterMs: null, reviewAfterMs: 0 });
    const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder('+14155550100') });
    await messageWhen(env.app, t.apiKey, res.body.id, 'sent');
    await sleep(500);
    expect((await call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey })).body.status).toBe(
      'sent',
    );
    await messageWhen(env.app, t.apiKey, res.body.id, 'delivered');
    await sleep(800);
    expect((await call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey })).body.status).toBe(
      'delivered',
    );
  });

  it('sends text, media and interactive messages inside the customer service window, free', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const to = '+14155550111';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 23 * HOUR));
    const bodies = [
      { type: 'text', text: 'We are open until 8pm.' },
      { type: 'media', media: { kind: 'image', url: 'https://example.com/menu.png', caption: 'Menu' } },
      { type: 'media', media: { kind: 'audio', url: 'https://example.com/hello.ogg' } },
      {
        type: 'interactive',
        interactive: { kind: 'buttons', body: 'Still coming?', buttons: [{ id: 'y', title: 'Yes' }] },
      },
      {
        type: 'interactive',
        interactive: {
          kind: 'list',
          body: 'Choose',
          buttonText: 'Options',
          sections: [{ rows: [{ id: 'a', title: 'A' }] }],
        },
      },
    ];
    for (const body of bodies) {
      const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: { to, ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body.type).toBe(body.type);
      expect(res.body.template).toBeNull();
      expect(res.body.pricing).toMatchObject({ category: 'service', charged: { amount: '0.0000' } });
      if (body.type === 'text') expect(res.body.text).toBe('We are open until 8pm.');
      if (body.type === 'media') expect(res.body.media).toEqual(body.media);
      if (body.type === 'interactive') expect(res.body.interactive).toEqual(body.interactive);
      await messageWhen(env.app, t.apiKey, res.body.id, 'read');
    }
  });

  it('refuses free-form messages outside the window (422 CSW_VIOLATION) and leaves no message or contact', async () => {
    const { t } = await tenantWithTemplate();
    const stranger = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: '+14155550112', type: 'text', text: 'hi' },
    });
    expectError(stranger, 422, 'CSW_VIOLATION');
    const lapsed = '+14155550113';
    await customerWrote(env.tdb.db, t.accountId, lapsed, new Date(Date.now() - 24 * HOUR - 1000));
    const late = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: lapsed, type: 'text', text: 'hi' },
    });
    expectError(late, 422, 'CSW_VIOLATION');
    expect(await countRows('messages', t.accountId)).toBe(0);
    const contacts = await call(env.app, 'GET', '/contacts', { key: t.apiKey });
    expect(contacts.body.data.map((c: { phone: string }) => c.phone)).toEqual([lapsed]);
    // A template still goes to both.
    for (const to of ['+14155550112', lapsed]) {
      expect((await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder(to) })).status).toBe(
        202,
      );
    }
  });

  it('creates a contact for an unknown number (contact.created), and reuses it after', async () => {
    const { t } = await tenantWithTemplate();
    const hook = await subscribe(t, ['contact.*']);
    const first = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: reminder('(415) 555-0114'),
    });
    expect(first.status).toBe(202);
    expect(first.body.to).toBe('+14155550114');
    const second = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: reminder('+1 415 555 0114'),
    });
    expect(second.body.contactId).toBe(first.body.contactId);
    const contact = await call(env.app, 'GET', `/contacts/${first.body.contactId}`, { key: t.apiKey });
    expect(contact.body).toMatchObject({ phone: '+14155550114', name: null, tags: [] });
    const [created] = await hook.waitFor(1);
    expect(created!.json).toMatchObject({ type: 'contact.created', data: { id: first.body.contactId } });
    await sleep(300);
    expect(hook.received).toHaveLength(1);
  });

  it('plays the sandbox test numbers: refused, undeliverable, never read, unreachable provider', async () => {
    const { t } = await tenantWithTemplate();
    const send = async (to: string) =>
      (await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder(to) })).body;
    const refused = await send('+12125550101');
    const undeliverable = await send('+12125550102');
    const unread = await send('+12125550103');
    const unavailable = await send('+12125550104');
    expect(await messageWhen(env.app, t.apiKey, refused.id, 'failed')).toMatchObject({
      sentAt: null,
      error: { code: 'RECIPIENT_UNREACHABLE', providerCode: 131026 },
    });
    const failedLate = await messageWhen(env.app, t.apiKey, undeliverable.id, 'failed');
    expect(failedLate.sentAt).not.toBeNull();
    expect(failedLate.error).toMatchObject({ code: 'RECIPIENT_UNREACHABLE', providerCode: 131049 });
    await messageWhen(env.app, t.apiKey, unread.id, 'delivered');
    await sleep(500);
    expect((await call(env.app, 'GET', `/messages/${unread.id}`, { key: t.apiKey })).body.status).toBe(
      'delivered',
    );
    // One retry after a second (the test's settings), then failed.
    const gaveUp = await messageWhen(env.app, t.apiKey, unavailable.id, 'failed', 15_000);
    expect(gaveUp.error).toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
  });

  it('sends a sandbox key’s messages through the sandbox, marked sandbox', async () => {
    const { t } = await tenantWithTemplate();
    const key = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, { scope: 'sandbox' });
    const res = await call(env.app, 'POST', '/messages', { key: key.apiKey, body: reminder('+14155550115') });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ channel: 'sandbox', sandbox: true, pricing: { freeReason: 'sandbox' } });
  });
});

describe('refusals', () => {
  it('refuses bad bodies with 400 naming each field, and stores nothing', async () => {
    const { t } = await tenantWithTemplate();
    const cases: [Record<string, unknown>, string[]][] = [
      [{ templateName: 'appointment_reminder', templateLanguage: 'en_US' }, ['to']],
      [reminder('not a phone'), ['to']],
      [{ to: '+14155550120' }, ['type']],
      [{ to: '+14155550120', type: 'fax' }, ['type']],
      [{ to: '+14155550120', type: 'template', templateLanguage: 'en_US' }, ['templateName']],
      [{ ...reminder('+14155550120'), text: 'also text' }, ['text']],
      [{ to: '+14155550120', type: 'text' }, ['text']],
      [{ to: '+14155550120', type: 'text', text: '   ' }, ['text']],
      [{ to: '+14155550120', type: 'text', text: 'x'.repeat(4097) }, ['text']],
      [{ ...reminder('+14155550120', ['Ann', 'line\nbreak']) }, ['parameters[1]']],
      [{ ...reminder('+14155550120', ['Ann', 'too     many spaces']) }, ['parameters[1]']],
      [
        { to: '+14155550120', type: 'media', media: { kind: 'gif', url: 'https://x.test/a.gif' } },
        ['media.kind'],
      ],
      [
        { to: '+14155550120', type: 'media', media: { kind: 'image', url: 'ftp://x.test/a.png' } },
        ['media.url'],
      ],
      [
        {
          to: '+14155550120',
          type: 'media',
          media: { kind: 'audio', url: 'https://x.test/a.ogg', caption: 'no' },
        },
        ['media.caption'],
      ],
      [
        {
          to: '+14155550120',
          type: 'media',
          media: { kind: 'image', url: 'https://x.test/a.png', filename: 'a.png' },
        },
        ['media.filename'],
      ],
      [
        {
          to: '+14155550120',
          type: 'interactive',
          interactive: {
            kind: 'buttons',
            body: 'b',
            buttons: [1, 2, 3, 4].map((i) => ({ id: `${i}`, title: `t${i}` })),
          },
        },
        ['interactive.buttons'],
      ],
      [
        {
          to: '+14155550120',
          type: 'interactive',
          interactive: {
            kind: 'buttons',
            body: 'b',
            buttons: [
              { id: 'a', title: 'x' },
              { id: 'a', title: 'y' },
            ],
          },
        },
        ['interactive.buttons'],
      ],
      [
        { to: '+14155550120', type: 'interactive', interactive: { kind: 'buttons', body: 'b' } },
        ['interactive.buttons'],
      ],
      [
        {
          to: '+14155550120',
          type: 'interactive',
          interactive: {
            kind: 'list',
            body: 'b',
            buttonText: 'Pick',
            sections: [
              { title: 'A', rows: Array.from({ length: 6 }, (_, i) => ({ id: `a${i}`, title: `A${i}` })) },
              { title: 'B', rows: Array.from({ length: 5 }, (_, i) => ({ id: `b${i}`, title: `B${i}` })) },
            ],
          },
        },
        ['interactive.sections'],
      ],
      [
        {
          to: '+14155550120',
          type: 'interactive',
          interactive: {
            kind: 'list',
            body: 'b',
            buttonText: 'Pick',
            sections: [{ rows: [{ id: 'a', title: 'A' }] }, { rows: [{ id: 'b', title: 'B' }] }],
          },
        },
        ['interactive.sections[0].title', 'interactive.sections[1].title'],
      ],
      [
        { to: '+14155550120', type: 'interactive', interactive: { kind: 'list', body: 'b' } },
        ['interactive.buttonText', 'interactive.sections'],
      ],
    ];
    for (const [body, fields] of cases) {
      const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body });
      expectError(res, 400, 'INVALID_REQUEST');
      const got = res.body.error.details.map((d: { field: string }) => d.field);
      for (const field of fields) expect(got, JSON.stringify(body)).toContain(field);
    }
    expect(await countRows('messages', t.accountId)).toBe(0);
    expect(await countRows('contacts', t.accountId)).toBe(0);
  });

  it('refuses a wrong parameter count (400), an unknown template (404) and one not approved (422)', async () => {
    const { t } = await tenantWithTemplate();
    const count = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: reminder('+14155550121', ['Ann']),
    });
    expectError(count, 400, 'INVALID_REQUEST');
    expect(count.body.error.details).toEqual([
      { field: 'parameters', issue: 'must hold 2 value(s) for template appointment_reminder, not 1' },
    ]);
    const unknown = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...reminder('+14155550121'), templateName: 'nope' },
    });
    expectError(unknown, 404, 'RESOURCE_NOT_FOUND');
    const otherLanguage = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { ...reminder('+14155550121'), templateLanguage: 'es' },
    });
    expectError(otherLanguage, 404, 'RESOURCE_NOT_FOUND');
    const draft = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        name: 'draft_only',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          { type: 'BODY', text: 'Order {{1}} is ready. Thanks!', example: { body_text: [['1']] } },
        ],
      },
    });
    expect(draft.status).toBe(201);
    const notApproved = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: '+14155550121', templateName: 'draft_only', templateLanguage: 'en_US', parameters: ['1'] },
    });
    expectError(notApproved, 422, 'TEMPLATE_NOT_APPROVED');
    expect(notApproved.body.error.details[0]).toMatchObject({ templateId: draft.body.id });
    expect(await countRows('messages', t.accountId)).toBe(0);
    expect(await countRows('contacts', t.accountId)).toBe(0);
  });

  it('does not see another tenant’s templates or messages (404)', async () => {
    const { t } = await tenantWithTemplate();
    const other = await sandboxTenant(env.app, env.partner.partnerKey);
    const mine = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder('+14155550122') });
    expectError(
      await call(env.app, 'GET', `/messages/${mine.body.id}`, { key: other.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'POST', '/messages', { key: other.apiKey, body: reminder('+14155550122') }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect((await call(env.app, 'GET', '/messages', { key: other.apiKey })).body.data).toEqual([]);
  });
});

describe('usage', () => {
  it('counts every send in the month’s usage, accepted or refused, on an unlimited plan as on a limited one', async () => {
    for (const planCode of ['scale', 'business']) {
      const t = await sandboxTenant(env.app, env.partner.partnerKey, INSTANT_SANDBOX, { planCode });
      await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
      const callsNow = async () =>
        (await call(env.app, 'GET', '/account', { key: t.apiKey })).body.usage.calls as number;
      const start = await callsNow();
      expect(
        (await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder('+14155550140') })).status,
      ).toBe(202);
      expect((await call(env.app, 'POST', '/messages', { key: t.apiKey, body: { to: 'nope' } })).status).toBe(
        400,
      );
      expect(
        (
          await call(env.app, 'POST', '/messages', {
            key: t.apiKey,
            body: { to: '+14155550141', type: 'text', text: 'hi' },
          })
        ).status,
      ).toBe(422);
      const idem = { 'idempotency-key': `usage-${planCode}` };
      await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: reminder('+14155550142'),
        headers: idem,
      });
      await call(env.app, 'POST', '/messages', {
        key: t.apiKey,
        body: reminder('+14155550142'),
        headers: idem,
      });
      // Five sends after the GET that read `start` (and counted itself). The meter writes what it
      // counted in batches; a final flush writes all of it.
      await env.app.ctx.usage.flush({ all: true });
      const monthly = await env.tdb.db.query<{ calls: number }>(
        'SELECT calls FROM api_usage_monthly WHERE account_id = $1',
        [t.accountId],
      );
      expect(monthly.rows[0]?.calls, planCode).toBe(start + 5);
      const counted = start + 5;
      const { rows } = await env.tdb.db.query<{ calls: number }>(
        'SELECT sum(calls)::int AS calls FROM api_usage_daily WHERE account_id = $1',
        [t.accountId],
      );
      expect(rows[0]!.calls).toBe(counted);
    }
  });
});

describe('listing messages', () => {
  it('filters by status, direction, number and time, newest first, in stable pages', async () => {
    const { t } = await tenantWithTemplate();
    const before = new Date(Date.now() - 1000).toISOString();
    const ids: string[] = [];
    for (const to of ['+14155550130', '+14155550131', '+14155550130', '+12125550101']) {
      const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder(to) });
      ids.push(res.body.id);
    }
    await messageWhen(env.app, t.apiKey, ids[3]!, 'failed');
    for (const id of ids.slice(0, 3)) await messageWhen(env.app, t.apiKey, id, 'read');
    const all = await listAll(env.app, t.apiKey, '/messages');
    expect(all.map((m) => m.id)).toEqual([...ids].reverse());
    const q = async (query: Record<string, string>) =>
      (await call(env.app, 'GET', '/messages', { key: t.apiKey, query })).body.data.map(
        (m: { id: string }) => m.id,
      );
    expect(await q({ to: '+1 (415) 555-0130' })).toEqual([ids[2], ids[0]]);
    expect(await q({ status: 'failed' })).toEqual([ids[3]]);
    expect(await q({ direction: 'inbound' })).toEqual([]);
    expect(await q({ direction: 'outbound', limit: '2' })).toEqual([ids[3], ids[2]]);
    expect(
      await q({ createdAfter: before, createdBefore: new Date(Date.now() + 60_000).toISOString() }),
    ).toHaveLength(4);
    expect(await q({ createdAfter: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    const page1 = await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { limit: '3' } });
    const page2 = await call(env.app, 'GET', '/messages', {
      key: t.apiKey,
      query: { limit: '3', cursor: page1.body.nextCursor },
    });
    expect([...page1.body.data, ...page2.body.data].map((m: { id: string }) => m.id)).toEqual(
      [...ids].reverse(),
    );
    expect(page2.body.nextCursor).toBeNull();
    const bad: Record<string, string>[] = [
      { status: 'lost' },
      { to: 'nobody' },
      { createdAfter: 'yesterday' },
      { cursor: '%%%' },
    ];
    for (const query of bad) {
      expectError(await call(env.app, 'GET', '/messages', { key: t.apiKey, query }), 400, 'INVALID_REQUEST');
    }
  });

  it('the events of a failed message carry its error', async () => {
    const { t } = await tenantWithTemplate();
    const hook = await subscribe(t, ['message.failed']);
    const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: reminder('+13105550101') });
    const [event] = await hook.waitFor(1);
    expect(event!.json.data).toMatchObject({
      id: res.body.id,
      status: 'failed',
      previousStatus: 'queued',
      error: { code: 'RECIPIENT_UNREACHABLE' },
    });
    await eventually(
      async () => hook.received.length,
      (n) => n > 1,
      300,
    );
    expect(hook.received).toHaveLength(1);
  });
});
