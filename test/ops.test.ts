// Operations: liveness, readiness, metrics, and a graceful close that lets in-flight requests finish.
import { describe, expect, it } from 'vitest';
import { openPglite } from '../src/kernel/db.ts';
import { call } from './helpers/client.ts';
import { createTestApp } from './helpers/harness.ts';
import { useTestApp } from './helpers/setup.ts';

const env = useTestApp({ bootstrap: false });

describe('probes', () => {
  it('/healthz answers ok', async () => {
    const res = await call(env.app, 'GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers ready while the database answers, 503 with Retry-After when it does not', async () => {
    expect((await call(env.app, 'GET', '/readyz')).body).toEqual({ status: 'ready' });
    const lost = await openPglite(null);
    const broken = await createTestApp(lost);
    await lost.close();
    const res = await call(broken, 'GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('5');
    await broken.close();
  });
});

describe('metrics', () => {
  it('counts requests and latencies by route pattern and status', async () => {
    await call(env.app, 'GET', '/healthz');
    await call(env.app, 'GET', '/api/v1/public/partner/accounts/acc_x');
    const res = await call(env.app, 'GET', '/metrics');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/plain');
    expect(res.body).toMatch(
      /tidings_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/,
    );
    // The pattern, not the URL: one series for all ids.
    expect(res.body).toContain('route="/api/v1/public/partner/accounts/:accountId",status="401"');
    expect(res.body).toMatch(/tidings_http_request_duration_seconds_bucket\{[^}]*route="\/healthz"/);
  });
});

describe('graceful close', () => {
  it('finishes a request in flight, then stops accepting connections', async () => {
    const slow = await createTestApp(env.tdb.db, {
      beforeReady: (a) => {
        a.get('/slow', async () => {
          await new Promise((r) => setTimeout(r, 800));
          return { finished: true };
        });
      },
    });
    const address = await slow.listen({ port: 0, host: '127.0.0.1' });
    const inFlight = fetch(`${address}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await new Promise((r) => setTimeout(r, 100));
    const closed = slow.close();
    expect(await inFlight).toEqual({ status: 200, body: { finished: true } });
    await closed;
    await expect(fetch(`${address}/healthz`)).rejects.toThrow();
  });
});
