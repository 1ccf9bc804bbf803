// The price table: the shipped defaults, an operator's file laid over them country by country and
// category by category (read at start, refused with every problem named), and the prices the API
// then quotes and charges.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { loadPrices } from '../../src/modules/pricing/prices.ts';
import { quote } from '../../src/modules/pricing/quote.ts';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  balanceOf,
  credit,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';

const dir = mkdtempSync(join(tmpdir(), 'tidings-prices-'));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const operatorPrices = file('prices.json', {
  currency: 'USD',
  default: { marketing: '0.0700' },
  countries: { US: { marketing: '0.0300' }, KE: { marketing: '0.0210', utility: '0.0011' } },
});

const env = useMessagingApp({ autoApprove: true, config: { pricesFile: operatorPrices } });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the price table', () => {
  it('ships per-country defaults, and a default row for the rest', () => {
    const prices = loadPrices(null);
    expect(prices.listPrice('US', 'marketing')).toBe(25_000);
    expect(prices.listPrice('US', 'utility')).toBe(3_400);
    expect(prices.listPrice('IN', 'authentication')).toBe(1_400);
    expect(prices.listPrice('ZZ', 'marketing')).toBe(60_400);
    expect(prices.listPrice(null, 'utility')).toBe(7_700);
    // Free-form (service) messages were free until Meta began charging them on 2026-10-01.
    expect(prices.listPrice('US', 'service', new Date('2026-09-30T12:00:00Z'))).toBe(0);
    expect(prices.listPrice('US', 'service', new Date('2026-10-01T00:00:00Z'))).toBe(3_400);
  });

  it('lays a file over it, category by category; what the file leaves out keeps the shipped price', () => {
    const prices = loadPrices(operatorPrices);
    expect(prices.listPrice('US', 'marketing')).toBe(30_000);
    expect(prices.listPrice('US', 'utility')).toBe(3_400);
    expect(prices.listPrice('KE', 'utility')).toBe(1_100);
    expect(prices.listPrice('DE', 'marketing')).toBe(136_500);
    expect(prices.listPrice('ZZ', 'marketing')).toBe(70_000);
    expect(prices.listPrice('ZZ', 'utility')).toBe(7_700);
  });

  it('refuses a file it cannot use, naming every problem', () => {
    const bad = file('bad.json', {
      currency: 'EUR',
      default: { marketing: 'cheap' },
      countries: { usa: { marketing: '0.01' }, FR: { sms: '0.01' } },
      extra: true,
    });
    let error: unknown;
    try {
      loadPrices(bad);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const part of [
      'extra: is not a known field',
      'currency: must be USD',
      'default.marketing',
      'countries.usa',
      'countries.FR.sms',
    ]) {
      expect(message).toContain(part);
    }
    expect(() => loadPrices(join(dir, 'missing.json'))).toThrow(/cannot read/);
    expect(() => loadPrices(file('broken.json', '{"countries":'))).toThrow(ConfigError);
  });

  it('quotes the free rules as they stood before 2026-10-01: the sandbox, and utility and service inside the window', () => {
    const prices = loadPrices(null);
    const at = new Date('2026-09-30T23:59:59Z');
    const base = { country: 'US', windowOpen: false, provider: 'whatsapp_cloud' as const, at };
    expect(quote(prices, { ...base, category: 'marketing' })).toMatchObject({
      chargeMicros: 25_000,
      freeReason: null,
    });
    expect(quote(prices, { ...base, category: 'marketing', provider: 'sandbox' })).toMatchObject({
      chargeMicros: 0,
      freeReason: 'sandbox',
    });
    expect(quote(prices, { ...base, category: 'utility', windowOpen: true })).toMatchObject({
      listPriceMicros: 3_400,
      chargeMicros: 0,
      freeReason: 'customer_service_window',
    });
    expect(quote(prices, { ...base, category: 'marketing', windowOpen: true })).toMatchObject({
      chargeMicros: 25_000,
    });
    expect(quote(prices, { ...base, category: 'authentication', windowOpen: true })).toMatchObject({
      chargeMicros: 13_500,
    });
    expect(quote(prices, { ...base, category: 'service', windowOpen: true })).toMatchObject({
      chargeMicros: 0,
      freeReason: null,
      rule: 'list:*:service:2025-07-01:shipped',
    });
  });

  it('charges service messages and in-window utility templates from 2026-10-01, as Meta does', () => {
    const prices = loadPrices(null);
    const at = new Date('2026-10-01T00:00:00Z');
    const base = { country: 'US', windowOpen: true, provider: 'whatsapp_cloud' as const, at };
    expect(quote(prices, { ...base, category: 'utility' })).toEqual({
      country: 'US',
      category: 'utility',
      listPriceMicros: 3_400,
      chargeMicros: 3_400,
      freeReason: null,
      rule: 'list:US:utility:2025-07-01:shipped',
    });
    expect(quote(prices, { ...base, category: 'service' })).toMatchObject({
      chargeMicros: 3_400,
      rule: 'list:US:service:2026-10-01:shipped',
    });
    // A market without its own row pays the default row's utility rate for service.
    expect(quote(prices, { ...base, country: 'ZZ', category: 'service' })).toMatchObject({
      chargeMicros: 7_700,
      rule: 'list:*:service:2026-10-01:shipped',
    });
    expect(quote(prices, { ...base, category: 'service', provider: 'sandbox' })).toMatchObject({
      chargeMicros: 0,
      freeReason: 'sandbox',
      rule: 'sandbox',
    });
  });

  it('is what the API quotes and charges with TIDINGS_PRICES_FILE set', async () => {
    const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
    await credit(env.app, env.partner.partnerKey, t.accountId, '1.00');
    await approvedTemplate(env.app, t.apiKey, {
      name: 'promo',
      category: 'MARKETING',
      body: 'Hi {{1}}, the {{2}} sale is on this week. Reply STOP to opt out.',
    });
    const body = (to: string) => ({
      to,
      templateName: 'promo',
      templateLanguage: 'en_US',
      parameters: ['Ann', 'summer'],
    });
    const estimate = await call(env.app, 'POST', '/messages/estimate', {
      key: t.apiKey,
      body: {
        ...body('+14155550150'),
        to: undefined,
        recipients: [{ to: '+14155550150' }, { to: '+254712345678' }, { to: '+33612345678' }],
      },
    });
    expect(
      estimate.body.recipients.map((r: { country: string; charge: { amount: string } }) => [
        r.country,
        r.charge.amount,
      ]),
    ).toEqual([
      ['US', '0.0300'],
      ['KE', '0.0210'],
      ['FR', '0.0859'],
    ]);
    const sent = await call(env.app, 'POST', '/messages', { key: t.apiKey, body: body('+254712345678') });
    expect(sent.body.pricing.charged.amount).toBe('0.0210');
    expect(await balanceOf(env.app, t.apiKey)).toBe('0.9790');
  });
});
