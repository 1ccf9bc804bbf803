// Benchmark: the cost of the authenticated request path (key lookup, account status, plan, rate
// limit, exact monthly quota count) measured against /healthz on the same server in the same run.
//   npm run bench:request-path                      embedded database (PGlite, in memory)
//   BENCH_DATABASE_URL=postgres://…/postgres npm run bench:request-path   a fresh PostgreSQL database
// Prints requests/s and latency percentiles of both, and their ratios.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { makeConfig } from '../../src/config.ts';
import { type Database, openPglite, openPostgres } from '../../src/kernel/db.ts';
import { migrate } from '../../src/kernel/migrate.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ACCOUNTS = 20;
const TOKEN = randomBytes(24).toString('hex');

async function openBenchDatabase(): Promise<{ db: Database; drop: () => Promise<void>; kind: string }> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) {
    const db = await openPglite(null);
    return { db, drop: () => db.close(), kind: 'PGlite (in memory)' };
  }
  const name = `tidings_bench_${randomBytes(4).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const db = await openPostgres(url.toString(), 20);
  return {
    db,
    kind: 'PostgreSQL',
    drop: async () => {
      await db.close();
      await run(`DROP DATABASE ${name} WITH (FORCE)`);
    },
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function post(port: number, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json() as Promise<Record<string, string>>;
}

interface Result {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** CONCURRENCY workers issue requests back to back for SECONDS; `pick` chooses each request. */
async function load(port: number, pick: (i: number) => { path: string; headers?: Record<string, string> }) {
  const latencies: number[] = [];
  let failures = 0;
  let counter = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const { path, headers } = pick(counter++);
        const started = performance.now();
        const status = await get(port, path, headers);
        latencies.push(performance.now() - started);
        if (status !== 200) failures++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { perSecond: latencies.length / SECONDS, p50: at(0.5), p99: at(0.99), failures } satisfies Result;
}

const { db, drop, kind } = await openBenchDatabase();
await migrate(db);
const app = await buildApp(
  makeConfig({ logLevel: 'silent', bootstrapToken: TOKEN, partnerRatePerSecond: 100000 }),
  {
    db,
    processMetrics: false,
  },
);
await app.listen({ port: 0, host: '127.0.0.1' });
const port = (app.server.address() as { port: number }).port;

const { apiKey: partnerKey } = await post(
  port,
  '/api/v1/public/partner/bootstrap',
  { authorization: `Bearer ${TOKEN}` },
  {},
);
const keys: string[] = [];
// Several accounts on the largest plan, so that the per-second limit is not what is measured.
for (let i = 0; i < ACCOUNTS; i++) {
  const { accountId } = await post(
    port,
    '/api/v1/public/partner/accounts',
    { 'x-api-key': partnerKey },
    {
      accountName: `bench ${i}`,
      countryCode: 'US',
      planCode: 'scale',
    },
  );
  const { apiKey } = await post(
    port,
    `/api/v1/public/partner/accounts/${accountId}/keys`,
    { 'x-api-key': partnerKey },
    {
      name: 'bench',
    },
  );
  keys.push(apiKey);
}

const healthz = () => ({ path: '/healthz' });
const account = (i: number) => ({
  path: '/api/v1/public/account',
  headers: { 'x-api-key': keys[i % keys.length] },
});
await load(port, healthz);
await load(port, account);
const baseline = await load(port, healthz);
const measured = await load(port, account);

const fmt = (r: Result) =>
  `${r.perSecond.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms   non-200: ${r.failures}`;
process.stdout.write(
  [
    `database: ${kind}; ${CONCURRENCY} concurrent connections, ${SECONDS} s per phase, ${ACCOUNTS} accounts`,
    `baseline  GET /healthz                 ${fmt(baseline)}`,
    `measured  GET /api/v1/public/account    ${fmt(measured)}`,
    `ratio (measured / baseline): throughput ${(measured.perSecond / baseline.perSecond).toFixed(2)}, ` +
      `p50 latency ${(measured.p50 / baseline.p50).toFixed(2)}, p99 latency ${(measured.p99 / baseline.p99).toFixed(2)}`,
    '',
  ].join('\n'),
);
agent.destroy();
await app.close();
await drop();
