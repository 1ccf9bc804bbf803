// Broadcast campaigns on the sandbox, through HTTP: every field checked when saved; PUT and PATCH
// of a draft; an estimate; a start that fixes the audience (opted-out contacts skipped, duplicates
// once) and sends each recipient its template with Liquid parameters; counters and per-recipient
// statuses that add up; replies counted; pause, resume, cancel; 409 from a wrong state; events.
import { describe, expect, it } from 'vitest';
import { call, createAccountKey } from '../helpers/client.ts';
import { approvedTemplate, INSTANT_SANDBOX, sandboxTenant } from '../helpers/messaging.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const env = useTestApp({ workers: true, config: { campaignPollMs: 20 } });

async function contact(key: string, phone: string, body: Record<string, unknown> = {}) {
  const res = await call(env.app, 'POST', '/contacts', { key, body: { phone, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

const get = (key: string, id: string) => call(env.app, 'GET', `/campaigns/${id}`, { key });
const move = (key: string, id: string, what: string) =>
  call(env.app, 'POST', `/campaigns/${id}/${what}`, { key });

async function recipients(key: string, id: string, query = '') {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; body: any } = await call(
      env.app,
      'GET',
      `/campaigns/${id}/recipients?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    all.push(...res.body.data);
    cursor = res.body.nextCursor;
  } while (cursor);
  return all;
}

const sum = (c: Record<string, number>) => c.queued + c.sent + c.delivered + c.read + c.failed + c.skipped;

describe('campaigns', () => {
  it('checks every field when saved, and PUT and PATCH change only a draft', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, INSTANT_SANDBOX);
    await approvedTemplate(env.app, t.apiKey, { name: 'promo', category: 'MARKETING' });
    const bad = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: ' ',
        message: { templateName: 'promo', templateLanguage: 'en_US', parameters: ['{{ contact.name'] },
        audience: { conditions: { all: [{ field: 'message.text', op: 'eq', value: 'x' }] } },
        schedule: { sendWindow: { from: '18:00', until: '09:00' } },
      },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'audience.conditions.all[0].field',
      'message.parameters',
      'message.parameters[0]',
      'name',
      'schedule.sendWindow.until',
    ]);
    const unknown = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'x',
        message: { templateName: 'nope', templateLanguage: 'en_US' },
        audience: { contactIds: ['ctc_01jv0000000000000000000000'] },
      },
    });
    expect(unknown.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'audience.contactIds',
      'message.templateName',
    ]);

    const body = {
      name: 'Spring sale',
      message: {
        templateName: 'promo',
        templateLanguage: 'en_US',
        parameters: ['{{ contact.name }}', 'May'],
      },
      audience: { tag: 'vip' },
    };
    const made = await call(env.app, 'POST', '/campaigns', { key: t.apiKey, body });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({
      id: expect.stringMatching(/^cmp_/),
      status: 'draft',
      schedule: { startAt: null, sendWindow: null },
      pacing: { messagesPerSecond: null, throttledTo: null },
      counters: { total: 0, queued: 0, replied: 0 },
      cost: { estimated: null, charged: { amount: '0.0000' } },
      sandbox: null,
    });
    const put = await call(env.app, 'PUT', `/campaigns/${made.body.id}`, {
      key: t.apiKey,
      body: { ...body, name: 'Summer sale', pacing: { messagesPerSecond: 5 } },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ name: 'Summer sale', pacing: { messagesPerSecond: 5 } });
    const later = new Date(Date.now() + 3600_000).toISOString();
    const patched = await call(env.app, 'PATCH', `/campaigns/${made.body.id}`, {
      key: t.apiKey,
      body: { audience: { tags: { all: ['vip'], any: ['a', 'b'] } }, schedule: { startAt: later } },
    });
    expect(patched.body).toMatchObject({
      name: 'Summer sale',
      audience: { tags: { all: ['vip'], any: ['a', 'b'] } },
      pacing: { messagesPerSecond: 5 },
    });
    const listed = await call(env.app, 'GET', '/campaigns?status=draft', { key: t.apiKey });
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([made.body.id]);
    await contact(t.apiKey, '+14155550120', { tags: ['vip', 'a'] });
    const started = await move(t.apiKey, made.body.id, 'start');
    expect(started.body).toMatchObject({ status: 'scheduled', counters: { total: 1, queued: 1 } });
    expectError(
      await call(env.app, 'PUT', `/campaigns/${made.body.id}`, { key: t.apiKey, body }),
      409,
      'CONFLICT',
    );
    expectError(
      await call(env.app, 'DELETE', `/campaigns/${made.body.id}`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );
    expectError(await move(t.apiKey, made.body.id, 'estimate'), 409, 'CONFLICT');
  });

  it('sends each recipient its template once, skips opted-out contacts, counts replies', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, INSTANT_SANDBOX);
    const k = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, { scope: 'sandbox' });
    await approvedTemplate(env.app, t.apiKey, { name: 'promo', category: 'MARKETING' });
    const ann = await contact(t.apiKey, '+14155550121', { name: 'Ann', tags: ['vip'] });
    const bob = await contact(t.apiKey, '+14155550122', { tags: ['vip', 'gold'] });
    const out = await contact(t.apiKey, '+14155550123', { tags: ['vip'], marketingOptOut: true });
    await contact(t.apiKey, '+14155550124', { tags: ['other'] });
    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'VIP',
        message: {
          templateName: 'promo',
          templateLanguage: 'en_US',
          parameters: ['{{ contact.name | default: "friend" }}', 'Friday'],
        },
        audience: { tags: { any: ['vip', 'gold'] } },
      },
    });
    const estimate = await move(t.apiKey, made.body.id, 'estimate');
    expect(estimate.status, JSON.stringify(estimate.body)).toBe(200);
    expect(estimate.body).toMatchObject({ recipients: 2, skipped: 1, cost: { amount: '0.0000' } });
    const started = await move(t.apiKey, made.body.id, 'start');
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({ status: 'running', sandbox: false, counters: { total: 3 } });
    const done = await eventually(
      () => get(t.apiKey, made.body.id),
      (r) => r.body.status === 'completed' && r.body.counters.read === 2,
    );
    expect(done.body.counters).toEqual({
      total: 3,
      queued: 0,
      sent: 0,
      delivered: 0,
      read: 2,
      failed: 0,
      skipped: 1,
      replied: 0,
    });
    // campaign.status_changed, kind "message", for each move: started, then completed.
    const { rows: events } = await env.tdb.db.query<{ payload: unknown }>(
      `SELECT payload FROM events WHERE type = 'campaign.status_changed' ORDER BY created_at, id`,
    );
    const moves = events
      .map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload).data)
      .filter((d: { id: string }) => d.id === made.body.id)
      .map((d: { kind: string; status: string; previousStatus: string }) => [
        d.kind,
        d.previousStatus,
        d.status,
      ]);
    expect(moves).toEqual([
      ['message', 'draft', 'running'],
      ['message', 'running', 'completed'],
    ]);
    const rows = await recipients(t.apiKey, made.body.id);
    const byContact = new Map(rows.map((r) => [r.contactId, r]));
    expect(byContact.get(out)).toMatchObject({ status: 'skipped', reason: 'opted_out', messageId: null });
    const annMessage = await call(env.app, 'GET', `/messages/${byContact.get(ann).messageId}`, {
      key: t.apiKey,
    });
    expect(annMessage.body.template).toMatchObject({ parameters: ['Ann', 'Friday'] });
    const bobMessage = await call(env.app, 'GET', `/messages/${byContact.get(bob).messageId}`, {
      key: t.apiKey,
    });
    expect(bobMessage.body.template).toMatchObject({ parameters: ['friend', 'Friday'] });

    const reply = await call(env.app, 'POST', '/sandbox/inbound-messages', {
      key: k.apiKey,
      body: { from: '+14155550121', text: 'Yes please' },
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    const after = await get(t.apiKey, made.body.id);
    expect(after.body.counters).toMatchObject({ replied: 1, read: 2 });
    expect(sum(after.body.counters)).toBe(after.body.counters.total);
    const replied = await recipients(t.apiKey, made.body.id, '&replied=true');
    expect(replied.map((r) => r.contactId)).toEqual([ann]);
    expect(replied[0].repliedAt).toEqual(expect.any(String));
    expect((await recipients(t.apiKey, made.body.id, '&status=skipped')).map((r) => r.contactId)).toEqual([
      out,
    ]);
    // Ann's conversation deleted with its history: her row keeps the status her message had.
    const conversations = await call(env.app, 'GET', `/conversations?contactId=${ann}`, { key: t.apiKey });
    for (const c of conversations.body.data) {
      expect((await call(env.app, 'DELETE', `/conversations/${c.id}`, { key: t.apiKey })).status).toBe(204);
    }
    expectError(
      await call(env.app, 'GET', `/messages/${byContact.get(ann).messageId}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expect((await get(t.apiKey, made.body.id)).body.counters).toMatchObject({ read: 2, replied: 1 });
    const kept = await recipients(t.apiKey, made.body.id, '&status=read');
    expect(kept.map((r) => r.contactId).sort()).toEqual([ann, bob].sort());
    expect((await call(env.app, 'DELETE', `/campaigns/${made.body.id}`, { key: t.apiKey })).status).toBe(204);
    expectError(await get(t.apiKey, made.body.id), 404, 'RESOURCE_NOT_FOUND');
  });

  it('skips a contact who opts out of marketing after the start, and counts it as skipped', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, INSTANT_SANDBOX);
    await approvedTemplate(env.app, t.apiKey, { name: 'promo', category: 'MARKETING' });
    for (let i = 0; i < 4; i++) await contact(t.apiKey, `+1415555013${i}`, { tags: ['late'] });
    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Late opt-out',
        message: { templateName: 'promo', templateLanguage: 'en_US', parameters: ['a', 'b'] },
        audience: { tag: 'late' },
        pacing: { messagesPerSecond: 1 },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await move(t.apiKey, made.body.id, 'start')).status).toBe(200);
    const paused = await move(t.apiKey, made.body.id, 'pause');
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    // At one a second, most of the four are still waiting when the pause answers.
    const waiting = (await recipients(t.apiKey, made.body.id)).filter((r) => r.messageId === null);
    expect(waiting.length).toBeGreaterThan(0);
    const leaving = waiting[0].contactId as string;
    const optOut = await call(env.app, 'PATCH', `/contacts/${leaving}`, {
      key: t.apiKey,
      body: { marketingOptOut: true },
    });
    expect(optOut.status, JSON.stringify(optOut.body)).toBe(200);
    expect((await move(t.apiKey, made.body.id, 'resume')).status).toBe(200);
    const done = await eventually(
      () => get(t.apiKey, made.body.id),
      (r) => r.body.status === 'completed',
    );
    expect(done.body.counters).toMatchObject({ total: 4, skipped: 1, failed: 0 });
    expect(sum(done.body.counters)).toBe(4);
    const rows = await recipients(t.apiKey, made.body.id, '&status=skipped');
    expect(rows).toEqual([
      expect.objectContaining({ contactId: leaving, reason: 'opted_out', messageId: null, error: null }),
    ]);
  });
});
