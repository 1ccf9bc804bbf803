// Reaching a customer known only by a WhatsApp user id (no phone), on the sandbox, through HTTP:
// estimates priced by the id's country, bulk sends, campaigns and journeys reach them by user id;
// calls, which need a number, skip them with `no_phone` (voice campaigns, rules' and journeys'
// place_call), and POST /voice/calls, which dials the number it is given, refuses a user id (400).
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';

const env = useMessagingApp({
  config: {
    logLevel: 'warn',
    campaignPollMs: 20,
    automationPollMs: 50,
    voiceSandboxStepMs: 20,
    voicePollMs: 20,
  },
});
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);

/** A zone where it is calling hours now and in five minutes (some zone always is). */
const DAY = Intl.supportedValuesOf('timeZone').find((z) =>
  [0, 5].every((m) => {
    const h = DateTime.now().plus({ minutes: m }).setZone(z).hour;
    return h >= 10 && h < 19;
  }),
)!;

let ids = 0;
const newUserId = (country = 'US') => `${country}.${String(1502576394655843 + ids++)}`;

/** A customer without a phone writes in by user id and username: their contact's id. */
async function phoneLess(t: SandboxTenant, whatsappUserId: string, tags: string[] = []) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { whatsappUserId, username: `user.${ids}`, text: 'Hi' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const contact = (await call(env.app, 'GET', `/contacts/${res.body.contactId}`, { key: t.apiKey })).body;
  expect(contact).toMatchObject({ phone: null, whatsappUserId });
  if (tags.length) {
    const tagged = await call(env.app, 'POST', `/contacts/${contact.id}/tags`, {
      key: t.apiKey,
      body: { tags },
    });
    expect(tagged.status, JSON.stringify(tagged.body)).toBe(200);
  }
  return contact.id as string;
}

async function withPhone(t: SandboxTenant, phone: string, tags: string[]) {
  const res = await call(env.app, 'POST', '/contacts', {
    key: t.apiKey,
    body: { phone, tags, attributes: { timezone: DAY } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function script(t: SandboxTenant) {
  const made = await call(env.app, 'POST', '/voice/scripts', {
    key: t.apiKey,
    body: { name: 'Hi', type: 'tts', tts: { text: 'Hello' } },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  expect(
    (await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key: t.apiKey })).status,
  ).toBe(200);
  return made.body.id as string;
}

async function publishedJourney(t: SandboxTenant, body: Record<string, unknown>) {
  const made = await call(env.app, 'POST', '/journeys', { key: t.apiKey, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/journeys/${made.body.id}/publish`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return made.body.id as string;
}

const runEnded = (t: SandboxTenant, journeyId: string, runId: string) =>
  eventually(
    () => call(env.app, 'GET', `/journeys/${journeyId}/runs/${runId}`, { key: t.apiKey }),
    (r) => r.status === 200 && ['completed', 'failed', 'expired', 'canceled'].includes(r.body.status),
  ).then((r) => r.body);

const offer = { templateName: 'offer', templateLanguage: 'en_US', parameters: ['Ann', 'Friday'] };
const offerTemplate = (t: SandboxTenant) =>
  approvedTemplate(env.app, t.apiKey, { name: 'offer', category: 'MARKETING' });

describe('a contact without a phone', () => {
  it("is estimated by user id at its country's price: BR marketing, 0 on the sandbox", async () => {
    const t = await account();
    await offerTemplate(t);
    const userId = newUserId('BR');
    const res = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: { whatsappUserId: userId, ...offer },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.recipients).toEqual([
      expect.objectContaining({
        to: userId,
        country: 'BR',
        category: 'marketing',
        charge: { amount: '0.0000', currency: 'USD' },
        liveCharge: { amount: '0.0625', currency: 'USD' },
        freeReason: 'sandbox',
        error: null,
      }),
    ]);
    expect(res.body).toMatchObject({ liveTotal: { amount: '0.0625' }, channel: 'sandbox' });
  });

  it('is reached by a bulk send, by whatsappUserId and by contactId', async () => {
    const t = await account();
    await offerTemplate(t);
    const [idA, idB] = [newUserId(), newUserId()];
    const a = await phoneLess(t, idA);
    const b = await phoneLess(t, idB);
    const res = await call(env.app, 'POST', '/bulk/messages', {
      key: t.apiKey,
      body: { ...offer, recipients: [{ whatsappUserId: idA }, { contactId: b }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.results.map((r: any) => [r.to, r.status, r.error])).toEqual([
      [idA, 'queued', null],
      [idB, 'queued', null],
    ]);
    for (const [i, contactId, userId] of [
      [0, a, idA],
      [1, b, idB],
    ] as const) {
      const message = await eventually(
        () => call(env.app, 'GET', `/messages/${res.body.results[i].messageId}`, { key: t.apiKey }),
        (r) => r.body.status === 'delivered' || r.body.status === 'read',
      );
      expect(message.body).toMatchObject({ contactId, to: null, whatsappUserId: userId });
      expect(['delivered', 'read']).toContain(message.body.status);
    }
  });

  it('is sent a campaign beside a contact with a phone; its recipient row shows phone null', async () => {
    const t = await account();
    await offerTemplate(t);
    const userId = newUserId();
    const noPhone = await phoneLess(t, userId, ['vip']);
    const phoned = await withPhone(t, '+14155550140', ['vip']);
    const made = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: { name: 'VIP', message: offer, audience: { tag: 'vip' } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const started = await call(env.app, 'POST', `/campaigns/${made.body.id}/start`, { key: t.apiKey });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // Completed once every message is accepted; their statuses move on after (the sandbox's delays).
    const done = await eventually(
      () => call(env.app, 'GET', `/campaigns/${made.body.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'completed' && r.body.counters.queued === 0,
    );
    expect(done.body.counters).toMatchObject({ total: 2, failed: 0, skipped: 0, queued: 0 });
    const rows = (await call(env.app, 'GET', `/campaigns/${made.body.id}/recipients`, { key: t.apiKey })).body
      .data as any[];
    const byContact = new Map(rows.map((r) => [r.contactId, r]));
    expect(byContact.get(noPhone)).toMatchObject({ phone: null, messageId: expect.stringMatching(/^msg_/) });
    expect(byContact.get(phoned)).toMatchObject({ phone: '+14155550140', messageId: expect.any(String) });
    for (const r of rows) expect(['sent', 'delivered', 'read']).toContain(r.status);
    const message = await call(env.app, 'GET', `/messages/${byContact.get(noPhone).messageId}`, {
      key: t.apiKey,
    });
    expect(message.body).toMatchObject({ to: null, whatsappUserId: userId, contactId: noPhone });
  });

  it('runs a journey triggered by its whatsappUserId', async () => {
    const t = await account();
    const userId = newUserId();
    const contactId = await phoneLess(t, userId);
    const journeyId = await publishedJourney(t, {
      name: 'Tag',
      entry: { trigger: 'api', start: 'tag' },
      nodes: [{ id: 'tag', type: 'update_contact', config: { addTags: ['journeyed'] } }],
      edges: [],
    });
    const run = await call(env.app, 'POST', `/journeys/${journeyId}/trigger`, {
      key: t.apiKey,
      body: { whatsappUserId: userId },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    expect(run.body.contactId).toBe(contactId);
    expect((await runEnded(t, journeyId, run.body.id)).status).toBe('completed');
    expect((await call(env.app, 'GET', `/contacts/${contactId}`, { key: t.apiKey })).body.tags).toEqual([
      'journeyed',
    ]);
  });

  it('is skipped by a voice campaign (no_phone): only the contact with a phone is called', async () => {
    const t = await account();
    const scriptId = await script(t);
    const noPhone = await phoneLess(t, newUserId(), ['callees']);
    const phoned = await withPhone(t, '+14155550101', ['callees']);
    const made = await call(env.app, 'POST', '/voice/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Calls',
        scriptId,
        audience: { tag: 'callees' },
        schedule: { callingHours: { from: '08:00', until: '21:00' } },
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const started = await call(env.app, 'POST', `/voice/campaigns/${made.body.id}/start`, { key: t.apiKey });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const done = await eventually(
      () => call(env.app, 'GET', `/voice/campaigns/${made.body.id}`, { key: t.apiKey }),
      (r) => r.body.status === 'completed',
      20_000,
    );
    expect(done.body.counters).toMatchObject({ total: 2, skipped: 1, completed: 1, failed: 0 });
    const calls = (await call(env.app, 'GET', `/voice/campaigns/${made.body.id}/calls`, { key: t.apiKey }))
      .body.data as any[];
    expect(calls.map((c) => c.contactId)).toEqual([phoned]);
    expect(calls.some((c) => c.contactId === noPhone)).toBe(false);
  });

  it('is refused by POST /voice/calls (400 naming `to`: a number is what it dials), making no call', async () => {
    const t = await account();
    const scriptId = await script(t);
    const userId = newUserId();
    await phoneLess(t, userId);
    // The endpoint names its callee by `to` alone: the contact's user id is all there is to give.
    const refused = await call(env.app, 'POST', '/voice/calls', {
      key: t.apiKey,
      body: { to: userId, scriptId },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.code).toBe('INVALID_REQUEST');
    expect(refused.body.error.details.map((d: { field: string }) => d.field)).toEqual(['to']);
    expect((await call(env.app, 'GET', '/voice/calls', { key: t.apiKey })).body.data).toEqual([]);
  });

  it("is skipped by a rule's place_call (no_phone, not an error) and a journey's leaves by failed", async () => {
    const t = await account();
    const scriptId = await script(t);
    const rule = await call(env.app, 'POST', '/rules', {
      key: t.apiKey,
      body: {
        name: 'Call who writes',
        trigger: { event: 'message.received' },
        actions: [{ type: 'place_call', scriptId }],
      },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const userId = newUserId();
    const contactId = await phoneLess(t, userId);
    const runs = await eventually(
      () => call(env.app, 'GET', `/rules/${rule.body.id}/runs`, { key: t.apiKey }),
      (r) => r.status === 200 && r.body.data.length >= 1,
    );
    expect(runs.body.data).toHaveLength(1);
    expect(runs.body.data[0]).toMatchObject({
      status: 'succeeded',
      contactId,
      actions: [{ type: 'place_call', status: 'skipped', error: { code: 'no_phone' } }],
    });

    const journeyId = await publishedJourney(t, {
      name: 'Call, or note there is no number',
      entry: { trigger: 'api', start: 'ring' },
      nodes: [
        { id: 'ring', type: 'place_call', config: { scriptId } },
        { id: 'answered', type: 'update_contact', config: { addTags: ['answered'] } },
        { id: 'broken', type: 'update_contact', config: { addTags: ['not-called'] } },
      ],
      edges: [
        { from: 'ring', to: 'answered', when: 'answered' },
        { from: 'ring', to: 'broken', when: 'failed' },
      ],
    });
    const run = await call(env.app, 'POST', `/journeys/${journeyId}/trigger`, {
      key: t.apiKey,
      body: { contactId },
    });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const ended = await runEnded(t, journeyId, run.body.id);
    expect(ended.status).toBe('completed');
    expect(ended.steps[0]).toMatchObject({
      nodeId: 'ring',
      edge: 'failed',
      output: { skipped: true, reason: 'no_phone' },
    });
    expect(ended.steps.map((s: { nodeId: string }) => s.nodeId)).toEqual(['ring', 'broken']);
    const tags = (await call(env.app, 'GET', `/contacts/${contactId}`, { key: t.apiKey })).body.tags;
    expect(tags).toContain('not-called');
    expect((await call(env.app, 'GET', '/voice/calls', { key: t.apiKey })).body.data).toEqual([]);
  });
});
