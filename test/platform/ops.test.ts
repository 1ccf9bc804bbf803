// Operations: liveness, readiness, metrics, and a graceful close that lets in-flight requests finish.
import { describe, expect, it } from 'vitest';
import { openPglite } from '../../src/kernel/database/db.ts';
import { call } from '../helpers/client.ts';
import { createTestApp } from '../helpers/harness.ts';
import { useTestApp } from '../helpers/setup.ts';

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
    const broken = await createTestApp(lost, { priceBook: false });
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

  it('adds each answer once to its series: counts, cumulative buckets, sum and count agree', async () => {
    const series = async () => {
      const text = (await call(env.app, 'GET', '/metrics')).body as string;
      const of = (name: string) =>
        text
          .split('\n')
          .filter((l) => l.startsWith(name) && l.includes('route="/readyz",status="200"'))
          .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
      return {
        total: of('tidings_http_requests_total{')[0] ?? 0,
        buckets: of('tidings_http_request_duration_seconds_bucket{'),
        sum: of('tidings_http_request_duration_seconds_sum{')[0] ?? 0,
        count: of('tidings_http_request_duration_seconds_count{')[0] ?? 0,
      };
    };
    const before = await series();
    for (let i = 0; i < 3; i++) expect((await call(env.app, 'GET', '/readyz')).status).toBe(200);
    const after = await series();
    expect(after.total - before.total).toBe(3);
    expect(after.count - before.count).toBe(3);
    expect(after.sum).toBeGreaterThan(before.sum);
    // 12 bounds and +Inf, each counting the answers at or under it: never fewer than the one before.
    expect(after.buckets).toHaveLength(13);
    expect(after.buckets.at(-1)).toBe(after.count);
    for (let i = 1; i < after.buckets.length; i++)
      expect(after.buckets[i]!).toBeGreaterThanOrEqual(after.buckets[i - 1]!);
    const text = (await call(env.app, 'GET', '/metrics')).body as string;
    expect(text).toContain('# TYPE tidings_http_requests_total counter');
    expect(text).toContain('# TYPE tidings_http_request_duration_seconds histogram');
    expect(text).toMatch(
      /tidings_http_request_duration_seconds_bucket\{le="0\.001",method="GET",route="\/readyz",status="200"\} \d+/,
    );
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
