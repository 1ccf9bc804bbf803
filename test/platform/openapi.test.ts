// The OpenAPI document: generated from the routes, complete, and served with a docs UI.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ bootstrap: false });

interface Operation {
  operationId?: string;
  responses: Record<string, { description?: string; content?: unknown }>;
  security?: unknown[];
  parameters?: { name: string; in: string }[];
}

async function document() {
  const res = await call(env.app, 'GET', '/api/v1/public/openapi.json');
  expect(res.status).toBe(200);
  return res.body as { openapi: string; paths: Record<string, Record<string, Operation>>; components: any };
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with the error body as a shared component', async () => {
    const doc = await document();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.ErrorBody.properties.error.required).toEqual(
      expect.arrayContaining(['code', 'message', 'docs', 'requestId']),
    );
  });

  it('documents every public API route, each with an operationId and its error responses', async () => {
    const doc = await document();
    const apiRoutes = env.app.ctx.routes.filter((r) => r.url.startsWith('/api/v1/public/') && r.documented);
    expect(apiRoutes.length).toBeGreaterThan(15);
    for (const route of apiRoutes) {
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${path}`).toBeDefined();
      expect(op.operationId).toBeTruthy();
      expect(op.responses['500']).toBeDefined();
      const statuses = Object.keys(op.responses);
      expect(statuses.some((s) => s.startsWith('2'))).toBe(true);
      expect(statuses.some((s) => s.startsWith('4'))).toBe(true);
    }
  });

  it('documents the access errors by access level', async () => {
    const doc = await document();
    const account = doc.paths['/api/v1/public/account'].get;
    for (const status of ['400', '401', '402', '403', '404', '429'])
      expect(account.responses[status]).toBeDefined();
    expect(account.responses['429'].description).toContain('RATE_LIMITED');
    expect(account.responses['429'].description).toContain('QUOTA_EXCEEDED');
    expect(account.parameters?.some((p) => p.in === 'header' && p.name === 'x-account-id')).toBe(true);
    const provision = doc.paths['/api/v1/public/partner/accounts'].post;
    expect(provision.responses['409'].description).toContain('CONFLICT');
    expect(provision.responses['415']).toBeDefined();
    expect(provision.responses['413']).toBeDefined();
    expect(provision.security).toEqual([{ PartnerKey: [] }, { ConsoleSession: [] }]);
    const bootstrap = doc.paths['/api/v1/public/partner/bootstrap'].post;
    expect(bootstrap.responses['409'].description).toContain('ALREADY_BOOTSTRAPPED');
    expect(bootstrap.responses['401'].description).toContain('INVALID_BOOTSTRAP_TOKEN');
  });

  it('serves a docs UI at /docs', async () => {
    const res = await call(env.app, 'GET', '/docs');
    expect([200, 301, 302]).toContain(res.status);
    const page = res.status !== 200 ? await call(env.app, 'GET', String(res.headers.location)) : res;
    expect(page.status).toBe(200);
    expect(String(page.headers['content-type'])).toContain('text/html');
  });

  it("serves the docs UI's script, which the page loads (the plugin is loaded on the first visit)", async () => {
    const page = String((await call(env.app, 'GET', '/docs/')).body);
    const src = /<script[^>]+src="([^"]+)"/.exec(page)?.[1];
    expect(src).toBe('js/scalar.js');
    const script = await call(env.app, 'GET', `/docs/${src}`);
    expect(script.status).toBe(200);
    expect(String(script.headers['content-type'])).toContain('application/javascript');
    expect(String(script.body).length).toBeGreaterThan(1_000_000);
    expect(String(script.body)).toContain('createApiReference');
  });
});
