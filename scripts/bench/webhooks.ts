// Benchmark: webhook fan-out on PostgreSQL. The Tidings server and the receiver each run in their
// own process; this process emits events through the same EventOutbox.emit the API uses.
//   npm run bench:webhooks      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Phases:
//   1. baseline: the receiver hit directly (autocannon, as many connections as the dispatcher uses)
//   2. throughput: a backlog of BENCH_EVENTS events committed while no server runs, then drained by
//      a fresh server; deliveries/s from the first receipt to the last
//   3. latency: events committed one per transaction at BENCH_RATE per second for BENCH_SECONDS;
//      commit-to-receipt p50/p99
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { type Database, openPostgres } from '../../src/kernel/db.ts';
import { EventOutbox } from '../../src/kernel/events.ts';
import { migrate } from '../../src/kernel/migrate.ts';
import { webhookFanOut } from '../../src/modules/webhooks/outbox.ts';
import { record } from './report.ts';
import {
  benchDatabase,
  percentile,
  ROOT,
  sleep,
  startServer as startServerOn,
  stopServer,
} from './support.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ACCOUNTS = 10;
const CONCURRENCY = 64;
const TOKEN = randomBytes(24).toString('hex');
const SECRETS_KEY = randomBytes(32).toString('base64');

function child(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn('node', args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function startReceiver(): Promise<{ proc: ChildProcess; port: number }> {
  const proc = child(['scripts/bench/webhook-receiver.ts']);
  const line = await new Promise<string>((resolve) =>
    createInterface({ input: proc.stdout! }).once('line', resolve),
  );
  return { proc, port: (JSON.parse(line) as { port: number }).port };
}

function startServer(databaseUrl: string, port: number, label: string): Promise<ChildProcess> {
  return startServerOn(
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      BOOTSTRAP_TOKEN: TOKEN,
      SECRETS_KEY,
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      TIDINGS_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      TIDINGS_DB_POOL_SIZE: '10',
    },
    { label },
  );
}

async function api(port: number, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/public${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

async function receipts(port: number): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/stats`);
  const { receipts: list } = (await res.json()) as { receipts: [string, number][] };
  const first = new Map<string, number>();
  for (const [id, at] of list) if (!first.has(id)) first.set(id, at);
  return first;
}

// --- setup ---
const database = await benchDatabase();
const databaseUrl = database.url;
const db: Database = await openPostgres(databaseUrl, 10);
await migrate(db);
const receiver = await startReceiver();
process.once('exit', () => receiver.proc.kill());
const serverPort = 40_000 + Math.floor(Math.random() * 10_000);
let server = await startServer(databaseUrl, serverPort, 'server for the setup');

const { apiKey: partnerKey } = await api(
  serverPort,
  '/partner/bootstrap',
  { authorization: `Bearer ${TOKEN}` },
  {},
);
const accounts: string[] = [];
for (let i = 0; i < ACCOUNTS; i++) {
  const { accountId } = await api(
    serverPort,
    '/partner/accounts',
    { 'x-api-key': partnerKey },
    {
      accountName: `bench ${i}`,
      countryCode: 'US',
      planCode: 'scale',
    },
  );
  const { apiKey } = await api(
    serverPort,
    `/partner/accounts/${accountId}/keys`,
    { 'x-api-key': partnerKey },
    {
      name: 'bench',
    },
  );
  await api(
    serverPort,
    '/webhooks',
    { 'x-api-key': apiKey },
    {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      events: ['*'],
    },
  );
  accounts.push(accountId!);
}
const outbox = new EventOutbox(() => new Date(), [webhookFanOut]);
const data = {
  id: 'txn_bench',
  type: 'credit',
  amount: { amount: '1.0000', currency: 'USD' },
  note: 'x'.repeat(200),
};

// --- 1. baseline: the receiver hit directly ---
const body = JSON.stringify({
  id: 'evt_x',
  type: 'wallet.credited',
  createdAt: new Date().toISOString(),
  accountId: accounts[0],
  data,
});
const direct = await autocannon({
  url: `http://127.0.0.1:${receiver.port}/hook`,
  method: 'POST',
  headers: { 'content-type': 'application/json', 'webhook-id': 'evt_direct' },
  body,
  connections: CONCURRENCY,
  duration: 5,
});
await fetch(`http://127.0.0.1:${receiver.port}/reset`, { method: 'POST' });

// --- 2. throughput: drain a backlog ---
await stopServer(server);
const emitStarted = performance.now();
for (let i = 0; i < EVENTS; i += 200) {
  await db.transaction(async (tx) => {
    for (let j = i; j < Math.min(EVENTS, i + 200); j++) {
      await outbox.emit(tx, { type: 'wallet.credited', accountId: accounts[j % ACCOUNTS]!, data });
    }
  });
}
const emitSeconds = (performance.now() - emitStarted) / 1000;
server = await startServer(databaseUrl, serverPort, 'server draining the backlog, then at 500 events/s');
let drained = new Map<string, number>();
for (let i = 0; i < 600 && drained.size < EVENTS; i++) {
  await sleep(500);
  drained = await receipts(receiver.port);
}
const times = [...drained.values()].sort((a, b) => a - b);
const drainSeconds = (times.at(-1)! - times[0]!) / 1000;
const throughput = drained.size / drainSeconds;
await fetch(`http://127.0.0.1:${receiver.port}/reset`, { method: 'POST' });

// --- 3. latency at a steady rate ---
const committed = new Map<string, number>();
const total = RATE * SECONDS;
const started = Date.now();
const pending: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / RATE;
  const wait = due - Date.now();
  if (wait > 1) await sleep(wait);
  pending.push(
    db
      .transaction((tx) =>
        outbox.emit(tx, { type: 'wallet.credited', accountId: accounts[i % ACCOUNTS]!, data }),
      )
      .then((event) => {
        committed.set(event.id, Date.now());
      }),
  );
}
await Promise.all(pending);
const emitRate = total / ((Date.now() - started) / 1000);
let got = new Map<string, number>();
for (let i = 0; i < 120 && got.size < total; i++) {
  await sleep(250);
  got = await receipts(receiver.port);
}
const latencies = [...committed]
  .flatMap(([id, at]) => (got.has(id) ? [got.get(id)! - at] : []))
  .sort((a, b) => a - b);

const ratio = throughput / direct.requests.average;
const p50 = percentile(latencies, 0.5);
const p99 = percentile(latencies, 0.99);
process.stdout.write(
  [
    `webhooks on PostgreSQL; ${ACCOUNTS} accounts with one webhook each, dispatcher concurrency ${CONCURRENCY}; ${new Date().toISOString()}`,
    `baseline  receiver hit directly (autocannon, ${CONCURRENCY} connections): ${direct.requests.average.toFixed(0)} req/s`,
    `measured  backlog of ${EVENTS} events (emitted at ${(EVENTS / emitSeconds).toFixed(0)}/s) drained: ${throughput.toFixed(0)} deliveries/s (${drained.size} delivered in ${drainSeconds.toFixed(2)} s); target ≥ 2000`,
    `ratio     deliveries/s ÷ direct req/s: ${ratio.toFixed(2)}`,
    `latency   ${total} events at ${emitRate.toFixed(0)}/s: commit→receipt p50 ${p50} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms (${latencies.length}/${total} received); target p50 < 50 ms`,
    '',
  ].join('\n'),
);

record({
  figure: `backlog of ${EVENTS.toLocaleString('en')} events drained`,
  value: throughput,
  unit: 'deliveries/s',
  baseline: { name: 'the receiver hit directly', value: direct.requests.average },
  target: '≥ 2,000/s',
  met: throughput >= 2000 && drained.size === EVENTS,
  note: `${drained.size}/${EVENTS} delivered`,
});
const latencyRow = {
  unit: 'ms',
  note: `${total} events at ${emitRate.toFixed(0)}/s; ${latencies.length}/${total} received`,
};
record({
  figure: `commit→receipt p50 at ${RATE} events/s`,
  value: p50,
  ...latencyRow,
  target: '< 50 ms',
  met: p50 < 50 && latencies.length === total,
});
record({ figure: `commit→receipt p99 at ${RATE} events/s`, value: p99, ...latencyRow });

await stopServer(server);
receiver.proc.kill();
await db.close();
await database.drop();
