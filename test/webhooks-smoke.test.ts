import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, tenant } from './helpers/client.ts';
import { Receiver, verifySignature } from './helpers/receiver.ts';
import { useTestApp } from './helpers/setup.ts';

const env = useTestApp({ config: { webhookAllowedHosts: ['127.0.0.1'] } });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
  await env.app.ctx.dispatcher.start();
});
afterAll(() => receiver.close());

describe('smoke', () => {
  it('delivers a signed wallet.credited', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const acc = t;
    const key = t.apiKey;
    const created = await call(env.app, 'POST', '/webhooks', {
      key,
      body: { url: receiver.url(), events: ['wallet.*'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const credit = await call(env.app, 'POST', `/partner/accounts/${acc.accountId}/wallet/credits`, {
      key: env.partner.partnerKey,
      body: { amount: '5.00' },
    });
    expect(credit.status).toBe(201);
    const [got] = await receiver.waitFor(1);
    expect(verifySignature(created.body.secret, got!)).toMatchObject({
      type: 'wallet.credited',
      accountId: acc.accountId,
    });
    await new Promise((r) => setTimeout(r, 100));
    const list = await call(env.app, 'GET', `/webhooks/${created.body.id}/deliveries`, { key });
    expect(list.body.data[0]).toMatchObject({ status: 'succeeded', attemptCount: 1 });
    console.log(JSON.stringify(list.body, null, 1));
  });
});
