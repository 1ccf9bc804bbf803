// Benchmark: bulk contact import and contact search on PostgreSQL, each beside the same work done
// as one plain SQL statement through `pg` in the same run. The server runs in its own process.
//   npm run bench:contacts      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Phases:
//   1. bulk: BENCH_BULK_RUNS jobs of 1,000 new contacts, each timed from the POST until its
//      `bulk_job.completed` webhook arrives here (what a client sees; polling every few ms would
//      load the 2 cores it measures); baseline: one INSERT … ON CONFLICT DO UPDATE of 1,000 new rows.
//   2. search: BENCH_SEARCH_CONTACTS contacts (100,000) in one account, then BENCH_SEARCHES
//      sequential GET /contacts?q=… with selective and common terms; baseline: the same SELECT.
//      The searches are paced to 80% of the Scale plan's per-second limit (a fast machine would
//      run past it), the floor's GET /account is another account's; any answer but a 200 fails.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { record } from './report.ts';
import {
  answerOf,
  BenchFailure,
  benchDatabase,
  Pacer,
  percentile,
  phase,
  startServer,
  stopServer,
} from './support.ts';

const BULK_RUNS = Number(process.env.BENCH_BULK_RUNS ?? 20);
const SEARCH_CONTACTS = Number(process.env.BENCH_SEARCH_CONTACTS ?? 100_000);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 1000);
const TOKEN = randomBytes(24).toString('hex');

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

// --- setup: a fresh database, a server, a partner and two accounts ---
const database = await benchDatabase();
const port = 40_000 + Math.floor(Math.random() * 10_000);
const server = await startServer(
  {
    DATABASE_URL: database.url,
    PORT: String(port),
    BOOTSTRAP_TOKEN: TOKEN,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    ...(process.env.TIDINGS_BULK_CHUNK_SIZE
      ? { TIDINGS_BULK_CHUNK_SIZE: process.env.TIDINGS_BULK_CHUNK_SIZE }
      : {}),
  },
  { label: 'server' },
);
const pool = new pg.Pool({ connectionString: database.url, max: 4 });

async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/public${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new BenchFailure(`${method} ${path}: ${answerOf(res.status, await res.text())}`);
  return (await res.json()) as Record<string, string>;
}

const { apiKey: partnerKey } = await api('POST', '/partner/bootstrap', { authorization: `Bearer ${TOKEN}` });
async function account(name: string): Promise<{ id: string; key: string }> {
  const created = await api(
    'POST',
    '/partner/accounts',
    { 'x-api-key': partnerKey },
    { accountName: name, countryCode: 'US', planCode: 'scale' },
  );
  const key = await api(
    'POST',
    `/partner/accounts/${created.accountId}/keys`,
    { 'x-api-key': partnerKey },
    {
      name: 'bench',
      scope: 'live',
    },
  );
  return { id: created.accountId, key: key.apiKey };
}
const importer = await account('bulk bench');

// The receiver of bulk_job.completed events, keyed by job id (an event may beat its POST's answer).
type Completion = { lagMs: number; data: { status: string; succeeded: number } };
const arrived = new Map<string, Completion>();
const waiting = new Map<string, (event: Completion) => void>();
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    res.writeHead(200).end();
    const event = JSON.parse(body);
    event.lagMs = Date.now() - Date.parse(event.createdAt);
    arrived.set(event.data.jobId, event);
    waiting.get(event.data.jobId)?.(event);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
await api(
  'POST',
  '/webhooks',
  { 'x-api-key': importer.key },
  {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    events: ['bulk_job.completed'],
  },
);
function completionOf(jobId: string): Promise<Completion> {
  const early = arrived.get(jobId);
  if (early) return Promise.resolve(early);
  return new Promise((resolve, reject) => {
    waiting.set(jobId, resolve);
    setTimeout(() => reject(new Error(`job ${jobId} not completed after 60 s`)), 60_000).unref();
  });
}
const searcher = await account('search bench');

let phoneCounter = 0;
function newContacts(n: number) {
  return Array.from({ length: n }, () => {
    const i = phoneCounter++;
    return {
      phone: `+1415${String(2_000_000 + i).padStart(7, '0')}`,
      name: `Bench ${i} ${randomBytes(3).toString('hex')}`,
      email: `bench${i}@example.com`,
      tags: ['bench', i % 2 ? 'odd' : 'even'],
      attributes: { batch: Math.floor(i / 1000), source: 'bench' },
    };
  });
}

// --- 1. bulk import vs one INSERT … ON CONFLICT ---
phase('bulk import');
const bulk: number[] = [];
const accepted: number[] = [];
const lags: number[] = [];
const plain: number[] = [];
for (let run = 0; run < BULK_RUNS; run++) {
  const body = { contacts: newContacts(1000) };
  const started = performance.now();
  const job = await api('POST', '/bulk/contacts', { 'x-api-key': importer.key }, body);
  accepted.push(performance.now() - started);
  const event = await completionOf(job.jobId!);
  lags.push(event.lagMs);
  if (event.data.status !== 'completed' || event.data.succeeded !== 1000) {
    throw new BenchFailure(`job ${job.jobId}: ${JSON.stringify(event.data)}`);
  }
  bulk.push(performance.now() - started);

  // The same work for the same kind of rows, as one statement: the floor the job is measured against.
  const rows = newContacts(1000);
  const t = performance.now();
  await pool.query(
    `INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, opted_in, created_at, updated_at)
     SELECT 'ctc_plain' || r.phone, $1, r.phone, r.name, r.email, r.tags, r.attributes, false, now(), now()
       FROM jsonb_to_recordset($2::jsonb) AS r (phone text, name text, email text, tags text[], attributes jsonb)
     ON CONFLICT (account_id, phone) DO UPDATE
        SET name = EXCLUDED.name, email = EXCLUDED.email, tags = EXCLUDED.tags,
            attributes = EXCLUDED.attributes, updated_at = EXCLUDED.updated_at`,
    [importer.id, JSON.stringify(rows)],
  );
  plain.push(performance.now() - t);
}
const b = summary(bulk);
const p = summary(plain);

// --- 2. search over SEARCH_CONTACTS contacts ---
phase('search: loading contacts');
await pool.query(
  `INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, created_at, updated_at)
   SELECT 'ctc_' || lpad(to_hex(g), 26, '0'), $1, '+1628' || lpad(g::text, 7, '0'),
          (ARRAY['John','Mary','Ana','Li','Omar','Sofia','Ken','Zoe'])[1 + g % 8] || ' ' || substr(md5(g::text), 1, 10),
          'user' || g || '@' || (ARRAY['example.com','mail.test','corp.example'])[1 + g % 3],
          ARRAY['t' || (g % 20)], jsonb_build_object('n', g % 100), now(), now()
     FROM generate_series(1, $2::int) g`,
  [searcher.id, SEARCH_CONTACTS],
);
// A freshly loaded table, as autovacuum leaves it a minute later: statistics, and the GIN pending
// lists merged into the indexes.
await pool.query('VACUUM ANALYZE contacts');
const terms: string[] = [];
for (let i = 0; i < SEARCHES; i++) {
  const g = 1 + Math.floor(Math.random() * SEARCH_CONTACTS);
  const pick = i % 5;
  // Mostly selective terms (a fragment of a name hash, an email, a phone), some common ones.
  if (pick === 0) terms.push(['john', 'mary', 'sofia', 'example.com'][i % 4]!);
  else if (pick === 1) terms.push(`user${g}@`);
  else if (pick === 2) terms.push(`628${String(g).padStart(7, '0').slice(0, 5)}`);
  else {
    const { rows } = await pool.query(`SELECT substr(md5($1::text), 2, 6) AS s`, [g]);
    terms.push(rows[0].s);
  }
}
// One pace per account: the searches' and the floor's.
const searchPace = new Pacer();
const floorPace = new Pacer();
/** One search, not paced (the caller paces it, outside what it times). */
async function search(q: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/public/contacts?q=${encodeURIComponent(q)}`, {
    headers: { 'x-api-key': searcher.key },
  });
  if (!res.ok) throw new BenchFailure(`GET /contacts?q=${q}: ${answerOf(res.status, await res.text())}`);
  await res.arrayBuffer();
}
// Warm-up (caches, JIT), not measured.
phase('search: warm-up');
for (const q of terms.slice(0, 100)) {
  await searchPace.next();
  await search(q);
}
phase('search');
const viaApi: number[] = [];
const viaSql: number[] = [];
const floor: number[] = [];
for (const q of terms) {
  // The floor of any API call here: an authenticated GET that reads one cached account row.
  await floorPace.next();
  const f = performance.now();
  const account = await fetch(`http://127.0.0.1:${port}/api/v1/public/account`, {
    headers: { 'x-api-key': importer.key },
  });
  if (!account.ok) throw new BenchFailure(`GET /account: ${answerOf(account.status, await account.text())}`);
  await account.arrayBuffer();
  floor.push(performance.now() - f);

  await searchPace.next();
  const t = performance.now();
  await search(q);
  viaApi.push(performance.now() - t);

  const s = performance.now();
  await pool.query(
    `SELECT * FROM contacts WHERE account_id = $1 AND search_text LIKE $2 ORDER BY id DESC LIMIT 21`,
    [searcher.id, `%${q.toLowerCase()}%`],
  );
  viaSql.push(performance.now() - s);
}
const a = summary(viaApi);
const fl = summary(floor);
const CLASSES = ['common name or domain', 'exact email', 'phone prefix', 'name hash', 'name hash'];
for (const [c, label] of [...new Set(CLASSES)].entries()) {
  const picked = viaApi.filter((_, i) => CLASSES[i % 5] === label);
  const plainPicked = viaSql.filter((_, i) => CLASSES[i % 5] === label);
  const s1 = summary(picked);
  const s2 = summary(plainPicked);
  console.log(
    `  ${c}. ${label.padEnd(22)} API p50 ${ms(s1.p50)} p99 ${ms(s1.p99)} | SQL p50 ${ms(s2.p50)} p99 ${ms(s2.p99)}`,
  );
}
const q = summary(viaSql);

console.log(`\nBulk import of 1,000 contacts (${BULK_RUNS} runs, PostgreSQL)`);
console.log(
  `  bulk job, POST → completed:     p50 ${ms(b.p50)}  mean ${ms(b.mean)}  max ${ms(Math.max(...bulk))}`,
);
console.log(`    of which the POST, until its 202:  p50 ${ms(summary(accepted).p50)}`);
console.log(`    and the event, until it arrives:  p50 ${ms(summary(lags).p50)}`);
console.log(`  one INSERT … ON CONFLICT (pg):  p50 ${ms(p.p50)}  mean ${ms(p.mean)}`);
// Each job and its baseline run back to back: the median of their ratios cancels the machine's drift.
const ratios = summary(bulk.map((t, i) => t / plain[i]!));
console.log(
  `  ratio: median of per-run ratios ${ratios.p50.toFixed(2)}×, of p50s ${(b.p50 / p.p50).toFixed(2)}×   (target ≤ 3×)`,
);
console.log(
  `\nGET /contacts?q= over ${SEARCH_CONTACTS.toLocaleString('en')} contacts (${SEARCHES} searches)`,
);
console.log(`  API (HTTP, auth, limits):  p50 ${ms(a.p50)}  p99 ${ms(a.p99)}   (target p99 < 20 ms)`);
console.log(`  plain SELECT (pg):         p50 ${ms(q.p50)}  p99 ${ms(q.p99)}`);
console.log(`  GET /account (the HTTP, auth and limits floor): p50 ${ms(fl.p50)}  p99 ${ms(fl.p99)}`);
console.log(`  ratio: p50 ${(a.p50 / q.p50).toFixed(2)}×, p99 ${(a.p99 / q.p99).toFixed(2)}×`);

record({
  figure: '1,000-contact bulk job, POST → completed, p50',
  value: b.p50,
  unit: 'ms',
  baseline: { name: 'one INSERT … ON CONFLICT of 1,000 rows (pg), p50', value: p.p50 },
  // Each job and its baseline run back to back: the median of their ratios is the reading.
  ratio: ratios.p50,
  target: '≤ 3×',
  met: ratios.p50 <= 3,
  note: `${BULK_RUNS} runs; ratio: median of per-run ratios`,
});
const over = `over ${SEARCH_CONTACTS.toLocaleString('en')} contacts`;
record({
  figure: `GET /contacts?q= p99 ${over}`,
  value: a.p99,
  unit: 'ms',
  baseline: { name: 'the same SELECT (pg), p99', value: q.p99 },
  target: '< 20 ms',
  met: a.p99 < 20,
  note: `${SEARCHES} sequential searches`,
});
record({
  figure: `GET /contacts?q= p50 ${over}`,
  value: a.p50,
  unit: 'ms',
  baseline: { name: 'the same SELECT (pg), p50', value: q.p50 },
});

receiver.close();
await stopServer(server);
await pool.end();
await database.drop();
