// Benchmark: the cost of the authenticated request path (key lookup, account status, plan, rate
// limit, the monthly count) against baselines from the same run (echo-server.ts, its own process):
//   - a bare Fastify route (HTTP and JSON alone);
//   - the same database reads GET /account needs, through a plain pg pool behind a bare route;
//   - POST /contacts against the same INSERT through a plain pg pool behind a bare route.
// PostgreSQL with 20 accounts and with 1 account (TIDINGS_RATE_LIMIT_OVERRIDE lifts the plan's
// per-second limit, so the limiter runs but never binds: this measures the service, not its limits),
// then the embedded database (PGlite) with 20 accounts. Load: autocannon, in this process.
//   npm run bench:request-path      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Any answer other than the one expected fails the run, naming the phase and the answer.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { describe, type LoadResult, result } from './load.ts';
import { record } from './report.ts';
import { answerOf, BenchFailure, benchDatabase, phase, startServer, stopServer } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ACCOUNTS = 20;
const TOKEN = randomBytes(24).toString('hex');
const UNBOUND = '10000000';

interface Tenant {
  key: string;
  accountId: string;
}

async function post(port: number, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new BenchFailure(`POST ${path}: ${answerOf(res.status, await res.text())}`);
  return res.json() as Promise<Record<string, string>>;
}

/** Bootstraps a fresh server and provisions `n` accounts on the largest plan, a key each. */
async function provision(port: number, n: number): Promise<Tenant[]> {
  const { apiKey: partnerKey } = await post(
    port,
    '/api/v1/public/partner/bootstrap',
    { authorization: `Bearer ${TOKEN}` },
    {},
  );
  const partner = { 'x-api-key': partnerKey! };
  const tenants: Tenant[] = [];
  for (let i = 0; i < n; i++) {
    const { accountId } = await post(port, '/api/v1/public/partner/accounts', partner, {
      accountName: `bench ${i}`,
      countryCode: 'US',
      planCode: 'scale',
    });
    const { apiKey } = await post(port, `/api/v1/public/partner/accounts/${accountId}/keys`, partner, {
      name: 'bench',
    });
    tenants.push({ key: apiKey!, accountId: accountId! });
  }
  return tenants;
}

let nextPhone = 2_000_000;
const failed: string[] = [];

/**
 * CONCURRENCY connections send requests back to back for SECONDS, each with the next tenant (its key
 * and its account id, for the baselines that read by id). autocannon's own percentiles are whole
 * milliseconds, too coarse beside a 1 ms echo: each response's time (fractional ms) is kept instead.
 */
function load(
  name: string,
  url: string,
  tenants: Tenant[],
  options: { method?: 'GET' | 'POST'; expect?: number } = {},
): Promise<LoadResult> {
  const { method = 'GET', expect = 200 } = options;
  phase(name);
  let counter = 0;
  const latencies: number[] = [];
  const unexpected = new Map<number, number>();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: CONCURRENCY,
        duration: SECONDS,
        requests: [
          {
            method,
            setupRequest: (req) => {
              const t = tenants[counter++ % tenants.length]!;
              const headers = {
                'x-api-key': t.key,
                'x-account-id': t.accountId,
                'content-type': 'application/json',
              };
              if (method === 'GET') return { ...req, headers };
              // +1 415 2xx xxxx: a new valid number each time.
              const phone = `+1415${nextPhone++}`;
              return { ...req, headers, body: JSON.stringify({ phone, name: `Bench ${phone}` }) };
            },
          },
        ],
      },
      (err, r) => {
        if (err) return reject(err);
        const failures = [...unexpected.values()].reduce((a, b) => a + b, 0) + r.errors + r.timeouts;
        if (failures > 0) {
          const what = [...unexpected].map(([status, n]) => `${n}× HTTP ${status}`);
          if (r.errors + r.timeouts) what.push(`${r.errors} errors, ${r.timeouts} timeouts`);
          failed.push(`${name}: expected HTTP ${expect}, got ${what.join(', ')}`);
        }
        resolve(result(latencies, r.duration, failures, failures ? 'unexpected answers' : null));
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status !== expect) unexpected.set(status, (unexpected.get(status) ?? 0) + 1);
      latencies.push(ms);
    });
  });
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
    TIDINGS_RATE_LIMIT_OVERRIDE: UNBOUND,
  },
  { label: 'Tidings server (PostgreSQL)' },
);
const echoPort = port + 1;
const echo = await startServer(
  { PORT: String(echoPort), DATABASE_URL: database.url },
  { label: 'Fastify baseline server', command: ['scripts/bench/echo-server.ts'], readyPath: '/echo' },
);

const tenants = await provision(port, ACCOUNTS);
const one = tenants.slice(0, 1);
const tidings = `http://127.0.0.1:${port}`;
const bare = `http://127.0.0.1:${echoPort}`;
const urls = {
  echo: `${bare}/echo`,
  reads: `${bare}/account-reads`,
  insert: `${bare}/contacts-insert`,
  account: `${tidings}/api/v1/public/account`,
  contacts: `${tidings}/api/v1/public/contacts`,
  healthz: `${tidings}/healthz`,
};

// Warm-up (JIT, caches, connections, prepared statements), not measured.
for (const url of [urls.echo, urls.reads, urls.account, urls.healthz]) await load('warm-up', url, tenants);
await load('warm-up', urls.insert, tenants, { method: 'POST', expect: 201 });
await load('warm-up', urls.contacts, tenants, { method: 'POST', expect: 201 });

const bareRoute = await load('bare route', urls.echo, tenants);
const reads = await load('reads through a plain pool', urls.reads, tenants);
const many = await load('GET /account, 20 accounts', urls.account, tenants);
const single = await load('GET /account, 1 account', urls.account, one);
const healthz = await load('GET /healthz', urls.healthz, tenants);
const insert = await load('INSERT through a plain pool', urls.insert, tenants, {
  method: 'POST',
  expect: 201,
});
const contacts = await load('POST /contacts', urls.contacts, tenants, { method: 'POST', expect: 201 });
await stopServer(server);
await database.drop();

// The embedded database: the same server on PGlite, its own data directory.
const dataDir = mkdtempSync(join(tmpdir(), 'tidings-bench-'));
const embeddedPort = port + 2;
const embedded = await startServer(
  {
    DATA_DIR: dataDir,
    PORT: String(embeddedPort),
    BOOTSTRAP_TOKEN: TOKEN,
    TIDINGS_PARTNER_RATE_LIMIT: '100000',
    TIDINGS_RATE_LIMIT_OVERRIDE: UNBOUND,
  },
  // A first start makes the embedded database (initdb, migrations): slower on a busy machine.
  { label: 'Tidings server (PGlite)', readySeconds: 180 },
);
const embeddedTenants = await provision(embeddedPort, ACCOUNTS);
const embeddedAccount = `http://127.0.0.1:${embeddedPort}/api/v1/public/account`;
await load('warm-up', embeddedAccount, embeddedTenants);
const bareAgain = await load('bare route (PGlite phase)', urls.echo, tenants);
const pglite = await load('GET /account on PGlite', embeddedAccount, embeddedTenants);
await stopServer(embedded);
await stopServer(echo);
rmSync(dataDir, { recursive: true, force: true });

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
process.stdout.write(
  [
    `autocannon, ${CONCURRENCY} connections, ${SECONDS} s per phase; per-second limits lifted (${UNBOUND}/s)`,
    `bare route          GET /echo (Fastify, own process)        ${describe(bareRoute)}`,
    `reads baseline      GET /account-reads (plain pg pool)      ${describe(reads)}`,
    `PostgreSQL          GET /account, 20 accounts               ${describe(many)}`,
    `                    GET /account, 1 account                 ${describe(single)}`,
    `                    GET /healthz                            ${describe(healthz)}`,
    `insert baseline     POST /contacts-insert (plain pg pool)   ${describe(insert)}`,
    `                    POST /contacts                          ${describe(contacts)}`,
    `bare route again    GET /echo                               ${describe(bareAgain)}`,
    `PGlite              GET /account, 20 accounts               ${describe(pglite)}`,
    `GET /account vs bare route: 20 accounts ${ratio(many.perSecond, bareRoute.perSecond)} (p99 ${ratio(many.p99, bareRoute.p99)}), ` +
      `1 account ${ratio(single.perSecond, bareRoute.perSecond)} (p99 ${ratio(single.p99, bareRoute.p99)}); ` +
      `vs the reads: ${ratio(many.perSecond, reads.perSecond)}, ${ratio(single.perSecond, reads.perSecond)}`,
    `POST /contacts vs the INSERT: ${ratio(contacts.perSecond, insert.perSecond)}; PGlite GET /account vs bare route: ${ratio(pglite.perSecond, bareAgain.perSecond)}`,
    '',
  ].join('\n'),
);

const vs = (name: string, base: number) => ({ baseline: { name, value: base } });
const BARE = 'bare Fastify route';
const READS = 'the same reads through a plain pg pool, behind a bare route';
for (const [label, r] of [
  ['20 accounts', many],
  ['1 account', single],
] as const) {
  record({
    figure: `authenticated GET /account (PostgreSQL, ${label}), throughput`,
    unit: 'req/s',
    value: r.perSecond,
    ...vs(BARE, bareRoute.perSecond),
    target: '≥ 0.5×',
    met: r.perSecond / bareRoute.perSecond >= 0.5,
  });
  record({
    figure: `authenticated GET /account (PostgreSQL, ${label}), throughput against its reads`,
    unit: 'req/s',
    value: r.perSecond,
    ...vs(READS, reads.perSecond),
    target: '≥ 0.8×',
    met: r.perSecond / reads.perSecond >= 0.8,
  });
  record({
    figure: `authenticated GET /account (PostgreSQL, ${label}), p99`,
    unit: 'ms',
    value: r.p99,
    ...vs(BARE, bareRoute.p99),
    target: '≤ 3×',
    met: r.p99 / bareRoute.p99 <= 3,
    note: `p50 ${r.p50.toFixed(2)} ms against ${bareRoute.p50.toFixed(2)} ms`,
  });
}
record({
  figure: 'GET /healthz of the same server, throughput',
  unit: 'req/s',
  value: healthz.perSecond,
  ...vs(BARE, bareRoute.perSecond),
});
record({
  figure: 'authenticated POST /contacts (PostgreSQL), throughput',
  unit: 'req/s',
  value: contacts.perSecond,
  ...vs('the same INSERT through a plain pg pool, behind a bare route', insert.perSecond),
  target: '≥ 0.8×',
  met: contacts.perSecond / insert.perSecond >= 0.8,
  note: `p99 ${contacts.p99.toFixed(1)} ms against ${insert.p99.toFixed(1)} ms; the route also writes its contact.created event in the same transaction`,
});
record({
  figure: 'authenticated GET /account (PGlite, 20 accounts), throughput',
  unit: 'req/s',
  value: pglite.perSecond,
  ...vs(BARE, bareAgain.perSecond),
  target: '≥ 0.25×',
  met: pglite.perSecond / bareAgain.perSecond >= 0.25,
});

if (failed.length > 0) throw new BenchFailure(`answers it did not expect: ${failed.join('; ')}`, 'load');
