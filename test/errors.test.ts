// The error contract: every failure, including Fastify's own, answers the documented body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { ERROR_CATALOGUE } from '../src/kernel/errors.ts';
import { documentedErrors, readErrorDocs } from '../src/modules/ops/error-docs.ts';
import { bootstrapPartner, call, type Partner, tenant } from './helpers/client.ts';
import { createTestApp, createTestDatabase, type TestDatabase } from './helpers/harness.ts';

let tdb: TestDatabase;
let app: App;
let partner: Partner;

beforeAll(async () => {
  tdb = await createTestDatabase();
  app = await createTestApp(tdb.db, {
    config: { bodyLimitBytes: 2048 },
    beforeReady: (a) => {
      a.get('/api/v1/public/test/boom', { config: { access: 'account' } }, async () => {
        throw new Error('secret internal detail: password=hunter2');
      });
    },
  });
  partner = await bootstrapPartner(app);
});

afterAll(async () => {
  await app.close();
  await tdb.drop();
});

function expectErrorBody(res: { body: any; headers: Record<string, unknown> }, code: string) {
  expect(res.body).toEqual({
    error: {
      code,
      message: expect.any(String),
      docs: `http://tidings.test/docs/errors#${code}`,
      requestId: res.headers['x-request-id'],
      ...(res.body.error.details ? { details: res.body.error.details } : {}),
    },
  });
  expect(res.body.error.requestId).toMatch(/^req_/);
}

describe('error bodies', () => {
  it('unknown route → 404 RESOURCE_NOT_FOUND', async () => {
    const res = await call(app, 'GET', '/api/v1/public/nothing-here');
    expect(res.status).toBe(404);
    expectErrorBody(res, 'RESOURCE_NOT_FOUND');
  });

  it('malformed JSON → 400 INVALID_REQUEST', async () => {
    const res = await call(app, 'POST', '/partner/accounts', {
      key: partner.partnerKey,
      body: '{"accountName": ',
    });
    expect(res.status).toBe(400);
    expectErrorBody(res, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field: 'body', issue: 'is not valid JSON' }]);
  });

  it('wrong content type → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await call(app, 'POST', '/partner/accounts', {
      key: partner.partnerKey,
      body: 'accountName=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expectErrorBody(res, 'UNSUPPORTED_MEDIA_TYPE');
    const text = await call(app, 'POST', '/partner/accounts', {
      key: partner.partnerKey,
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });

  it('oversized body → 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await call(app, 'POST', '/partner/accounts', {
      key: partner.partnerKey,
      body: { accountName: 'x'.repeat(5000), countryCode: 'US', planCode: 'pro' },
    });
    expect(res.status).toBe(413);
    expectErrorBody(res, 'PAYLOAD_TOO_LARGE');
  });

  it('validation failure → 400 with every failing field', async () => {
    const res = await call(app, 'POST', '/partner/accounts', {
      key: partner.partnerKey,
      body: { accountName: '', planCode: 'gold', extra: true },
    });
    expect(res.status).toBe(400);
    expectErrorBody(res, 'INVALID_REQUEST');
    const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(['accountName', 'countryCode', 'extra', 'planCode']);
    expect(res.body.error.details).toContainEqual({ field: 'countryCode', issue: 'is required' });
    expect(res.body.error.details).toContainEqual({ field: 'extra', issue: 'is not a known field' });
  });

  it('bad query parameters → 400 naming the parameter', async () => {
    const res = await call(app, 'GET', '/partner/accounts', {
      key: partner.partnerKey,
      query: { limit: '500' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('limit');
    const cursor = await call(app, 'GET', '/partner/accounts', {
      key: partner.partnerKey,
      query: { cursor: 'nonsense' },
    });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.details).toEqual([
      { field: 'cursor', issue: 'is not a cursor this API returned' },
    ]);
  });

  it('an unexpected failure → 500 INTERNAL_ERROR that shows nothing of its cause', async () => {
    const t = await tenant(app, partner.partnerKey);
    const res = await call(app, 'GET', '/test/boom', { key: t.apiKey });
    expect(res.status).toBe(500);
    expectErrorBody(res, 'INTERNAL_ERROR');
    expect(res.raw.body).not.toContain('hunter2');
    expect(res.raw.body).not.toContain('secret');
  });

  it('every response carries X-Request-Id, distinct per request', async () => {
    const a = await call(app, 'GET', '/healthz');
    const b = await call(app, 'GET', '/healthz');
    expect(a.headers['x-request-id']).toMatch(/^req_/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describe('error documentation', () => {
  it('documents every catalogue code with its status, and nothing else', () => {
    const documented = documentedErrors(readErrorDocs());
    const catalogue = Object.entries(ERROR_CATALOGUE).map(([code, e]) => ({ code, status: e.status }));
    expect(documented).toEqual(catalogue);
  });

  it('serves a page with an anchor per code at /docs/errors', async () => {
    const res = await call(app, 'GET', '/docs/errors');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(res.body).toContain(`id="${code}"`);
  });
});
