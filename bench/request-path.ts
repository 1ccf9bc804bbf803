// Benchmark: the cost of the authenticated request path (key lookup, account status, plan, rate
// limit, the monthly count) against baselines from the same run (echo-server.ts, its own process):
//   - a bare Fastify route (HTTP and JSON alone);
//   - the same database reads GET /account needs, through a plain pg pool behind a bare route;
//   - POST /contacts against the same INSERT through a plain pg pool behind a bare route.
// PostgreSQL with 20 accounts and with 1 account (TIDINGS_RATE_LIMIT_OVERRIDE lifts the plan's
// per-second limit, so the limiter runs but never binds: this measures the service, not its limits),
// then the embedded database (PGlite) with 20 accounts. Load: autocannon, in this process. The phases
// alternate over BENCH_ROUNDS rounds (5); every ratio is the median of the rounds' own ratios.
//   npm run bench:request-path      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Any answer other than the one expected fails the run, naming the phase and the answer.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { describe, type LoadResult, result } from './load.ts';
import { record } from './report.ts';
import { answerOf, BenchFailure, benchDatabase, median, phase, startServer, stopServer } from './support.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
// Five rounds: on a shared two-core machine one round's ratio can be a tenth off the others'.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
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
  { label: 'Fastify baseline server', command: ['bench/echo-server.ts'], readyPath: '/echo' },
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

// The phases alternate over ROUNDS rounds, each ratio taken within its round and the median kept:
// on these shared virtual machines the same phase can differ by a third from one minute to the next.
type Phase = { name: string; url: string; tenants: Tenant[]; method?: 'POST'; expect?: number };
async function rounds<K extends string>(phases: Record<K, Phase>): Promise<Record<K, LoadResult[]>> {
  const out = Object.fromEntries(Object.keys(phases).map((k) => [k, []])) as unknown as Record<
    K,
    LoadResult[]
  >;
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, p] of Object.entries(phases) as [K, Phase][]) {
      out[k].push(await load(`${p.name}, round ${r + 1}`, p.url, p.tenants, p));
    }
  }
  return out;
}
/** The median over rounds of one phase's figure against another's in the same round. */
const against = (a: LoadResult[], b: LoadResult[], pick: (r: LoadResult) => number = (r) => r.perSecond) =>
  median(a.map((r, i) => pick(r) / pick(b[i]!)));
/** A phase's median figures (each figure's own median over the rounds). */
const typical = (runs: LoadResult[]): LoadResult => ({
  ...runs[0]!,
  count: median(runs.map((r) => r.count)),
  perSecond: median(runs.map((r) => r.perSecond)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  max: Math.max(...runs.map((r) => r.max)),
});

const pg = await rounds({
  bare: { name: 'bare route', url: urls.echo, tenants },
  reads: { name: 'reads through a plain pool', url: urls.reads, tenants },
  many: { name: 'GET /account, 20 accounts', url: urls.account, tenants },
  single: { name: 'GET /account, 1 account', url: urls.account, tenants: one },
  healthz: { name: 'GET /healthz', url: urls.healthz, tenants },
  insert: { name: 'INSERT through a plain pool', url: urls.insert, tenants, method: 'POST', expect: 201 },
  contacts: { name: 'POST /contacts', url: urls.contacts, tenants, method: 'POST', expect: 201 },
});
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
const lite = await rounds({
  bare: { name: 'bare route (PGlite phase)', url: urls.echo, tenants },
  account: { name: 'GET /account on PGlite', url: embeddedAccount, tenants: embeddedTenants },
});
await stopServer(embedded);
await stopServer(echo);
rmSync(dataDir, { recursive: true, force: true });

const times = (x: number) => `${x.toFixed(2)}×`;
const [bareRoute, reads, many, single, healthz, insert, contacts] = [
  pg.bare,
  pg.reads,
  pg.many,
  pg.single,
  pg.healthz,
  pg.insert,
  pg.contacts,
].map(typical) as LoadResult[];
const bareAgain = typical(lite.bare);
const pglite = typical(lite.account);
process.stdout.write(
  [
    `autocannon, ${CONCURRENCY} connections, ${SECONDS} s per phase, ${ROUNDS} rounds (medians); per-second limits lifted (${UNBOUND}/s)`,
    `bare route          GET /echo (Fastify, own process)        ${describe(bareRoute!)}`,
    `reads baseline      GET /account-reads (plain pg pool)      ${describe(reads!)}`,
    `PostgreSQL          GET /account, 20 accounts               ${describe(many!)}`,
    `                    GET /account, 1 account                 ${describe(single!)}`,
    `                    GET /healthz                            ${describe(healthz!)}`,
    `insert baseline     POST /contacts-insert (plain pg pool)   ${describe(insert!)}`,
    `                    POST /contacts                          ${describe(contacts!)}`,
    `bare route again    GET /echo                               ${describe(bareAgain)}`,
    `PGlite              GET /account, 20 accounts               ${describe(pglite)}`,
    `Medians of the rounds' own ratios:`,
    `GET /account vs bare route: 20 accounts ${times(against(pg.many, pg.bare))} (p99 ${times(against(pg.many, pg.bare, (r) => r.p99))}), ` +
      `1 account ${times(against(pg.single, pg.bare))} (p99 ${times(against(pg.single, pg.bare, (r) => r.p99))}); ` +
      `vs the reads: ${times(against(pg.many, pg.reads))}, ${times(against(pg.single, pg.reads))}; /healthz ${times(against(pg.healthz, pg.bare))}`,
    `POST /contacts vs the INSERT: ${times(against(pg.contacts, pg.insert))}; PGlite GET /account vs bare route: ${times(against(lite.account, lite.bare))}`,
    '',
  ].join('\n'),
);

const vs = (name: string, base: number) => ({ baseline: { name, value: base } });
const BARE = 'bare Fastify route';
const READS = 'the same reads through a plain pg pool, behind a bare route';
const ROUNDS_NOTE = `median of ${ROUNDS} alternating rounds' ratios`;
for (const [label, runs] of [
  ['20 accounts', pg.many],
  ['1 account', pg.single],
] as const) {
  const r = typical(runs);
  const throughput = against(runs, pg.bare);
  const overReads = against(runs, pg.reads);
  const p99 = against(runs, pg.bare, (x) => x.p99);
  record({
    figure: `authenticated GET /account (PostgreSQL, ${label}), throughput`,
    unit: 'req/s',
    value: r.perSecond,
    ...vs(BARE, bareRoute!.perSecond),
    ratio: throughput,
    target: '≥ 0.5×',
    met: throughput >= 0.5,
    note: ROUNDS_NOTE,
  });
  record({
    figure: `authenticated GET /account (PostgreSQL, ${label}), throughput against its reads`,
    unit: 'req/s',
    value: r.perSecond,
    ...vs(READS, reads!.perSecond),
    ratio: overReads,
    target: '≥ 0.8×',
    met: overReads >= 0.8,
    note: ROUNDS_NOTE,
  });
  record({
    figure: `authenticated GET /account (PostgreSQL, ${label}), p99`,
    unit: 'ms',
    value: r.p99,
    ...vs(BARE, bareRoute!.p99),
    ratio: p99,
    target: '≤ 3×',
    met: p99 <= 3,
    note: `p50 ${r.p50.toFixed(2)} ms against ${bareRoute!.p50.toFixed(2)} ms; ${ROUNDS_NOTE}`,
  });
}
record({
  figure: 'GET /healthz of the same server, throughput',
  unit: 'req/s',
  value: healthz!.perSecond,
  ...vs(BARE, bareRoute!.perSecond),
  ratio: against(pg.healthz, pg.bare),
  note: ROUNDS_NOTE,
});
const overInsert = against(pg.contacts, pg.insert);
record({
  figure: 'authenticated POST /contacts (PostgreSQL), throughput',
  unit: 'req/s',
  value: contacts!.perSecond,
  ...vs('the same INSERT through a plain pg pool, behind a bare route', insert!.perSecond),
  ratio: overInsert,
  target: '≥ 0.8×',
  met: overInsert >= 0.8,
  note: `p99 ${contacts!.p99.toFixed(1)} ms against ${insert!.p99.toFixed(1)} ms; the route also writes its contact.created event in the same transaction; ${ROUNDS_NOTE}`,
});
const liteRatio = against(lite.account, lite.bare);
record({
  figure: 'authenticated GET /account (PGlite, 20 accounts), throughput',
  unit: 'req/s',
  value: pglite.perSecond,
  ...vs(BARE, bareAgain.perSecond),
  ratio: liteRatio,
  target: '≥ 0.25×',
  met: liteRatio >= 0.25,
  note: ROUNDS_NOTE,
});

if (failed.length > 0) throw new BenchFailure(`answers it did not expect: ${failed.join('; ')}`, 'load');
