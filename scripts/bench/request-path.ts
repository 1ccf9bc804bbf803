// Benchmark: the cost of the authenticated request path (key lookup, account status, plan, rate
// limit, exact monthly quota count) on PostgreSQL, against a minimal Fastify app with one echo route
// (echo-server.ts) in the same run. Each server runs in its own process; the load comes from this
// one (autocannon).
//   npm run bench:request-path      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Prints requests/s and latency percentiles of the echo route, of an authenticated GET and of the
// same server's /healthz (Tidings' hooks without the authentication), and the ratios to the echo.
// The authenticated GETs rotate over enough Scale accounts that their per-second limit cannot bind
// (twice the echo route's rate in their limits, at least 20 accounts; BENCH_ACCOUNTS sets it), and
// any answer but a 2xx fails the script, naming the phase and the answers.
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { describe, type LoadResult, result } from './load.ts';
import { record } from './report.ts';
import {
  answerOf,
  BenchFailure,
  benchDatabase,
  phase,
  SCALE_PER_SECOND,
  startServer,
  stopServer,
  Unexpected,
} from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const TOKEN = randomBytes(24).toString('hex');

async function post(port: number, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new BenchFailure(`POST ${path}: ${answerOf(res.status, await res.text())}`);
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
/** Each phase's unexpected answers, checked once the figures are out. */
const unexpected = new Map<string, Unexpected>();

/**
 * CONCURRENCY connections issue GETs of `url` back to back for SECONDS, each with the next key.
 * autocannon's own percentiles are whole milliseconds, too coarse beside a 1 ms echo: each
 * response's time (fractional ms) is kept instead and summed up by load.ts.
 */
function load(name: string, url: string): Promise<LoadResult> {
  phase(name);
  let counter = 0;
  const latencies: number[] = [];
  let failures = 0;
  const odd = new Unexpected();
  unexpected.set(name, odd);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: CONCURRENCY,
        duration: SECONDS,
        requests: [
          {
            method: 'GET',
            setupRequest: (req) =>
              keys.length ? { ...req, headers: { 'x-api-key': keys[counter++ % keys.length]! } } : req,
            onResponse: (status, body) => {
              if (status < 200 || status >= 300) odd.add(answerOf(status, body));
            },
          },
        ],
      },
      (err, r) => {
        if (err) return reject(err);
        for (let i = 0; i < r.errors + r.timeouts; i++) odd.add('no answer (connection error or timeout)');
        resolve(result(latencies, r.duration, failures + r.errors, odd.first[0] ?? null));
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
// Warm-up (JIT, caches, connections), not measured. The echo's rate sizes the accounts.
const echoWarm = await load('warm-up: echo', urls.echo);
phase('setup: accounts');
const ACCOUNTS = Number(
  process.env.BENCH_ACCOUNTS ?? Math.max(20, Math.ceil((2 * echoWarm.perSecond) / SCALE_PER_SECOND)),
);
// Accounts on the largest plan, several at once (the partner's limit is lifted by startServer).
const partner = { 'x-api-key': partnerKey! };
for (let i = 0; i < ACCOUNTS; i += 10) {
  const batch = Array.from({ length: Math.min(10, ACCOUNTS - i) }, async (_, k) => {
    const { accountId } = await post(port, '/api/v1/public/partner/accounts', partner, {
      accountName: `bench ${i + k}`,
      countryCode: 'US',
      planCode: 'scale',
    });
    const { apiKey } = await post(port, `/api/v1/public/partner/accounts/${accountId}/keys`, partner, {
      name: 'bench',
    });
    return apiKey!;
  });
  keys.push(...(await Promise.all(batch)));
}
await load('warm-up: authenticated GET', urls.account);
await load('warm-up: healthz', urls.healthz);
const baseline = await load('echo', urls.echo);
const measured = await load('authenticated GET /account', urls.account);
const healthz = await load('GET /healthz', urls.healthz);
phase('report');

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
  note: `no target was set for the request path; ${ACCOUNTS} Scale accounts in turn`,
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
// Any unexpected answer, in a warm-up too (a 429 there says the accounts are too few), fails the run.
for (const [name, odd] of unexpected) odd.check(name);
