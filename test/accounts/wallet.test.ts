// The wallet (exact money, an append-only ledger that the database guards) and API usage reports.
import { describe, expect, it } from 'vitest';
import { changeBalance } from '../../src/modules/billing/wallet.ts';
import { call, otherPartner, type Reply, tenant } from '../helpers/client.ts';
import { micros } from '../helpers/money.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

function credit(accountId: string, amount: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  return call(env.app, 'POST', `/partner/accounts/${accountId}/wallet/credits`, {
    key: env.partner.partnerKey,
    body: { amount, ...extra },
  });
}

async function creditOk(accountId: string, amount: string, extra: Record<string, unknown> = {}) {
  const res = await credit(accountId, amount, extra);
  expect(res.status).toBe(201);
  return res.body;
}

async function balanceOf(apiKey: string): Promise<string> {
  const res = await call(env.app, 'GET', '/account/wallet', { key: apiKey });
  expect(res.status).toBe(200);
  expect(res.body.balance.currency).toBe('USD');
  return res.body.balance.amount;
}

async function transactions(apiKey: string, query: Record<string, string> = {}): Promise<Reply> {
  const res = await call(env.app, 'GET', '/account/wallet/transactions', { key: apiKey, query });
  return res;
}

describe('wallet balance', () => {
  it('a new account starts empty', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'GET', '/account/wallet', { key: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accountId: t.accountId,
      balance: { amount: '0.0000', currency: 'USD' },
      lowBalanceThreshold: null,
      updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const list = await transactions(t.apiKey);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [], nextCursor: null });
  });

  it('keeps the smallest unit exactly', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const txn = await creditOk(t.accountId, '0.000001');
    expect(txn.amount).toEqual({ amount: '0.000001', currency: 'USD' });
    expect(txn.balanceAfter).toEqual({ amount: '0.000001', currency: 'USD' });
    expect(await balanceOf(t.apiKey)).toBe('0.000001');
  });

  it('shows at least four decimals', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const txn = await creditOk(t.accountId, '25.5');
    expect(txn.amount.amount).toBe('25.5000');
    expect(await balanceOf(t.apiKey)).toBe('25.5000');
    await creditOk(t.accountId, '0.00025');
    expect(await balanceOf(t.apiKey)).toBe('25.50025');
  });

  it('sums many small credits with no float drift', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (let i = 0; i < 10; i++) await creditOk(t.accountId, '0.1');
    expect(await balanceOf(t.apiKey)).toBe('1.0000');

    const u = await tenant(env.app, env.partner.partnerKey);
    await creditOk(u.accountId, '0.1');
    const second = await creditOk(u.accountId, '0.2');
    expect(second.balanceAfter.amount).toBe('0.3000');
    expect(await balanceOf(u.apiKey)).toBe('0.3000');
  });

  it('keeps large amounts exact', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (let i = 0; i < 3; i++) await creditOk(t.accountId, '999999.999999');
    expect(await balanceOf(t.apiKey)).toBe('2999999.999997');
  });

  it.each([
    ['0', 'amount'],
    ['0.0000000', 'amount'],
    ['-5', 'amount'],
    ['1.0000001', 'amount'],
    ['1e3', 'amount'],
    ['1,50', 'amount'],
    ['1000000.000001', 'amount'],
  ])('refuses the amount %j', async (amount, field) => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await credit(t.accountId, amount);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field, issue: expect.any(String) }]);
    expect(await balanceOf(t.apiKey)).toBe('0.0000');
  });

  it('refuses a number, another currency, and a closed account', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const number = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/wallet/credits`, {
      key: env.partner.partnerKey,
      body: { amount: 10 },
    });
    expect(number.status).toBe(400);
    const euro = await credit(t.accountId, '10', { currency: 'EUR' });
    expect(euro.status).toBe(400);
    expect(euro.body.error.details).toEqual([{ field: 'currency', issue: expect.any(String) }]);
    expect((await credit(t.accountId, '10', { currency: 'usd' })).status).toBe(201);
    expect(await balanceOf(t.apiKey)).toBe('10.0000');

    const closed = await tenant(env.app, env.partner.partnerKey);
    expect(
      (
        await call(env.app, 'DELETE', `/partner/accounts/${closed.accountId}`, {
          key: env.partner.partnerKey,
        })
      ).status,
    ).toBe(204);
    const late = await credit(closed.accountId, '1');
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('CONFLICT');
  });
});

describe('wallet transactions', () => {
  it('lists newest first, each with the balance it left', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await creditOk(t.accountId, '1', { reference: 'inv-1', description: 'first' });
    await creditOk(t.accountId, '2.25', { reference: 'inv-2' });
    await creditOk(t.accountId, '3');
    const res = await transactions(t.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(
      res.body.data.map((x: any) => [x.type, x.amount.amount, x.balanceAfter.amount, x.reference]),
    ).toEqual([
      ['credit', '3.0000', '6.2500', null],
      ['credit', '2.2500', '3.2500', 'inv-2'],
      ['credit', '1.0000', '1.0000', 'inv-1'],
    ]);
    const oldest = res.body.data[2];
    expect(oldest).toEqual({
      id: expect.stringMatching(/^txn_[0-7][0-9a-hjkmnp-tv-z]{25}$/),
      type: 'credit',
      amount: { amount: '1.0000', currency: 'USD' },
      balanceAfter: { amount: '1.0000', currency: 'USD' },
      reference: 'inv-1',
      description: 'first',
      createdAt: expect.stringMatching(/Z$/),
    });
    expect(Date.parse(res.body.data[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(oldest.createdAt));
  });

  it('filters by type', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await creditOk(t.accountId, '5');
    // A debit as the messaging code will write it (there is no HTTP endpoint that debits yet).
    const debit = await env.tdb.db.transaction((tx) =>
      changeBalance(tx, env.app.ctx.events, t.accountId, {
        type: 'debit',
        amountMicros: -1_250_000,
        reference: 'msg-1',
      }),
    );
    expect(debit).not.toBeNull();
    await creditOk(t.accountId, '1');

    const debits = await transactions(t.apiKey, { type: 'debit' });
    expect(debits.status).toBe(200);
    expect(debits.body.data.map((x: any) => [x.type, x.amount.amount, x.balanceAfter.amount])).toEqual([
      ['debit', '-1.2500', '3.7500'],
    ]);
    const credits = await transactions(t.apiKey, { type: 'credit' });
    expect(credits.body.data.map((x: any) => x.amount.amount)).toEqual(['1.0000', '5.0000']);
    expect((await transactions(t.apiKey, { type: 'refund' })).body).toEqual({ data: [], nextCursor: null });
    const all = await transactions(t.apiKey);
    expect(all.body.data.map((x: any) => x.type)).toEqual(['credit', 'debit', 'credit']);
    expect(await balanceOf(t.apiKey)).toBe('4.7500');

    const bogus = await transactions(t.apiKey, { type: 'gift' });
    expect(bogus.status).toBe(400);
    expect(bogus.body.error.details[0].field).toBe('type');
  });

  it('pages with a cursor: every transaction once, in order', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const amount of ['1', '2', '3', '4', '5']) await creditOk(t.accountId, amount);
    const seen: string[] = [];
    const pages: number[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, string> = { limit: '2' };
      if (cursor) query.cursor = cursor;
      const res = await transactions(t.apiKey, query);
      expect(res.status).toBe(200);
      pages.push(res.body.data.length);
      seen.push(...res.body.data.map((x: any) => x.amount.amount));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(pages).toEqual([2, 2, 1]);
    expect(seen).toEqual(['5.0000', '4.0000', '3.0000', '2.0000', '1.0000']);

    // A page that ends exactly at the last row says so.
    const whole = await transactions(t.apiKey, { limit: '5' });
    expect(whole.body.data).toHaveLength(5);
    expect(whole.body.nextCursor).toBeNull();
    // Pagination combines with the type filter.
    const filtered = await transactions(t.apiKey, { limit: '4', type: 'credit' });
    expect(filtered.body.data).toHaveLength(4);
    const rest = await transactions(t.apiKey, {
      limit: '4',
      type: 'credit',
      cursor: filtered.body.nextCursor,
    });
    expect(rest.body.data.map((x: any) => x.amount.amount)).toEqual(['1.0000']);
    expect(rest.body.nextCursor).toBeNull();

    for (const limit of ['0', '101', 'ten']) {
      const bad = await transactions(t.apiKey, { limit });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].field).toBe('limit');
    }
    const forged = await transactions(t.apiKey, { cursor: 'not-a-cursor' });
    expect(forged.status).toBe(400);
    expect(forged.body.error.details).toEqual([
      { field: 'cursor', issue: 'is not a cursor this API returned' },
    ]);
  });

  it('20 concurrent credits all land, one after another', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const amounts = Array.from({ length: 20 }, (_, i) => `${i + 1}.${String(i + 1).padStart(6, '0')}`);
    const replies = await Promise.all(amounts.map((a) => credit(t.accountId, a)));
    expect(replies.map((r) => r.status)).toEqual(amounts.map(() => 201));

    const total = amounts.reduce((sum, a) => sum + micros(a), 0n);
    expect(micros(await balanceOf(t.apiKey))).toBe(total);

    const list = await transactions(t.apiKey, { limit: '100' });
    expect(list.body.data).toHaveLength(20);
    const after = list.body.data.map((x: any) => micros(x.balanceAfter.amount));
    expect(new Set(after).size).toBe(20);
    // Newest first, each balance is the one before it plus its own amount: no credit saw a stale balance.
    const oldestFirst = [...list.body.data].reverse();
    let running = 0n;
    for (const x of oldestFirst) {
      running += micros(x.amount.amount);
      expect(micros(x.balanceAfter.amount)).toBe(running);
    }
    expect(running).toBe(total);
  });
});

describe('the database guards the ledger', () => {
  it('a balance can never be negative, whatever the code does', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await creditOk(t.accountId, '1');
    await expect(
      env.tdb.db.query('UPDATE accounts SET wallet_balance_micros = -1 WHERE id = $1', [t.accountId]),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      env.tdb.db.query(
        'UPDATE accounts SET wallet_balance_micros = wallet_balance_micros - 1000001 WHERE id = $1',
        [t.accountId],
      ),
    ).rejects.toMatchObject({ code: '23514' });
    await expect(
      env.tdb.db.query(
        `INSERT INTO wallet_transactions (id, account_id, type, amount_micros, balance_after_micros, currency)
         VALUES ('txn_forged', $1, 'debit', -2000000, -1000000, 'USD')`,
        [t.accountId],
      ),
    ).rejects.toMatchObject({ code: '23514' });
    expect(await balanceOf(t.apiKey)).toBe('1.0000');
  });

  it('wallet transactions are append-only', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const txn = await creditOk(t.accountId, '7');
    await expect(
      env.tdb.db.query('UPDATE wallet_transactions SET amount_micros = 1 WHERE id = $1', [txn.id]),
    ).rejects.toMatchObject({ code: '23001', message: expect.stringContaining('append-only') });
    await expect(
      env.tdb.db.query('DELETE FROM wallet_transactions WHERE id = $1', [txn.id]),
    ).rejects.toMatchObject({
      code: '23001',
    });
    await expect(
      env.tdb.db.query('DELETE FROM wallet_transactions WHERE account_id = $1', [t.accountId]),
    ).rejects.toThrow(/append-only/);
    const list = await transactions(t.apiKey);
    expect(list.body.data.map((x: any) => x.amount.amount)).toEqual(['7.0000']);
  });

  it('concurrent debits cannot overdraw', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await creditOk(t.accountId, '1');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        env.tdb.db.transaction((tx) =>
          changeBalance(tx, env.app.ctx.events, t.accountId, { type: 'debit', amountMicros: -100_000 }),
        ),
      ),
    );
    expect(results.filter((r) => r !== null)).toHaveLength(10);
    expect(await balanceOf(t.apiKey)).toBe('0.0000');
    const debits = await transactions(t.apiKey, { type: 'debit', limit: '100' });
    expect(debits.body.data).toHaveLength(10);
    // Listed newest first in the order they were applied: each left 0.1 less than the one before.
    expect(debits.body.data.map((x: any) => x.balanceAfter.amount)).toEqual(
      Array.from({ length: 10 }, (_, i) => `0.${i}000`),
    );
  });
});

describe('wallet isolation', () => {
  it("another tenant's key sees only its own, empty wallet", async () => {
    const owner = await tenant(env.app, env.partner.partnerKey);
    await creditOk(owner.accountId, '12.34');
    const stranger = await tenant(env.app, env.partner.partnerKey);

    const wallet = await call(env.app, 'GET', '/account/wallet', { key: stranger.apiKey });
    expect(wallet.body.accountId).toBe(stranger.accountId);
    expect(wallet.body.balance.amount).toBe('0.0000');
    expect((await transactions(stranger.apiKey)).body).toEqual({ data: [], nextCursor: null });

    const named = await call(env.app, 'GET', '/account/wallet', {
      key: stranger.apiKey,
      accountId: owner.accountId,
    });
    expect(named.status).toBe(403);
    expect(named.body.error.code).toBe('FORBIDDEN');
    const namedList = await call(env.app, 'GET', '/account/wallet/transactions', {
      key: stranger.apiKey,
      accountId: owner.accountId,
    });
    expect(namedList.status).toBe(403);
    expect(await balanceOf(owner.apiKey)).toBe('12.3400');
  });

  it("another partner can neither credit nor read the account's wallet", async () => {
    const owner = await tenant(env.app, env.partner.partnerKey);
    const other = await otherPartner(env.tdb.db);
    const res = await call(env.app, 'POST', `/partner/accounts/${owner.accountId}/wallet/credits`, {
      key: other.partnerKey,
      body: { amount: '100' },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('RESOURCE_NOT_FOUND');
    const read = await call(env.app, 'GET', '/account/wallet', {
      key: other.partnerKey,
      accountId: owner.accountId,
    });
    expect(read.status).toBe(404);
    // The owning partner acting on the account reads it.
    const own = await call(env.app, 'GET', '/account/wallet', {
      key: env.partner.partnerKey,
      accountId: owner.accountId,
    });
    expect(own.status).toBe(200);
    expect(own.body.balance.amount).toBe('0.0000');
  });
});

describe('GET /account/usage', () => {
  it('counts calls per day, each call counting itself', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (let i = 0; i < 3; i++)
      expect((await call(env.app, 'GET', '/account', { key: t.apiKey })).status).toBe(200);
    const res = await call(env.app, 'GET', '/account/usage', { key: t.apiKey });
    expect(res.status).toBe(200);
    const today = res.body.to;
    expect(today).toBe(new Date().toISOString().slice(0, 10));
    expect(res.body).toEqual({
      from: `${today.slice(0, 7)}-01`,
      to: today,
      totalCalls: 4,
      days: [{ date: today, calls: 4 }],
    });

    const oneDay = await call(env.app, 'GET', '/account/usage', {
      key: t.apiKey,
      query: { from: today, to: today },
    });
    expect(oneDay.body).toEqual({ from: today, to: today, totalCalls: 5, days: [{ date: today, calls: 5 }] });
    const before = await call(env.app, 'GET', '/account/usage', {
      key: t.apiKey,
      query: { from: '2020-01-01', to: '2020-12-31' },
    });
    expect(before.body).toEqual({ from: '2020-01-01', to: '2020-12-31', totalCalls: 0, days: [] });

    // The partner reads the same counts without adding to them; other accounts' calls are not in them.
    const other = await tenant(env.app, env.partner.partnerKey);
    await call(env.app, 'GET', '/account', { key: other.apiKey });
    const asPartner = await call(env.app, 'GET', `/partner/accounts/${t.accountId}/usage`, {
      key: env.partner.partnerKey,
    });
    expect(asPartner.body.totalCalls).toBe(6);
    const self = await call(env.app, 'GET', '/account', { key: t.apiKey });
    expect(self.body.usage.calls).toBe(7);
  });

  it('validates from and to', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const reversed = await call(env.app, 'GET', '/account/usage', {
      key: t.apiKey,
      query: { from: '2026-03-10', to: '2026-03-09' },
    });
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.code).toBe('INVALID_REQUEST');
    expect(reversed.body.error.details).toEqual([{ field: 'from', issue: 'must not be after to' }]);

    const malformed: Record<string, string>[] = [
      { from: '2026-3-1' },
      { from: '01/03/2026' },
      { to: 'today' },
      { to: '2026-02-30' },
    ];
    for (const query of malformed) {
      const bad = await call(env.app, 'GET', '/account/usage', { key: t.apiKey, query });
      expect(bad.status, JSON.stringify(query)).toBe(400);
      expect(bad.body.error.details[0].field).toBe(Object.keys(query)[0]);
    }

    const long = await call(env.app, 'GET', '/account/usage', {
      key: t.apiKey,
      query: { from: '2024-01-01', to: '2025-06-01' },
    });
    expect(long.status).toBe(400);
    expect(long.body.error.details[0].field).toBe('to');

    const unknown = await call(env.app, 'GET', '/account/usage', {
      key: t.apiKey,
      query: { since: '2026-01-01' },
    });
    expect(unknown.status).toBe(400);
  });
});
