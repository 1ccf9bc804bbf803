// Campaigns on a live WhatsApp channel (the local fake of Meta's Graph API), through HTTP: the
// estimate is exactly what the sends are then charged; a start the wallet cannot pay is refused
// with the shortfall and leaves nothing behind; Meta's throttling answer (130429) slows the
// campaign down; the number's messaging limit tier caps the unique recipients of a day.
import { describe, expect, it } from 'vitest';
import { type FakeBusiness, graphError } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  balanceOf,
  credit,
  eventually,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({
  autoApprove: true,
  config: { campaignPollMs: 20, dispatchRetryDelaySeconds: 1 },
});

async function liveTenant(money: string, business: Partial<FakeBusiness> = {}) {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake, {}, { business });
  if (money !== '0') await credit(env.app, env.partner.partnerKey, t.accountId, money);
  await approvedTemplate(env.app, t.apiKey, {
    name: 'launch',
    category: 'MARKETING',
    body: 'Hi {{1}}, the new season is here.',
    examples: ['Ann'],
  });
  return t;
}

async function contacts(key: string, phones: string[], tag: string) {
  for (const phone of phones) {
    const res = await call(env.app, 'POST', '/contacts', { key, body: { phone, name: 'Kim', tags: [tag] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}

async function draft(key: string, tag: string, pacing: Record<string, unknown> = {}) {
  const res = await call(env.app, 'POST', '/campaigns', {
    key,
    body: {
      name: 'Launch',
      message: { templateName: 'launch', templateLanguage: 'en_US', parameters: ['{{ contact.name }}'] },
      audience: { tag },
      pacing,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

const get = (key: string, id: string) => call(env.app, 'GET', `/campaigns/${id}`, { key });
const move = (key: string, id: string, what: string) =>
  call(env.app, 'POST', `/campaigns/${id}/${what}`, { key });
const usPhones = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => `+1415555${String(1000 + from + i).padStart(4, '0')}`);

describe('campaigns on the WhatsApp Cloud API', () => {
  it('charges exactly the estimate, country by country', async () => {
    const t = await liveTenant('10.00');
    await contacts(t.apiKey, ['+14155551301', '+14155551302', '+14155551303'], 'launch');
    await contacts(t.apiKey, ['+4917012345601', '+4917012345602'], 'launch');
    const id = await draft(t.apiKey, 'launch');
    const estimate = await move(t.apiKey, id, 'estimate');
    expect(estimate.status, JSON.stringify(estimate.body)).toBe(200);
    // src/modules/pricing/default-prices.ts: marketing US 0.0250, DE 0.1365.
    expect(estimate.body).toMatchObject({
      recipients: 5,
      skipped: 0,
      cost: { amount: '0.3480', currency: 'USD' },
      liveCost: { amount: '0.3480', currency: 'USD' },
      balance: { amount: '10.0000' },
      shortfall: { amount: '0.0000' },
    });
    expect(estimate.body.lines).toEqual([
      {
        country: 'DE',
        category: 'marketing',
        rule: {
          key: 'list:DE:marketing:2025-07-01:shipped',
          kind: 'list',
          market: 'DE',
          effectiveFrom: '2025-07-01',
          source: 'shipped',
        },
        unitPrice: { amount: '0.1365', currency: 'USD' },
        count: 2,
        amount: { amount: '0.2730', currency: 'USD' },
        liveAmount: { amount: '0.2730', currency: 'USD' },
        free: 0,
      },
      {
        country: 'US',
        category: 'marketing',
        rule: expect.objectContaining({ key: 'list:US:marketing:2025-07-01:shipped' }),
        unitPrice: { amount: '0.0250', currency: 'USD' },
        count: 3,
        amount: { amount: '0.0750', currency: 'USD' },
        liveAmount: { amount: '0.0750', currency: 'USD' },
        free: 0,
      },
    ]);
    expect((await get(t.apiKey, id)).body.cost.estimated).toEqual({ amount: '0.3480', currency: 'USD' });
    expect((await move(t.apiKey, id, 'start')).body).toMatchObject({ status: 'running', sandbox: false });
    await eventually(
      async () => env.fake.sent.filter((s) => s.businessPhoneNumberId === t.business.phoneNumberId),
      (sent) => sent.length >= 5,
    );
    const done = await eventually(
      () => get(t.apiKey, id),
      (r) => r.body.status === 'completed' && r.body.counters.sent === 5,
    );
    expect(done.body.counters).toMatchObject({ total: 5, queued: 0, sent: 5, failed: 0 });
    expect(done.body.cost).toEqual({
      estimated: { amount: '0.3480', currency: 'USD' },
      charged: { amount: '0.3480', currency: 'USD' },
    });
    expect(await balanceOf(env.app, t.apiKey)).toBe('9.6520');
  });

  it('refuses a start the wallet cannot pay, with the shortfall, and leaves the draft as it was', async () => {
    const t = await liveTenant('0.25');
    await contacts(t.apiKey, ['+14155551311', '+4917012345611', '+4917012345612'], 'few');
    const id = await draft(t.apiKey, 'few');
    const refused = await move(t.apiKey, id, 'start');
    expectError(refused, 402, 'INSUFFICIENT_BALANCE');
    expect(refused.body.error.details[0]).toMatchObject({
      field: 'wallet',
      requiredMicros: 298_000,
      balanceMicros: 250_000,
      shortfallMicros: 48_000,
    });
    const after = await get(t.apiKey, id);
    expect(after.body).toMatchObject({ status: 'draft', counters: { total: 0 }, sandbox: null });
    const rows = await call(env.app, 'GET', `/campaigns/${id}/recipients`, { key: t.apiKey });
    expect(rows.body.data).toEqual([]);
    expect(env.fake.sent.filter((s) => s.to === '+14155551311')).toHaveLength(0);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.2500');
    // Topped up by the shortfall, it starts and spends it all.
    await credit(env.app, env.partner.partnerKey, t.accountId, '0.048');
    expect((await move(t.apiKey, id, 'start')).status).toBe(200);
    await eventually(
      () => get(t.apiKey, id),
      (r) => r.body.status === 'completed',
    );
    expect(
      await eventually(
        () => balanceOf(env.app, t.apiKey),
        (b) => b === '0.0000',
      ),
    ).toBe('0.0000');
  });

  it('slows down when Meta throttles (130429), and keeps within the number’s messaging limit tier', async () => {
    const t = await liveTenant('10.00', { messagingLimitTier: 'TIER_50' });
    const phones = usPhones(60, 400);
    await contacts(t.apiKey, phones, 'many');
    const id = await draft(t.apiKey, 'many', { messagesPerSecond: 8 });
    env.fake.failNext(graphError(130429), 3);
    expect((await move(t.apiKey, id, 'start')).status).toBe(200);
    const throttled = await eventually(
      () => get(t.apiKey, id),
      (r) => r.body.pacing.throttledTo !== null,
    );
    expect(throttled.body.pacing).toEqual({ messagesPerSecond: 8, throttledTo: 4 });
    // The tier lets 50 unique customers a day be messaged: the other 10 wait.
    const capped = await eventually(
      () => get(t.apiKey, id),
      (r) => r.body.counters.sent === 50,
      30_000,
    );
    expect(capped.body).toMatchObject({
      status: 'running',
      counters: { total: 60, queued: 10, sent: 50, failed: 0 },
    });
    const rows = await call(env.app, 'GET', `/campaigns/${id}/recipients?status=queued&limit=100`, {
      key: t.apiKey,
    });
    expect(rows.body.data).toHaveLength(10);
    expect(env.fake.sent.filter((s) => s.businessPhoneNumberId === t.business.phoneNumberId)).toHaveLength(
      50,
    );
  });
});
