// Benchmark: the cost of the authenticated request path (key lookup, account status, plan, rate
// limit, exact monthly quota count) on PostgreSQL, against a minimal Fastify app with one echo route
// (echo-server.ts) in the same run. Each server runs in its own process; the load comes from this
// one (autocannon).
//   npm run bench:request-path      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Prints requests/s and latency percentiles of the echo route, of an authenticated GET and of the
// same server's /healthz (Tidings' hooks without the authentication), and the ratios to the echo.
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { describe, type LoadResult, result } from './load.ts';
import { record } from './report.ts';
import { benchDatabase, startServer, stopServer } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ACCOUNTS = 20;
const TOKEN = randomBytes(24).toString('hex');

async function post(port: number, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, string>>;
}

const database = await benchDatabase();
const port = 40_000 + Math.floor(Math.random() * 10_000);
const server = await startServer(
  {
    DATABASE_URL: database.url,
    PORT: String(port),
    BOOTSTRAP_TOKEN: TOKEN,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    TIDINGS_PARTNER_RATE_LIMIT: '100000',
  },
  { label: 'Tidings server' },
);
const echoPort = port + 1;
const echo = await startServer(
  { PORT: String(echoPort) },
  { label: 'Fastify echo server', command: ['scripts/bench/echo-server.ts'], readyPath: '/echo' },
);

const { apiKey: partnerKey } = await post(
  port,
  '/api/v1/public/partner/bootstrap',
  { authorization: `Bearer ${TOKEN}` },
  {},
);
const keys: string[] = [];
// Several accounts on the largest plan, so that the per-second limit is not what is measured.
for (let i = 0; i < ACCOUNTS; i++) {
  const partner = { 'x-api-key': partnerKey! };
  const { accountId } = await post(port, '/api/v1/public/partner/accounts', partner, {
    accountName: `bench ${i}`,
    countryCode: 'US',
    planCode: 'scale',
  });
  const { apiKey } = await post(port, `/api/v1/public/partner/accounts/${accountId}/keys`, partner, {
    name: 'bench',
  });
  keys.push(apiKey!);
}

/**
 * CONCURRENCY connections issue GETs of `url` back to back for SECONDS, each with the next key.
 * autocannon's own percentiles are whole milliseconds, too coarse beside a 1 ms echo: each
 * response's time (fractional ms) is kept instead and summed up by load.ts.
 */
function load(url: string): Promise<LoadResult> {
  let counter = 0;
  const latencies: number[] = [];
  let failures = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: CONCURRENCY,
        duration: SECONDS,
        requests: [
          {
            method: 'GET',
            setupRequest: (req) => ({ ...req, headers: { 'x-api-key': keys[counter++ % keys.length]! } }),
          },
        ],
      },
      (err, r) => {
        if (err) reject(err);
        else resolve(result(latencies, r.duration, failures + r.errors, failures ? 'non-2xx answers' : null));
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status < 200 || status >= 300) failures++;
      latencies.push(ms);
    });
  });
}

const urls = {
  echo: `http://127.0.0.1:${echoPort}/echo`,
  account: `http://127.0.0.1:${port}/api/v1/public/account`,
  healthz: `http://127.0.0.1:${port}/healthz`,
};
// Warm-up (JIT, caches, connections), not measured.
for (const url of Object.values(urls)) await load(url);
const baseline = await load(urls.echo);
const measured = await load(urls.account);
const healthz = await load(urls.healthz);

process.stdout.write(
  [
    `database: PostgreSQL; autocannon, ${CONCURRENCY} connections, ${SECONDS} s per phase, ${ACCOUNTS} accounts`,
    `baseline  GET /echo (Fastify, own process)  ${describe(baseline)}`,
    `measured  GET /api/v1/public/account        ${describe(measured)}`,
    `          GET /healthz (same server)        ${describe(healthz)}`,
    `ratio (measured / baseline): throughput ${(measured.perSecond / baseline.perSecond).toFixed(2)}, ` +
      `p50 latency ${(measured.p50 / baseline.p50).toFixed(2)}, p99 latency ${(measured.p99 / baseline.p99).toFixed(2)}`,
    '',
  ].join('\n'),
);

// No issue set a target for the request path: the ratios are shown without one.
const vsEcho = (value: number, base: number) => ({
  value,
  baseline: { name: 'Fastify echo route', value: base },
});
record({
  figure: 'authenticated GET /account, throughput',
  unit: 'req/s',
  ...vsEcho(measured.perSecond, baseline.perSecond),
  note: 'no target was set for the request path',
});
record({ figure: 'authenticated GET /account, p50', unit: 'ms', ...vsEcho(measured.p50, baseline.p50) });
record({ figure: 'authenticated GET /account, p99', unit: 'ms', ...vsEcho(measured.p99, baseline.p99) });
record({
  figure: 'GET /healthz of the same server, throughput',
  unit: 'req/s',
  ...vsEcho(healthz.perSecond, baseline.perSecond),
});

await stopServer(server);
await stopServer(echo);
await database.drop();
if (measured.failures + healthz.failures + baseline.failures > 0) {
  throw new Error('requests failed during the measurement (see the figures above)');
}
