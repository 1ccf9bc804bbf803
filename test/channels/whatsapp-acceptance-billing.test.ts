// Hand-over is not delivery, and the charge follows what Meta bills. Through HTTP and signed
// callbacks with the fake Graph API:
// - Meta's 200 (even "held_for_quality_assessment") means accepted: the message stays queued with
//   acceptedAt and Meta's word, no message.sent; Meta's `sent` callback makes it sent, at Meta's time.
// - A `delivered` after `failed` is recorded, and the refund of the failure is taken back (Meta
//   billed it) by one adjustment; a charged message Meta did not bill is paid back, once; the
//   adjustments of a period are reported per price-book rule (GET /account/pricing/adjustments).
// - The wallet never goes below zero: an adjustment it cannot pay takes what there is; the rest
//   is shown as unpaid and not asked for again.
import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeBusiness } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  balanceOf,
  credit,
  eventually,
  type MessagingTenant,
  messageWhen,
  sleep,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';

let base: string;
const env = useMessagingApp({ autoApprove: true });
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = MessagingTenant & { business: FakeBusiness };
const TO = '+14155550190';
const PRICE = '0.0250'; // a US marketing template (src/modules/pricing/default-prices.ts)

/** A WhatsApp tenant whose Meta callbacks the test plays itself, with an approved marketing template. */
async function newTenant(money: string): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake, {}, { metaReportsSent: false });
  if (money !== '0') await credit(env.app, env.partner.partnerKey, t.accountId, money);
  await approvedTemplate(env.app, t.apiKey, {
    name: 'spring_sale',
    category: 'MARKETING',
    body: 'Hi {{1}}, our spring collection is here.',
    examples: ['Ann'],
  });
  return t;
}

/** Sends the template and waits until Meta's answer is recorded; answers the message and its wamid. */
async function handedOver(t: Tenant) {
  const res = await call(env.app, 'POST', '/messages', {
    key: t.apiKey,
    body: { to: TO, templateName: 'spring_sale', templateLanguage: 'en_US', parameters: ['Ann'] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const accepted = await eventually(
    () => call(env.app, 'GET', `/messages/${res.body.id}`, { key: t.apiKey }),
    (r) => r.body.acceptedAt !== null,
  );
  return accepted.body as any;
}

async function status(
  t: Tenant,
  wamid: string,
  update: { status: 'sent' | 'delivered' | 'read' | 'failed'; timestamp?: number; billable?: boolean },
) {
  const payload: any = env.fake.statusPayload(t.business, {
    wamid,
    status: update.status,
    recipientId: TO.slice(1),
    ...(update.timestamp ? { timestamp: update.timestamp } : {}),
  });
  const s = payload.entry[0].changes[0].value.statuses[0];
  if (update.billable !== undefined) {
    s.pricing = update.billable
      ? { billable: true, pricing_model: 'PMP', category: 'marketing', type: 'regular' }
      : { billable: false, pricing_model: 'PMP', category: 'marketing', type: 'free_entry_point' };
  }
  const res = await env.fake.postCallback(
    `${base}/api/v1/callbacks/whatsapp/${t.accountId}`,
    t.business,
    payload,
  );
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body) as { applied: number };
}

async function adjustments(t: Tenant) {
  const res = await call(env.app, 'GET', '/account/wallet/transactions', {
    key: t.apiKey,
    query: { type: 'adjustment' },
  });
  expect(res.status).toBe(200);
  return res.body.data as any[];
}

describe('hand-over is not sending', () => {
  it("Meta's 200 is an acceptance; Meta's sent callback sends it, at Meta's time", async () => {
    const t = await newTenant('1.00');
    const { receiver } = await env.subscribe(t.apiKey, ['message.*']);
    // Meta holds the template send for a quality assessment (its pacing answer).
    env.fake.respond = (req) => {
      if (req.method !== 'POST' || !req.path.endsWith('/messages')) return undefined;
      env.fake.respond = undefined;
      return {
        status: 200,
        body: {
          messaging_product: 'whatsapp',
          contacts: [{ input: TO, wa_id: TO.slice(1) }],
          messages: [{ id: 'wamid.held', message_status: 'held_for_quality_assessment' }],
        },
      };
    };
    const m = await handedOver(t);
    expect(m).toMatchObject({
      status: 'queued',
      providerMessageId: 'wamid.held',
      providerStatus: 'held_for_quality_assessment',
      sentAt: null,
    });
    await sleep(300);
    expect(receiver.received).toEqual([]);

    const metaSentAt = Math.floor(Date.now() / 1000) + 5;
    expect(await status(t, 'wamid.held', { status: 'sent', timestamp: metaSentAt })).toEqual({
      applied: 1,
      dropped: 0,
    });
    const sent = await messageWhen(env.app, t.apiKey, m.id, 'sent');
    expect(sent.sentAt).toBe(new Date(metaSentAt * 1000).toISOString());
    expect(sent.acceptedAt).toBe(m.acceptedAt);
    const [event] = await receiver.waitFor(1);
    expect(event!.json).toMatchObject({ type: 'message.sent', data: { id: m.id, previousStatus: 'queued' } });
  });
});

describe('the charge follows what Meta bills', () => {
  it('a delivery after a failure is recorded, and the refund taken back once', async () => {
    const t = await newTenant('1.00');
    const m = await handedOver(t);
    await status(t, m.providerMessageId, { status: 'sent', billable: true });
    await status(t, m.providerMessageId, { status: 'failed' });
    const failed = await messageWhen(env.app, t.apiKey, m.id, 'failed');
    expect(failed.pricing).toMatchObject({
      charged: { amount: PRICE },
      refunded: true,
      adjusted: { amount: '0.0000' },
    });
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');

    const { receiver } = await env.subscribe(t.apiKey, ['message.delivered']);
    await status(t, m.providerMessageId, { status: 'delivered', billable: true });
    const delivered = await messageWhen(env.app, t.apiKey, m.id, 'delivered');
    expect(delivered.pricing).toMatchObject({
      refunded: true,
      adjusted: { amount: PRICE },
      unpaid: { amount: '0.0000' },
    });
    expect(delivered.error).toMatchObject({ code: 'RECIPIENT_UNREACHABLE' });
    expect((await receiver.waitFor(1))[0]!.json.data.previousStatus).toBe('failed');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    // Meta repeats itself: nothing more is taken.
    await status(t, m.providerMessageId, { status: 'delivered', billable: true });
    await status(t, m.providerMessageId, { status: 'read', billable: true });
    await messageWhen(env.app, t.apiKey, m.id, 'read');
    const taken = await adjustments(t);
    expect(taken.map((a) => [a.amount.amount, a.reference])).toEqual([[`-${PRICE}`, m.id]]);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
  });

  it('lists as failed only what is still failed: a delivery after the failure takes it out', async () => {
    const t = await newTenant('1.00');
    const older = await handedOver(t);
    const newer = await handedOver(t);
    for (const m of [older, newer]) {
      await status(t, m.providerMessageId, { status: 'failed' });
      await messageWhen(env.app, t.apiKey, m.id, 'failed');
    }
    await status(t, newer.providerMessageId, { status: 'delivered', billable: true });
    await messageWhen(env.app, t.apiKey, newer.id, 'delivered');
    const list = async (query: Record<string, string>) =>
      (await call(env.app, 'GET', '/messages', { key: t.apiKey, query })).body;
    // A page of one: the newest row with a failure is the delivered one, passed over.
    const failed = await list({ status: 'failed', limit: '1' });
    expect(failed.data.map((m: { id: string }) => m.id)).toEqual([older.id]);
    expect(failed.nextCursor).toBeNull();
    expect((await list({ status: 'delivered' })).data.map((m: { id: string }) => m.id)).toEqual([newer.id]);
  });

  it('a charged message Meta did not bill is paid back, once', async () => {
    const t = await newTenant('1.00');
    const m = await handedOver(t);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    await status(t, m.providerMessageId, { status: 'sent', billable: false });
    // Not yet: Meta bills on delivery.
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    await status(t, m.providerMessageId, { status: 'delivered', billable: false });
    const delivered = await messageWhen(env.app, t.apiKey, m.id, 'delivered');
    expect(delivered.pricing).toMatchObject({
      charged: { amount: PRICE },
      refunded: false,
      adjusted: { amount: `-${PRICE}` },
    });
    expect(delivered.providerPricing).toMatchObject({ billable: false, type: 'free_entry_point' });
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');
    await status(t, m.providerMessageId, { status: 'read', billable: false });
    expect((await adjustments(t)).map((a) => a.amount.amount)).toEqual([PRICE]);
  });

  it('reports the adjustments of a period per price-book rule, and only its own account', async () => {
    const t = await newTenant('1.00');
    const paidBack = await handedOver(t);
    await status(t, paidBack.providerMessageId, { status: 'delivered', billable: false });
    await messageWhen(env.app, t.apiKey, paidBack.id, 'delivered');
    // Refunded on failure, then delivered and billed: the refund is taken back.
    const chargedAgain = await handedOver(t);
    await status(t, chargedAgain.providerMessageId, { status: 'failed' });
    await messageWhen(env.app, t.apiKey, chargedAgain.id, 'failed');
    await status(t, chargedAgain.providerMessageId, { status: 'delivered', billable: true });
    await messageWhen(env.app, t.apiKey, chargedAgain.id, 'delivered');
    const report = await call(env.app, 'GET', '/account/pricing/adjustments', { key: t.apiKey });
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    const usd = (amount: string) => ({ amount, currency: 'USD' });
    const totals = {
      adjustments: 2,
      messages: 2,
      taken: usd(PRICE),
      givenBack: usd(PRICE),
      net: usd('0.0000'),
    };
    expect(report.body).toMatchObject({
      ...totals,
      byRule: [
        {
          rule: {
            key: 'list:US:marketing:2025-07-01:shipped',
            kind: 'list',
            market: 'US',
            effectiveFrom: '2025-07-01',
            source: 'shipped',
          },
          ...totals,
        },
      ],
    });
    // A period that ended before: nothing; a period that does not run forward: 400.
    const before = await call(env.app, 'GET', '/account/pricing/adjustments', {
      key: t.apiKey,
      query: { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' },
    });
    expect(before.body).toMatchObject({ adjustments: 0, net: usd('0.0000'), byRule: [] });
    const backwards = await call(env.app, 'GET', '/account/pricing/adjustments', {
      key: t.apiKey,
      query: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
    });
    expect(backwards.status).toBe(400);
    // Another account's report holds none of them.
    const other = await newTenant('0');
    const theirs = await call(env.app, 'GET', '/account/pricing/adjustments', { key: other.apiKey });
    expect(theirs.body).toMatchObject({ adjustments: 0, byRule: [] });
  });

  it('never takes the wallet below zero: what it cannot pay is recorded as unpaid, and not asked again', async () => {
    const t = await newTenant(PRICE);
    const m = await handedOver(t);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0000');
    await status(t, m.providerMessageId, { status: 'failed' });
    await messageWhen(env.app, t.apiKey, m.id, 'failed');
    expect(await balanceOf(env.app, t.apiKey)).toBe(PRICE);
    // Spent meanwhile, all but a cent.
    const spend = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: {
        to: '+14155550191',
        templateName: 'spring_sale',
        templateLanguage: 'en_US',
        parameters: ['Bo'],
      },
    });
    expect(spend.status).toBe(202);
    await credit(env.app, env.partner.partnerKey, t.accountId, '0.0100');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0100');

    await status(t, m.providerMessageId, { status: 'delivered', billable: true });
    const delivered = await messageWhen(env.app, t.apiKey, m.id, 'delivered');
    expect(delivered.pricing).toMatchObject({ adjusted: { amount: '0.0100' }, unpaid: { amount: '0.0150' } });
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0000');
    await credit(env.app, env.partner.partnerKey, t.accountId, '1.00');
    await status(t, m.providerMessageId, { status: 'read', billable: true });
    await messageWhen(env.app, t.apiKey, m.id, 'read');
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');
    expect((await adjustments(t)).map((a) => a.amount.amount)).toEqual(['-0.0100']);
  });
});
