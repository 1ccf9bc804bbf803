// The error contract: every failure, including Fastify's own, answers the documented body.
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/kernel/http/errors.ts';
import { documentedErrors, readErrorDocs } from '../../src/modules/ops/error-docs.ts';
import { call, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({
  config: { bodyLimitBytes: 2048 },
  beforeReady: (a) => {
    a.get('/api/v1/public/test/boom', { config: { access: 'account' } }, async () => {
      throw new Error('secret internal detail: password=hunter2');
    });
  },
});

describe('error bodies', () => {
  it('unknown route → 404 RESOURCE_NOT_FOUND', async () => {
    const res = await call(env.app, 'GET', '/api/v1/public/nothing-here');
    expectError(res, 404, 'RESOURCE_NOT_FOUND');
  });

  it('malformed JSON → 400 INVALID_REQUEST', async () => {
    const res = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: '{"accountName": ',
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field: 'body', issue: 'is not valid JSON' }]);
  });

  it('wrong content type → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: 'accountName=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const text = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });

  it('oversized body → 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: { accountName: 'x'.repeat(5000), countryCode: 'US', planCode: 'pro' },
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('validation failure → 400 with every failing field', async () => {
    const res = await call(env.app, 'POST', '/partner/accounts', {
      key: env.partner.partnerKey,
      body: { accountName: '', planCode: 'gold', extra: true },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    const fields = res.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(['accountName', 'countryCode', 'extra', 'planCode']);
    expect(res.body.error.details).toContainEqual({ field: 'countryCode', issue: 'is required' });
    expect(res.body.error.details).toContainEqual({ field: 'extra', issue: 'is not a known field' });
  });

  it('bad query parameters → 400 naming the parameter', async () => {
    const res = await call(env.app, 'GET', '/partner/accounts', {
      key: env.partner.partnerKey,
      query: { limit: '500' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('limit');
    const cursor = await call(env.app, 'GET', '/partner/accounts', {
      key: env.partner.partnerKey,
      query: { cursor: 'nonsense' },
    });
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.details).toEqual([
      { field: 'cursor', issue: 'is not a cursor this API returned' },
    ]);
  });

  it('an unexpected failure → 500 INTERNAL_ERROR that shows nothing of its cause', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const res = await call(env.app, 'GET', '/test/boom', { key: t.apiKey });
    expectError(res, 500, 'INTERNAL_ERROR');
    expect(res.raw.body).not.toContain('hunter2');
    expect(res.raw.body).not.toContain('secret');
  });

  it('every response carries X-Request-Id, distinct per request', async () => {
    const a = await call(env.app, 'GET', '/healthz');
    const b = await call(env.app, 'GET', '/healthz');
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
    const res = await call(env.app, 'GET', '/docs/errors');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(res.body).toContain(`id="${code}"`);
  });
});
