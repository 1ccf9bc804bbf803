// Meta's price book as data (src/modules/pricing/book.ts, store.ts): the shipped rows are in the
// price_book table from the start, rewritten when a release changes them; an operator's rows are
// loaded whole or not at all, each problem named; a row with a later date prices messages from that
// date (estimates and sends name it), while a message priced before keeps the rule that priced it;
// a running server reads new rows within a minute.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BookRow } from '../../src/modules/pricing/book.ts';
import { loadPrices } from '../../src/modules/pricing/prices.ts';
import { SHIPPED_BOOK } from '../../src/modules/pricing/shipped-book.ts';
import { attachBook, loadOperatorRows, operatorRowsOf, readBook } from '../../src/modules/pricing/store.ts';
import { call } from '../helpers/client.ts';
import { approvedTemplate, credit, useMessagingApp, whatsappTenant } from '../helpers/messaging.ts';

const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset) };
const env = useMessagingApp({ autoApprove: true, now: clock.now });
afterEach(() => {
  vi.useRealTimers();
});

const row = (over: Partial<BookRow>): BookRow => ({
  market: 'US',
  category: 'marketing',
  rule: 'list',
  priceMicros: 30_000,
  effectiveFrom: new Date('2027-01-01T00:00:00Z'),
  source: 'operator',
  note: null,
  ...over,
});

describe('the price book', () => {
  it('holds the shipped rows from the start, and a release that changes them rewrites them', async () => {
    const shipped = (await readBook(env.tdb.db)).filter((r) => r.source === 'shipped');
    expect(shipped).toHaveLength(SHIPPED_BOOK.length);
    // Meta's 2026-10-01 rule is rows: service charged, in-window utility no longer free.
    expect(shipped).toContainEqual(
      expect.objectContaining({ market: '*', category: 'utility', rule: 'in_window', priceMicros: null }),
    );
    await env.tdb.db.query(
      `UPDATE price_book SET price_micros = 1 WHERE source = 'shipped' AND market = 'US' AND category = 'marketing'`,
    );
    const stop = await attachBook(env.tdb.db, env.app.ctx.prices);
    stop();
    const again = (await readBook(env.tdb.db)).filter((r) => r.market === 'US' && r.category === 'marketing');
    expect(again.map((r) => r.priceMicros)).toEqual([25_000]);
  });

  it("refuses an operator's file naming every problem, and loads nothing of it", () => {
    const { rows, problems } = operatorRowsOf({
      currency: 'EUR',
      extra: 1,
      rows: [
        { market: 'usa', category: 'marketing', price: '0.03', effectiveFrom: '2027-01-01' },
        { market: 'US', category: 'sms', price: 'cheap', effectiveFrom: '1 Jan' },
        { market: 'US', category: 'utility', price: null, effectiveFrom: '2027-01-01' },
        { market: '*', category: 'utility', rule: 'in_window', price: null, effectiveFrom: '2027-01-01' },
        { market: '*', category: 'utility', rule: 'in_window', price: '0', effectiveFrom: '2027-01-01' },
      ],
    });
    expect(problems).toEqual([
      'extra: is not a known field',
      'currency: must be "USD" (the wallets are in USD)',
      'rows[0].market: must be an ISO 3166-1 alpha-2 code, or "*" for every other market',
      'rows[1].category: must be one of marketing, utility, authentication, service',
      'rows[1].price: must be a decimal string like "0.0250" (null only on an in_window row, to withdraw the rule)',
      'rows[1].effectiveFrom: must be a date, like "2027-01-01" (its start, UTC)',
      'rows[2].price: must be a decimal string like "0.0250" (null only on an in_window row, to withdraw the rule)',
      'rows[4]: the file already has a row for * utility in_window from 2027-01-01',
    ]);
    expect(rows).toHaveLength(1);
    expect(operatorRowsOf({ currency: 'USD', rows: 'none' }).problems).toEqual(['rows: must be a list']);
  });

  it('prices from a row’s date on, names the rule, and leaves what was priced before as it was', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    await credit(env.app, env.partner.partnerKey, t.accountId, '1.00');
    const template = await approvedTemplate(env.app, t.apiKey, {
      name: 'winter_sale',
      category: 'MARKETING',
      body: 'Hi {{1}}, the winter sale is on. Reply STOP to opt out.',
      examples: ['Ann'],
    });
    const body = (to: string) => ({
      to,
      templateName: template.name,
      templateLanguage: template.language,
      parameters: ['Ann'],
    });
    // Meta's next quarter, loaded ahead: US marketing up from 2027-01-01.
    const loaded = await loadOperatorRows(env.tdb.db, [
      row({ note: "Meta's rate card, 2027-01-01" }),
      row({ market: '*', category: 'utility', rule: 'in_window', priceMicros: 1_000 }),
    ]);
    expect(loaded).toEqual({ added: 2, replaced: 0 });
    env.app.ctx.prices.useStoredRows(await readBook(env.tdb.db));
    clock.offset = new Date('2026-12-31T23:00:00Z').getTime() - Date.now();
    const before = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: body('+14155550180') });
    expect(before.body.pricing).toMatchObject({
      charged: { amount: '0.0250' },
      rule: { key: 'list:US:marketing:2025-07-01:shipped', source: 'shipped' },
    });
    clock.offset = new Date('2027-01-01T00:00:00Z').getTime() - Date.now();
    const estimate = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: body('+14155550181'),
    });
    expect(estimate.body.recipients[0]).toMatchObject({
      charge: { amount: '0.0300' },
      rule: { key: 'list:US:marketing:2027-01-01:operator', market: 'US', source: 'operator' },
    });
    const after = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: body('+14155550181') });
    expect(after.body.pricing).toMatchObject({
      charged: { amount: '0.0300' },
      rule: estimate.body.recipients[0].rule,
    });
    const older = await call(env.app, 'GET', `/messages/${before.body.id}`, { key: t.apiKey });
    expect(older.body.pricing).toMatchObject({ charged: { amount: '0.0250' }, rule: { source: 'shipped' } });
    // A correction of the same row replaces it; the other markets keep the shipped rows.
    expect(await loadOperatorRows(env.tdb.db, [row({ priceMicros: 29_000 })])).toEqual({
      added: 0,
      replaced: 1,
    });
    env.app.ctx.prices.useStoredRows(await readBook(env.tdb.db));
    const corrected = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: {
        ...body('+14155550181'),
        to: undefined,
        recipients: [{ to: '+14155550181' }, { to: '+4915112345678' }],
      },
    });
    expect(corrected.body.recipients.map((r: { charge: { amount: string } }) => r.charge.amount)).toEqual([
      '0.0290',
      '0.1365',
    ]);
    clock.offset = 0;
  });

  it('takes the files docs/messaging.md § The price book shows, as written', () => {
    const page = readFileSync(new URL('../../docs/messaging.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('### The price book'), page.indexOf('**Estimates.**'));
    const files = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
    expect(files).toHaveLength(2);
    expect(operatorRowsOf(files[0])).toMatchObject({
      problems: [],
      rows: [{ market: 'US' }, { market: '*' }],
    });
    const dir = mkdtempSync(join(tmpdir(), 'tidings-book-'));
    try {
      writeFileSync(join(dir, 'prices.json'), JSON.stringify(files[1]));
      expect(loadPrices(join(dir, 'prices.json')).listPrice('KE', 'marketing')).toBe(21_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is read again by a running server every minute', async () => {
    vi.useFakeTimers({ toFake: ['setInterval'] });
    const prices = env.app.ctx.prices;
    const stop = await attachBook(env.tdb.db, prices);
    try {
      const at = new Date('2027-06-01T00:00:00Z');
      expect(prices.listPrice('FR', 'authentication', at)).toBe(69_200);
      await loadOperatorRows(env.tdb.db, [
        row({ market: 'FR', category: 'authentication', priceMicros: 50_000, effectiveFrom: at }),
      ]);
      expect(prices.listPrice('FR', 'authentication', at)).toBe(69_200);
      vi.advanceTimersByTime(60_000);
      await vi.waitFor(() => expect(prices.listPrice('FR', 'authentication', at)).toBe(50_000));
    } finally {
      stop();
    }
  });
});
