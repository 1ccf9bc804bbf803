// Paying for messages: live sends through a real provider (the env.fake WhatsApp Cloud API) are
// debited in the transaction that accepts them, at the price the estimate shows, naming the price
// book's rule; the in-window rule (Meta's, and an operator's own); 402 with nothing left behind;
// never a negative balance, and the ledger adding up, under 200 concurrent sends; one message and
// one charge per Idempotency-Key, whatever the concurrency.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/kernel/database/db.ts';
import { acceptBatchOptimistically, type SendRequest } from '../../src/modules/messages/accept-batch.ts';
import { AcceptQueue } from '../../src/modules/messages/accept-queue.ts';
import { prepareMessage, templateLookup } from '../../src/modules/messages/prepare.ts';
import { loadOperatorRows, readBook } from '../../src/modules/pricing/store.ts';
import { call, createAccountKey } from '../helpers/client.ts';
import { onPostgres } from '../helpers/harness.ts';
import {
  balanceOf,
  credit,
  customerWrote,
  eventually,
  messageWhen,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({ autoApprove: true });

/** An operator who keeps utility templates free inside the window (Meta charges them since 2026-10-01). */
async function keepInWindowUtilityFree() {
  await loadOperatorRows(env.tdb.db, [
    {
      market: '*',
      category: 'utility',
      rule: 'in_window',
      priceMicros: 0,
      effectiveFrom: new Date('2026-11-01T00:00:00Z'),
      source: 'operator',
      note: null,
    },
  ]);
  env.app.ctx.prices.useStoredRows(await readBook(env.tdb.db));
}

type Tenant = Awaited<ReturnType<typeof whatsappTenant>>;

async function liveTenant(money: string): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, money);
  for (const [name, category] of [
    ['weekly_offer', 'MARKETING'],
    ['order_update', 'UTILITY'],
    ['login_code', 'AUTHENTICATION'],
  ] as const) {
    const body =
      category === 'AUTHENTICATION'
        ? { type: 'BODY', text: '{{1}} is your verification code.', example: { body_text: [['123456']] } }
        : {
            type: 'BODY',
            text: `Hello {{1}}, news about {{2}} for you. Reply STOP to opt out.`,
            example: { body_text: [['Ann', 'x']] },
          };
    const created = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: { name, language: 'en_US', category, components: [body] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const submitted = await call(env.app, 'POST', `/templates/${created.body.id}/submit`, { key: t.apiKey });
    expect(submitted.body.status, JSON.stringify(submitted.body)).toBe('APPROVED');
  }
  return t;
}

const offer = (to: string) => ({
  to,
  templateName: 'weekly_offer',
  templateLanguage: 'en_US',
  parameters: ['Ann', 'shoes'],
});
const update = (to: string) => ({
  to,
  templateName: 'order_update',
  templateLanguage: 'en_US',
  parameters: ['Ann', 'A-1'],
});
const code = (to: string) => ({
  to,
  templateName: 'login_code',
  templateLanguage: 'en_US',
  parameters: ['123456'],
});

async function ledgerSum(accountId: string): Promise<number> {
  const { rows } = await env.tdb.db.query<{ total: number; balance: number }>(
    `SELECT coalesce(sum(t.amount_micros), 0)::bigint AS total, a.wallet_balance_micros AS balance
       FROM accounts a LEFT JOIN wallet_transactions t ON t.account_id = a.id
      WHERE a.id = $1 GROUP BY a.wallet_balance_micros`,
    [accountId],
  );
  expect(rows[0]!.total).toBe(rows[0]!.balance);
  return rows[0]!.balance;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

describe('charging', () => {
  it('debits the list price by country and category in the accepting transaction, with a ledger entry', async () => {
    const t = await liveTenant('5.00');
    const sent = [
      await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer('+14155550140') }),
      await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer('+4915123456789') }),
      await call(env.app, 'POST', '/messages', { key: t.apiKey, body: code('+919876543210') }),
      await call(env.app, 'POST', '/messages', { key: t.apiKey, body: update('+5511987654321') }),
      await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer('+6281234567890') }),
    ];
    expect(
      sent.map((r) => [
        r.status,
        r.body.pricing.country,
        r.body.pricing.category,
        r.body.pricing.charged.amount,
      ]),
    ).toEqual([
      [202, 'US', 'marketing', '0.0250'],
      [202, 'DE', 'marketing', '0.1365'],
      [202, 'IN', 'authentication', '0.0014'],
      [202, 'BR', 'utility', '0.0068'],
      [202, 'ID', 'marketing', '0.0411'],
    ]);
    expect(await balanceOf(env.app, t.apiKey)).toBe('4.7892');
    const ledger = (
      await call(env.app, 'GET', '/account/wallet/transactions', { key: t.apiKey, query: { type: 'debit' } })
    ).body.data;
    expect(
      ledger.map((e: { amount: { amount: string }; reference: string }) => [e.amount.amount, e.reference]),
    ).toEqual([...sent].reverse().map((r) => [`-${r.body.pricing.charged.amount}`, r.body.id]));
    expect(await ledgerSum(t.accountId)).toBe(4_789_200);
  });

  it('inside the window, charges utility templates and free-form replies since Meta does (2026-10-01), naming the rule', async () => {
    const t = await liveTenant('1.00');
    const to = '+14155550141';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 3600_000));
    const utility = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: update(to) });
    expect(utility.body.pricing).toMatchObject({
      listPrice: { amount: '0.0034' },
      charged: { amount: '0.0034' },
      freeReason: null,
      rule: { key: 'list:US:utility:2025-07-01:shipped', kind: 'list', market: 'US', source: 'shipped' },
    });
    const reply = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to, type: 'text', text: 'Thanks!' },
    });
    expect(reply.body.pricing).toMatchObject({
      category: 'service',
      charged: { amount: '0.0034' },
      rule: { key: 'list:US:service:2026-10-01:shipped', effectiveFrom: '2026-10-01' },
    });
    const marketing = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer(to) });
    expect(marketing.body.pricing).toMatchObject({ charged: { amount: '0.0250' }, freeReason: null });
    const outside = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: update('+14155550142') });
    expect(outside.body.pricing.charged.amount).toBe('0.0034');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9648');
  });

  it("an operator's in_window row keeps utility templates free inside the window, and names itself", async () => {
    await keepInWindowUtilityFree();
    const t = await liveTenant('1.00');
    const to = '+14155550144';
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 3600_000));
    const utility = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: update(to) });
    expect(utility.body.pricing).toMatchObject({
      listPrice: { amount: '0.0034' },
      charged: { amount: '0.0000' },
      freeReason: 'customer_service_window',
      rule: { key: 'in_window:*:utility:2026-11-01:operator', kind: 'in_window', market: '*' },
    });
    // Outside the window the list price applies.
    const outside = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: update('+14155550145') });
    expect(outside.body.pricing.charged.amount).toBe('0.0034');
  });

  it('never charges a sandbox key, even on a WhatsApp account', async () => {
    const t = await liveTenant('1.00');
    const key = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, { scope: 'sandbox' });
    const res = await call(env.app, 'POST', '/messages', { key: key.apiKey, body: offer('+14155550143') });
    expect(res.body).toMatchObject({
      channel: 'sandbox',
      sandbox: true,
      pricing: { charged: { amount: '0.0000' }, freeReason: 'sandbox' },
    });
    await messageWhen(env.app, t.apiKey, res.body.id, 'read');
    expect(env.fake.sent.some((s) => s.to === '+14155550143')).toBe(false);
    expect(await balanceOf(env.app, t.apiKey)).toBe('1.0000');
  });

  it('refuses a send the wallet cannot pay (402) and leaves no message, contact or ledger entry', async () => {
    const t = await liveTenant('0.02');
    const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer('+14155550144') });
    expectError(res, 402, 'INSUFFICIENT_BALANCE');
    expect(res.body.error.details[0]).toMatchObject({
      field: 'wallet',
      requiredMicros: 25_000,
      balanceMicros: 20_000,
    });
    expect(await count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId])).toBe(
      0,
    );
    expect(await count('SELECT count(*)::int AS n FROM contacts WHERE account_id = $1', [t.accountId])).toBe(
      0,
    );
    expect(
      await count(
        `SELECT count(*)::int AS n FROM wallet_transactions WHERE account_id = $1 AND type = 'debit'`,
        [t.accountId],
      ),
    ).toBe(0);
    // A cheaper message still goes.
    expect(
      (await call(env.app, 'POST', '/messages', { key: t.apiKey, body: update('+14155550144') })).status,
    ).toBe(202);
  });

  it('emits wallet.low_balance once, when a send takes the balance below the threshold', async () => {
    const t = await liveTenant('0.10');
    const r = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: r.url(), events: ['wallet.low_balance'] },
    });
    await call(env.app, 'PATCH', '/account/wallet', {
      key: t.apiKey,
      body: { lowBalanceThreshold: { amount: '0.06' } },
    });
    for (const n of [0, 1, 2]) {
      expect(
        (await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer(`+1415555015${n}`) })).status,
      ).toBe(202);
    }
    const [event] = await r.waitFor(1);
    expect(event!.json.data).toMatchObject({
      balance: { amount: '0.0500' },
      lowBalanceThreshold: { amount: '0.0600' },
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(r.received).toHaveLength(1);
  });
});

// The app decides a busy account's sends from what it last read or wrote of the wallet and the
// recipients' contacts, without reading them again (accept-cache.ts). What it remembers may be out
// of date: each case changes the database behind its back, and the next send must be decided as
// the database has it now.
describe('sends decided from what the process last saw', () => {
  const send = (t: Tenant, body: object) => call(env.app, 'POST', '/messages', { key: t.apiKey, body });

  it('a top-up after the wallet ran dry: the next send is accepted, not refused from the old balance', async () => {
    const t = await liveTenant('0.05');
    expect((await send(t, offer('+14155550200'))).status).toBe(202);
    expect((await send(t, offer('+14155550200'))).status).toBe(202);
    expectError(await send(t, offer('+14155550200')), 402, 'INSUFFICIENT_BALANCE');
    await credit(env.app, env.partner.partnerKey, t.accountId, '1.00');
    const after = await send(t, offer('+14155550200'));
    expect(after.status, JSON.stringify(after.body)).toBe(202);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    expect(await ledgerSum(t.accountId)).toBe(975_000);
  });

  it('a threshold set after the process last saw the wallet: the send that crosses it emits wallet.low_balance', async () => {
    const t = await liveTenant('0.10');
    const r = await env.receiver();
    await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: r.url(), events: ['wallet.low_balance'] },
    });
    expect((await send(t, offer('+14155550201'))).status).toBe(202);
    await call(env.app, 'PATCH', '/account/wallet', {
      key: t.apiKey,
      body: { lowBalanceThreshold: { amount: '0.06' } },
    });
    expect((await send(t, offer('+14155550201'))).status).toBe(202);
    const [event] = await r.waitFor(1);
    expect(event!.json.data).toMatchObject({
      balance: { amount: '0.0500' },
      lowBalanceThreshold: { amount: '0.0600' },
    });
  });

  it('a window that opened since: the utility template is free; one that closed: the reply is refused', async () => {
    await keepInWindowUtilityFree();
    const t = await liveTenant('1.00');
    const to = '+14155550202';
    expect((await send(t, update(to))).body.pricing.charged.amount).toBe('0.0034');
    expect((await send(t, update(to))).body.pricing.charged.amount).toBe('0.0034');
    await customerWrote(env.tdb.db, t.accountId, to, new Date(Date.now() - 60_000));
    const inside = await send(t, update(to));
    expect(inside.body.pricing).toMatchObject({
      charged: { amount: '0.0000' },
      freeReason: 'customer_service_window',
    });
    expect((await send(t, { to, type: 'text', text: 'Thanks!' })).status).toBe(202);
    // As if the inbound message had been misdated: the window is closed after all.
    await env.tdb.db.query(
      `UPDATE contacts SET last_inbound_at = now() - interval '2 days' WHERE account_id = $1 AND phone = $2`,
      [t.accountId, to],
    );
    expectError(await send(t, { to, type: 'text', text: 'Thanks again!' }), 422, 'CSW_VIOLATION');
    expect((await send(t, update(to))).body.pricing.charged.amount).toBe('0.0034');
    // Three utility templates outside the window and the reply inside it (service: 0.0034).
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9864');
  });

  it('a contact deleted since: the next send makes a new one and points to it', async () => {
    const t = await liveTenant('1.00');
    const to = '+14155550203';
    const first = await send(t, offer(to));
    expect((await send(t, offer(to))).body.contactId).toBe(first.body.contactId);
    const deleted = await call(env.app, 'DELETE', `/contacts/${first.body.contactId}`, { key: t.apiKey });
    expect(deleted.status).toBe(204);
    const after = await send(t, offer(to));
    expect(after.status).toBe(202);
    expect(after.body.contactId).not.toBe(first.body.contactId);
    const contact = await call(env.app, 'GET', `/contacts/${after.body.contactId}`, { key: t.apiKey });
    expect(contact.status).toBe(200);
    expect(contact.body.phone).toBe(to);
  });

  it('sends to known numbers read nothing first once the process has seen them (to the microsecond)', async () => {
    const t = await liveTenant('1.00');
    const to = '+14155550204';
    // now(): on PostgreSQL a timestamp with microseconds, which the process knows to the millisecond.
    await env.tdb.db.query(
      `INSERT INTO contacts (id, account_id, phone, created_at, updated_at, last_inbound_at)
       VALUES ('ctc_' || substr(md5(random()::text), 1, 26), $1, $2, now(), now(), now() - interval '1 minute')`,
      [t.accountId, to],
    );
    const db = env.app.ctx.db;
    const reads: string[] = [];
    const counting: Database = Object.assign(Object.create(db) as Database, {
      query(text: string, params?: unknown[], options?: { prepared?: string }) {
        if (options?.prepared) reads.push(options.prepared);
        return db.query(text, params, options as never);
      },
    });
    const queue = new AcceptQueue({ ...env.app.ctx, db: counting }, 1);
    const message = await prepareMessage(update(to), {
      countryCode: 'US',
      lookup: templateLookup(db, t.accountId, env.app.ctx.approvedTemplates),
    });
    const sender = {
      account: { id: t.accountId, channelProvider: 'whatsapp_cloud' as const },
      mode: 'live' as const,
    };
    for (let i = 0; i < 3; i++) {
      const result = await queue.submit({ sender, message: { ...message } });
      expect(result.kind).toBe('accepted');
    }
    // The wallet and the contact are read once, for the first send.
    expect(reads).toEqual(['accept-read', 'accept-write', 'accept-write', 'accept-write']);
    expect(await count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId])).toBe(
      3,
    );
  });
});

describe('estimates', () => {
  it('equal what the sends then charge, recipient by recipient', async () => {
    const t = await liveTenant('2.00');
    const inWindow = '+14155550160';
    await customerWrote(env.tdb.db, t.accountId, inWindow, new Date(Date.now() - 60_000));
    const recipients = [
      '+14155550161',
      inWindow,
      '+447400123456',
      '+5511987654321',
      '+971501234567',
      '+8613812345678',
    ];
    for (const template of [offer, update, code]) {
      const { to: _, ...fields } = template('');
      const estimate = await call(env.app, 'POST', '/messages/estimate', {
        key: t.apiKey,
        body: { ...fields, recipients: recipients.map((to) => ({ to })) },
      });
      expect(estimate.status, JSON.stringify(estimate.body)).toBe(200);
      const before = Number(await balanceOf(env.app, t.apiKey));
      const charged: string[] = [];
      for (const to of recipients) {
        const res = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: template(to) });
        expect(res.status).toBe(202);
        charged.push(res.body.pricing.charged.amount);
      }
      expect(estimate.body.recipients.map((r: { charge: { amount: string } }) => r.charge.amount)).toEqual(
        charged,
      );
      const after = Number(await balanceOf(env.app, t.apiKey));
      expect((before - after).toFixed(4)).toBe(Number(estimate.body.total.amount).toFixed(4));
      expect(estimate.body).toMatchObject({
        balance: { amount: before.toFixed(4) },
        sufficient: true,
        channel: 'whatsapp_cloud',
      });
    }
  });

  it('for one recipient, answers as the send would: the price, or the send’s own error', async () => {
    const t = await liveTenant('0.01');
    const one = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: offer('+14155550170'),
    });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      recipients: [
        {
          index: 0,
          to: '+14155550170',
          country: 'US',
          category: 'marketing',
          unitPrice: { amount: '0.0250', currency: 'USD' },
          charge: { amount: '0.0250', currency: 'USD' },
          // Off the sandbox, what a live channel charges is the charge itself.
          liveCharge: { amount: '0.0250', currency: 'USD' },
          freeReason: null,
          // The price book's row that prices it: US marketing, shipped, from 2025-07-01.
          rule: {
            key: 'list:US:marketing:2025-07-01:shipped',
            kind: 'list',
            market: 'US',
            effectiveFrom: '2025-07-01',
            source: 'shipped',
          },
          error: null,
        },
      ],
      total: { amount: '0.0250', currency: 'USD' },
      liveTotal: { amount: '0.0250', currency: 'USD' },
      balance: { amount: '0.0100', currency: 'USD' },
      sufficient: false,
      channel: 'whatsapp_cloud',
    });
    expectError(
      await call(env.app, 'POST', '/messages/estimate', {
        key: t.apiKey,
        body: { to: '+14155550170', type: 'text', text: 'hi' },
      }),
      422,
      'CSW_VIOLATION',
    );
    expectError(
      await call(env.app, 'POST', '/messages/estimate', {
        key: t.apiKey,
        body: { ...offer('+14155550170'), templateName: 'nope' },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const both = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: { ...offer('+14155550170'), recipients: [{ to: '+14155550171' }] },
    });
    expectError(both, 400, 'INVALID_REQUEST');
    const list = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: { type: 'text', text: 'hi', recipients: [{ to: '+14155550170' }, { to: 'nobody' }] },
    });
    expect(list.body.recipients.map((r: { error: { code: string } }) => r.error.code)).toEqual([
      'CSW_VIOLATION',
      'INVALID_REQUEST',
    ]);
    expect(list.body.total.amount).toBe('0.0000');
    // Nothing was sent, charged or created.
    expect(await count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId])).toBe(
      0,
    );
    expect(await count('SELECT count(*)::int AS n FROM contacts WHERE account_id = $1', [t.accountId])).toBe(
      0,
    );
  });
});

describe('under concurrency', () => {
  it('200 parallel sends against a balance for exactly 57: 57 accepted, 143 refused, balance zero, ledger adding up', async () => {
    const t = await liveTenant('1.425');
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(env.app, 'POST', '/messages', {
          key: t.apiKey,
          body: offer(`+1415555${String(2000 + i).padStart(4, '0')}`),
        }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(57);
    expect(statuses.filter((s) => s === 402)).toHaveLength(143);
    for (const r of replies.filter((x) => x.status === 402))
      expect(r.body.error.code).toBe('INSUFFICIENT_BALANCE');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0000');
    expect(await ledgerSum(t.accountId)).toBe(0);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM wallet_transactions WHERE account_id = $1 AND type = 'debit'`,
        [t.accountId],
      ),
    ).toBe(57);
    expect(await count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId])).toBe(
      57,
    );
    // And all 57 go out: nothing was refunded.
    await eventually(
      () =>
        count(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND status = 'sent'`, [
          t.accountId,
        ]),
      (n) => n === 57,
      20_000,
    );
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.0000');
  });

  it('200 parallel requests with one Idempotency-Key make one message and one charge', async () => {
    const t = await liveTenant('1.00');
    const headers = { 'idempotency-key': 'order-4711-reminder' };
    const replies = await Promise.all(
      Array.from({ length: 200 }, () =>
        call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer('+14155550180'), headers }),
      ),
    );
    const accepted = replies.filter((r) => r.status === 202);
    const busy = replies.filter((r) => r.status === 409);
    expect(accepted.length + busy.length).toBe(200);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) expect(r.body.error.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(new Set(accepted.map((r) => r.body.id)).size).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId])).toBe(
      1,
    );
    expect(
      await count(
        `SELECT count(*)::int AS n FROM wallet_transactions WHERE account_id = $1 AND type = 'debit'`,
        [t.accountId],
      ),
    ).toBe(1);
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
    const again = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: offer('+14155550180'),
      headers,
    });
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(accepted[0]!.body.id);
    await messageWhen(env.app, t.apiKey, again.body.id, 'sent');
    expect(env.fake.sent.filter((s) => s.to === '+14155550180')).toHaveLength(1);
  });

  it('a key whose answer was lost (its process died after committing) still makes no second message', async () => {
    const t = await liveTenant('1.00');
    const headers = { 'idempotency-key': 'lost-answer' };
    const first = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: offer('+14155550181'),
      headers,
    });
    // As if the process died between the commit and recording the answer: the claim is abandoned.
    await env.tdb.db.query(
      `UPDATE idempotency_keys SET response_status = NULL, response_body = NULL, locked_until = now() - interval '1 minute'
        WHERE owner_id = $1 AND key = 'lost-answer'`,
      [t.accountId],
    );
    const again = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: offer('+14155550181'),
      headers,
    });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(await count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId])).toBe(
      1,
    );
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9750');
  });

  it('a send whose wallet moved between its read and its write writes nothing, then is accepted under the lock', async () => {
    const t = await liveTenant('1.00');
    // The recipient is known (a new one would take the locked path at once).
    const first = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: offer('+14155550182') });
    expect(first.status).toBe(202);
    // The database as the app has it, with a top-up landing right after each unlocked read.
    const db = env.app.ctx.db;
    const interleaved: Database = Object.assign(Object.create(db) as Database, {
      async query(text: string, params?: unknown[], options?: { prepared?: string }) {
        const result = await db.query(text, params, options as never);
        if (options?.prepared === 'accept-read')
          await credit(env.app, env.partner.partnerKey, t.accountId, '2.00');
        return result;
      },
    });
    const s = { ...env.app.ctx, db: interleaved };
    const message = await prepareMessage(offer('+14155550182'), {
      countryCode: 'US',
      lookup: templateLookup(db, t.accountId, s.approvedTemplates),
    });
    const request: SendRequest = {
      sender: { account: { id: t.accountId, channelProvider: 'whatsapp_cloud' }, mode: 'live' },
      message,
    };
    const messages = () =>
      count('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [t.accountId]);

    // Alone, the unlocked path notices the top-up and backs out, writing nothing.
    expect(await acceptBatchOptimistically(s, [request])).toBeNull();
    expect(await messages()).toBe(1);
    expect(await balanceOf(env.app, t.apiKey)).toBe('2.9750');
    expect(await ledgerSum(t.accountId)).toBe(2_975_000);

    // The queue then takes the locked path: one message, charged from the balance as topped up.
    const result = await new AcceptQueue(s, 1).submit(request);
    expect(result.kind).toBe('accepted');
    expect(await messages()).toBe(2);
    expect(await balanceOf(env.app, t.apiKey)).toBe('4.9500');
    expect(await ledgerSum(t.accountId)).toBe(4_950_000);
    // Each ledger row's balance follows from the one before it, in the order of their ids.
    const { rows } = await env.tdb.db.query<{ amount: number; after: number }>(
      `SELECT amount_micros AS amount, balance_after_micros AS after FROM wallet_transactions
        WHERE account_id = $1 ORDER BY id`,
      [t.accountId],
    );
    let running = 0;
    for (const row of rows) {
      running += row.amount;
      expect(row.after).toBe(running);
    }
  });

  it.runIf(onPostgres)(
    'a send waiting for its wallet (held by another transaction) does not hold up the next account’s send',
    async () => {
      const a = await liveTenant('1.00');
      const b = await liveTenant('1.00');
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let lockTaken!: () => void;
      const locked = new Promise<void>((resolve) => {
        lockTaken = resolve;
      });
      const holder = env.tdb.db.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [a.accountId]);
        lockTaken();
        await released;
      });
      await locked;
      let aAnswered = false;
      const aSend = call(env.app, 'POST', '/messages', { key: a.apiKey, body: offer('+14155550180') }).then(
        (res) => {
          aAnswered = true;
          return res;
        },
      );
      try {
        // A's batch is now waiting for the wallet row, far longer than a lane gathers behind it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        const bSend = await Promise.race([
          call(env.app, 'POST', '/messages', { key: b.apiKey, body: offer('+14155550181') }),
          new Promise<{ status: string; body: string }>((resolve) =>
            setTimeout(() => resolve({ status: 'held up behind A', body: '' }), 5000),
          ),
        ]);
        expect(bSend.status, JSON.stringify(bSend.body)).toBe(202);
        expect(aAnswered).toBe(false);
      } finally {
        release();
        await holder;
      }
      const aAnswer = await aSend;
      expect(aAnswer.status, JSON.stringify(aAnswer.body)).toBe(202);
      expect(await balanceOf(env.app, a.apiKey)).toBe('0.9750');
    },
  );
});
