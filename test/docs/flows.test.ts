// The typical flows of the published API (README § The first five minutes), end to end through HTTP as a developer would run them: an
// appointment reminder, lead capture, and a campaign (estimate, then bulk send). Events are received
// by a real webhook receiver and verified with the `standardwebhooks` package.
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
import { verifySignature } from '../helpers/receiver.ts';

const env = useMessagingApp({ autoApprove: true });

describe('typical flows', () => {
  it('appointment reminder: create contact, send message, register webhook, receive its signed status events', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey, {
      deliveredAfterMs: 700,
      readAfterMs: 300,
      reviewAfterMs: 0,
    });
    await approvedTemplate(env.app, t.apiKey, { name: 'appointment_reminder' });
    const contact = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+14155550190', name: 'Ann Lee', tags: ['patient'] },
    });
    expect(contact.status).toBe(201);
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: contact.body.phone,
        templateName: 'appointment_reminder',
        templateLanguage: 'en_US',
        parameters: ['Ann', 'Tuesday 9:30'],
      },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.contactId).toBe(contact.body.id);
    const r = await env.receiver();
    const hook = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: r.url(), events: ['message.*'] },
    });
    expect(hook.status).toBe(201);
    // Registered after the send: whether message.sent came before the webhook is a race; delivery
    // (700 ms later) and reading come after it for sure.
    const read = await eventually(
      async () =>
        r.received.map(
          (x) =>
            verifySignature(hook.body.secret, x) as { type: string; data: { id: string; status: string } },
        ),
      (events) => events.some((e) => e.type === 'message.read'),
      15_000,
    );
    expect(
      read.filter((e) => e.type !== 'message.sent').map((e) => [e.type, e.data.id, e.data.status]),
    ).toEqual([
      ['message.delivered', sent.body.id, 'delivered'],
      ['message.read', sent.body.id, 'read'],
    ]);
  });

  it('lead capture: create contact, list templates, send the approved one', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    await approvedTemplate(env.app, t.apiKey, {
      name: 'lead_welcome',
      category: 'MARKETING',
      body: 'Hi {{1}}, thanks for your interest in {{2}}. Reply STOP to opt out.',
      examples: ['Ann', 'our plans'],
    });
    const lead = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: '+447400123456', name: 'Bo', attributes: { source: 'website' } },
    });
    expect(lead.status).toBe(201);
    const templates = await call(env.app, 'GET', '/templates', {
      key: t.apiKey,
      query: { status: 'APPROVED' },
    });
    const chosen = templates.body.data.find((x: { name: string }) => x.name === 'lead_welcome');
    expect(chosen).toMatchObject({ status: 'APPROVED', parameterCount: 2, category: 'MARKETING' });
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: lead.body.phone,
        templateName: chosen.name,
        templateLanguage: chosen.language,
        parameters: ['Bo', 'Tidings'],
      },
    });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({
      contactId: lead.body.id,
      pricing: { country: 'GB', category: 'marketing' },
    });
    const read = await eventually(
      () => call(env.app, 'GET', `/messages/${sent.body.id}`, { key: t.apiKey }),
      (x) => x.body.status === 'read',
    );
    expect(read.body.template.body).toBe(
      'Hi Bo, thanks for your interest in Tidings. Reply STOP to opt out.',
    );
  });

  it('campaign: estimate the cost, then bulk send, charged exactly the estimate', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    await credit(env.app, env.partner.partnerKey, t.accountId, '5.00');
    await approvedTemplate(env.app, t.apiKey, {
      name: 'autumn_campaign',
      category: 'MARKETING',
      body: 'Hi {{1}}, our autumn collection is in store from {{2}}. Reply STOP to opt out.',
      examples: ['Ann', 'Friday'],
    });
    const r = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: r.url(), events: ['bulk_job.completed'] },
    });
    const campaign = {
      templateName: 'autumn_campaign',
      templateLanguage: 'en_US',
      parameters: ['friend', 'Friday'],
      recipients: [
        { to: '+14155550191', parameters: ['Ann', 'Friday'] },
        { to: '+4915123456789' },
        { to: '+919876543210' },
        { to: '+5511987654321' },
      ],
    };
    const estimate = await call(env.app, 'POST', '/messages/estimate', { key: t.apiKey, body: campaign });
    expect(estimate.status).toBe(200);
    expect(
      estimate.body.recipients.map((x: { country: string; charge: { amount: string } }) => [
        x.country,
        x.charge.amount,
      ]),
    ).toEqual([
      ['US', '0.0250'],
      ['DE', '0.1365'],
      ['IN', '0.0107'],
      ['BR', '0.0625'],
    ]);
    expect(estimate.body).toMatchObject({
      total: { amount: '0.2347' },
      balance: { amount: '5.0000' },
      sufficient: true,
    });
    const bulk = await call(env.app, 'POST', '/bulk/messages', { key: t.apiKey, body: campaign });
    expect(bulk.status).toBe(202);
    expect(await balanceOf(env.app, t.apiKey)).toBe('4.7653');
    const [done] = await r.waitFor(1, 15_000);
    expect(done!.json.data).toMatchObject({
      jobId: bulk.body.jobId,
      status: 'completed',
      succeeded: 4,
      failed: 0,
    });
    // The job completes when Meta has taken every message; Meta's `sent` callbacks follow.
    const job = await eventually(
      () => call(env.app, 'GET', `/bulk/messages/${bulk.body.jobId}`, { key: t.apiKey }),
      (x) => x.body.results.every((m: { status: string }) => m.status === 'sent'),
    );
    expect(job.body.results.map((m: { status: string }) => m.status)).toEqual([
      'sent',
      'sent',
      'sent',
      'sent',
    ]);
    expect(env.fake.sent.filter((s) => s.body.template?.name === 'autumn_campaign').map((s) => s.to)).toEqual(
      campaign.recipients.map((x) => x.to),
    );
  });
});
