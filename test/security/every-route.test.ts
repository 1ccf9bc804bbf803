// Security checks run over EVERY registered route, so a route added later cannot forget them:
// account routes refuse a missing key (401), a plan without API access (402), a suspended account
// (403) and a partner key without X-Account-Id (400); partner routes refuse standard keys (403).
import { describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

function routesOf(access: string) {
  const routes = env.app.ctx.routes.filter((r) => r.access === access);
  expect(routes.length).toBeGreaterThan(0);
  // Path parameters get well-formed ids of nothing: the checks below come before any lookup.
  return routes.map((r) => ({
    method: r.method as Method,
    path: r.url.replace(/:(\w+)/g, 'acc_01jh0000000000000000000000'),
  }));
}

describe('every account route', () => {
  it('refuses a missing key with 401 INVALID_API_KEY', async () => {
    for (const r of routesOf('account')) {
      const res = await call(env.app, r.method, r.path, {
        body: r.method === 'GET' || r.method === 'DELETE' ? undefined : {},
      });
      expect(res.status, `${r.method} ${r.path}`).toBe(401);
      expect(res.body.error.code).toBe('INVALID_API_KEY');
    }
  });

  it('refuses an account whose plan has no API access with 402', async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    const down = await call(env.app, 'PATCH', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
      body: { planCode: 'starter' },
    });
    expect(down.status).toBe(200);
    for (const r of routesOf('account')) {
      const res = await call(env.app, r.method, r.path, { key: t.apiKey });
      expect(res.status, `${r.method} ${r.path}`).toBe(402);
      expect(res.body.error.code).toBe('PLAN_UPGRADE_REQUIRED');
    }
  });

  it('refuses a suspended account with 403 ACCOUNT_SUSPENDED', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expect(
      (
        await call(env.app, 'POST', `/partner/accounts/${t.accountId}/suspend`, {
          key: env.partner.partnerKey,
        })
      ).status,
    ).toBe(200);
    for (const r of routesOf('account')) {
      const res = await call(env.app, r.method, r.path, { key: t.apiKey });
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
      expect(res.body.error.code).toBe('ACCOUNT_SUSPENDED');
    }
  });

  it('refuses a partner key without X-Account-Id with 400', async () => {
    for (const r of routesOf('account')) {
      const res = await call(env.app, r.method, r.path, { key: env.partner.partnerKey });
      expect(res.status, `${r.method} ${r.path}`).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: 'X-Account-Id', issue: 'is required with a partner key' },
      ]);
    }
  });
});

describe('every partner route', () => {
  it('refuses a standard key with 403 FORBIDDEN and no key with 401', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const r of routesOf('partner')) {
      const res = await call(env.app, r.method, r.path, { key: t.apiKey });
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
      const none = await call(env.app, r.method, r.path);
      expect(none.status, `${r.method} ${r.path}`).toBe(401);
    }
  });
});
