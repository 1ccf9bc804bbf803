// Benchmark: every list and filter of contacts, messages and conversations on PostgreSQL, with
// BENCH_LISTS_ROWS (5,000,000) rows in each table, BENCH_LISTS_ACCOUNT_ROWS (1,000,000) of them in
// the measured account and the BENCH_LISTS_NEWEST (200,000) newest in a busy neighbour's
// (lists-load.ts loads them through SQL). A tenant's list must not depend on what the others hold.
//   npm run bench:lists      (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Each filter: BENCH_LISTS_REQUESTS sequential GETs through HTTP (first pages with varying values or
// cursors, each followed by the page after it), p50 and p99 of each kind, and the indexes the
// database used for the route's statements (the repository functions the routes call, run here
// against a wrapper that also EXPLAINs each statement). Target: p99 < 20 ms.
// BENCH_LISTS_KEEP=1 keeps the database (its URL is printed) for EXPLAIN by hand.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { QueryResult, Sql } from '../src/kernel/database/db.ts';
import { readPage } from '../src/kernel/http/pagination.ts';
import { normalizePhone } from '../src/kernel/values/phones.ts';
import { type ContactListParams, contactFilters } from '../src/modules/contacts/filters.ts';
import { listContacts } from '../src/modules/contacts/repo.ts';
import {
  listConversationMessages,
  listConversations,
  readActivityCursor,
} from '../src/modules/conversations/repo.ts';
import { listMessages, type MessageFilters } from '../src/modules/messages/repo.ts';
import { HOT_CONVERSATIONS, type Layout, load, PHONE_SPREAD, phoneOf } from './lists-load.ts';
import { record } from './report.ts';
import { benchDatabase, percentile, sleep, startServer, stopServer } from './support.ts';

const ROWS = Number(process.env.BENCH_LISTS_ROWS ?? 5_000_000);
const ACCOUNT_ROWS = Number(process.env.BENCH_LISTS_ACCOUNT_ROWS ?? 1_000_000);
const NEWEST = Number(process.env.BENCH_LISTS_NEWEST ?? 200_000);
// 600: a p99 over 300 first pages and as many next ones, not over a handful of the slowest.
const REQUESTS = Number(process.env.BENCH_LISTS_REQUESTS ?? 600);
const TOKEN = randomBytes(24).toString('hex');
// The scale plan answers 500 requests a second per account: one every 2.5 ms stays under it.
const PACE_MS = 2.5;
const log = (line: string) => process.stdout.write(`${line}\n`);
const began = performance.now();

// --- setup: a fresh database, a server (which migrates it), a partner and the accounts ---
const database = await benchDatabase();
const port = 40_000 + Math.floor(Math.random() * 10_000);
const server = await startServer(
  {
    DATABASE_URL: database.url,
    PORT: String(port),
    BOOTSTRAP_TOKEN: TOKEN,
    SECRETS_KEY: randomBytes(32).toString('base64'),
  },
  { label: 'server' },
);
const base = `http://127.0.0.1:${port}/api/v1/public`;
async function post(path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}
const { apiKey: partnerKey } = await post('/partner/bootstrap', { authorization: `Bearer ${TOKEN}` });
async function account(name: string): Promise<{ id: string; key: string }> {
  const partner = { 'x-api-key': partnerKey! };
  const { accountId } = await post('/partner/accounts', partner, {
    accountName: name,
    countryCode: 'US',
    planCode: 'scale',
  });
  const { apiKey } = await post(`/partner/accounts/${accountId}/keys`, partner, {
    name: 'bench',
    scope: 'live',
  });
  return { id: accountId!, key: apiKey! };
}
const measured = await account('measured');
const neighbour = await account('busy neighbour');
const others: string[] = [];
for (let i = 0; i < 18; i++) others.push((await account(`other ${i}`)).id);

const client = new pg.Client({ connectionString: database.url });
await client.connect();
const layout: Layout = {
  rows: ROWS,
  accountRows: ACCOUNT_ROWS,
  newest: NEWEST,
  days: 30,
  measured: measured.id,
  neighbour: neighbour.id,
  others,
};
log(
  `Loading ${ROWS.toLocaleString('en')} rows into each of contacts, messages and conversations ` +
    `(${ACCOUNT_ROWS.toLocaleString('en')} in the measured account, the ${NEWEST.toLocaleString('en')} newest a neighbour's):`,
);
const loadStarted = performance.now();
await load(client, layout, log);
const loadSeconds = (performance.now() - loadStarted) / 1000;
log(`  load in all: ${loadSeconds.toFixed(0)} s`);

// --- values and cursors to vary the requests with ---
const random = (n: number) => Math.floor(Math.random() * n);
async function ids(prefix: string, count: number, within = ACCOUNT_ROWS): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT bench_id($1, bench_g(floor(random() * $2)::bigint)) AS id FROM generate_series(1, $3)`,
    [prefix, within, count],
  );
  return rows.map((r) => r.id);
}
const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');
const contactIds = await ids('ctc', REQUESTS);
const messageIds = await ids('msg', REQUESTS);
const hotConversations = await ids('cnv', REQUESTS, Math.min(HOT_CONVERSATIONS, ACCOUNT_ROWS));
const { rows: activity } = await client.query<{ cursor: string }>(
  `SELECT encode(convert_to((extract(epoch FROM last_message_at) * 1000)::bigint || '|' || id, 'UTF8'), 'base64') AS cursor
     FROM conversations WHERE account_id = $1 AND id = ANY($2)`,
  [measured.id, await ids('cnv', REQUESTS)],
);
const activityCursors = activity.map((r) =>
  r.cursor.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
);
const { rows: newestRow } = await client.query<{ at: Date }>(
  'SELECT max(created_at) AS at FROM messages WHERE account_id = $1',
  [measured.id],
);
const newest = newestRow[0]!.at.getTime();
const hoursBefore = (h: number) => new Date(newest - h * 3_600_000).toISOString();
const names = ['john', 'mary', 'sofia', 'example.com'];

// --- the cases: each a resource's route, its query for request i, and the route's own call ---
type Query = Record<string, string>;
interface Case {
  name: string;
  path: string | ((i: number) => string);
  query: (i: number) => Query;
  /** The repository call the route makes for this query. */
  call: (sql: Sql, query: Query) => Promise<unknown>;
}
const contacts = (name: string, query: (i: number) => Query): Case => ({
  name: `GET /contacts${name}`,
  path: '/contacts',
  query,
  call: (sql, q) => listContacts(sql, measured.id, readPage(pageOf(q)), contactFilters(asParams(q), 'US')),
});
const messages = (name: string, query: (i: number) => Query): Case => ({
  name: `GET /messages${name}`,
  path: '/messages',
  query,
  call: (sql, q) => {
    const filters: MessageFilters = {
      phone: q.to === undefined ? undefined : (normalizePhone(q.to, 'US') ?? undefined),
      status: q.status as MessageFilters['status'],
      direction: q.direction as MessageFilters['direction'],
      createdAfter: q.createdAfter ? new Date(q.createdAfter) : undefined,
      createdBefore: q.createdBefore ? new Date(q.createdBefore) : undefined,
    };
    return listMessages(sql, measured.id, readPage(pageOf(q)), filters);
  },
});
const conversations = (name: string, query: (i: number) => Query): Case => ({
  name: `GET /conversations${name}`,
  path: '/conversations',
  query,
  call: (sql, q) =>
    listConversations(
      sql,
      measured.id,
      readActivityCursor({ ...pageOf(q), order: q.order as 'activity' | 'sla_due' | undefined }),
      {
        status: q.status as 'open' | 'closed' | undefined,
        assigneeId: q.assigneeId,
        unassigned: q.unassigned === undefined ? undefined : q.unassigned === 'true',
        teamId: q.teamId,
        contactId: q.contactId,
        label: q.label,
        snoozed: q.snoozed === undefined ? undefined : q.snoozed === 'true',
      },
      new Date(),
    ),
});
/** The query as the route's schema hands it over (tags a list, booleans read). */
const asParams = (q: Query): ContactListParams => {
  const flag = (v: string | undefined) => (v === undefined ? undefined : v === 'true');
  return {
    ...q,
    tag: q.tag ? [q.tag] : undefined,
    optedIn: flag(q.optedIn),
    marketingOptOut: flag(q.marketingOptOut),
  };
};
const pageOf = (q: Query) => ({ limit: q.limit ? Number(q.limit) : undefined, cursor: q.cursor });
/** Half the first pages start at a random point of the account's history. */
const anywhere = (cursors: string[], i: number): Query =>
  i % 4 === 0 ? {} : { cursor: cursors[i % cursors.length]! };

const cases: Case[] = [
  contacts('', (i) => anywhere(contactIds.map(cursorOf), i)),
  contacts('?q= (common name)', (i) => ({ q: names[i % names.length]! })),
  contacts('?q= (one contact)', () => ({ q: `user${random(ACCOUNT_ROWS)}@` })),
  contacts('?phone=', () => ({ phone: phoneOf(random(ACCOUNT_ROWS)) })),
  contacts('?tag= (a third)', (i) => ({ tag: 'many', ...anywhere(contactIds.map(cursorOf), i) })),
  contacts('?tag= (50 in the account)', () => ({ tag: 'few' })),
  contacts('?optedIn=true', (i) => ({ optedIn: 'true', ...anywhere(contactIds.map(cursorOf), i) })),
  contacts('?marketingOptOut=true (2 %)', (i) => ({
    marketingOptOut: 'true',
    ...anywhere(contactIds.map(cursorOf), i),
  })),
  contacts('?createdAfter= (a day)', (i) => ({ createdAfter: hoursBefore(24 + (i % 24)) })),
  contacts('?updatedAfter= (a day)', (i) => ({ updatedAfter: hoursBefore(24 + (i % 24)) })),
  contacts('?attributes[plan]= (a quarter)', (i) => ({ 'attributes[plan]': `tier${i % 4}` })),
  contacts('?attributes[plan]= (50 in the account)', () => ({ 'attributes[plan]': 'platinum' })),
  messages('', (i) => anywhere(messageIds.map(cursorOf), i)),
  messages('?to=', () => ({ to: phoneOf(random(Math.min(PHONE_SPREAD, ACCOUNT_ROWS))) })),
  messages('?status=failed (2 %)', (i) => ({ status: 'failed', ...anywhere(messageIds.map(cursorOf), i) })),
  messages('?status=delivered', (i) => ({ status: 'delivered', ...anywhere(messageIds.map(cursorOf), i) })),
  messages('?direction=inbound', (i) => ({ direction: 'inbound', ...anywhere(messageIds.map(cursorOf), i) })),
  messages('?createdAfter= (a day)', (i) => ({ createdAfter: hoursBefore(24 + (i % 24)) })),
  messages('?createdBefore= (a day ago)', (i) => ({ createdBefore: hoursBefore(24 + (i % 24)) })),
  conversations('', (i) => anywhere(activityCursors, i)),
  conversations('?status=open', (i) => ({ status: 'open', ...anywhere(activityCursors, i) })),
  conversations('?unassigned=true', (i) => ({ unassigned: 'true', ...anywhere(activityCursors, i) })),
  conversations('?assigneeId= (a tenth)', (i) => ({ assigneeId: `usr_member${i % 7}` })),
  conversations('?assigneeId= (100 in the account)', () => ({ assigneeId: 'usr_rare' })),
  conversations('?contactId=', () => ({ contactId: contactIds[random(contactIds.length)]! })),
  // The inbox's lists (issue 47): mine, a team's queue, by label (common and rare), the snoozed, SLA due first.
  conversations('?status=open&assigneeId= (mine)', (i) => ({
    status: 'open',
    assigneeId: `usr_member${i % 7}`,
    ...anywhere(activityCursors, i),
  })),
  conversations("?status=open&teamId=&unassigned=true (a team's queue)", (i) => ({
    status: 'open',
    teamId: `tem_bench${i % 3}`,
    unassigned: 'true',
  })),
  conversations('?status=open&label=refund (a twentieth)', () => ({ status: 'open', label: 'refund' })),
  conversations('?status=open&label=vip (one in 2,000)', () => ({ status: 'open', label: 'vip' })),
  conversations('?snoozed=true', () => ({ snoozed: 'true' })),
  conversations('?status=open&order=sla_due (SLA due first)', () => ({ status: 'open', order: 'sla_due' })),
  {
    name: 'GET /conversations/{id}/messages',
    path: (i) => `/conversations/${hotConversations[i % hotConversations.length]}/messages`,
    query: () => ({ limit: '10' }),
    call: (sql, q) => listConversationMessages(sql, measured.id, hotConversations[0]!, readPage(pageOf(q))),
  },
];

/** The scans of each statement the route's repository call ran, as EXPLAIN shows them. */
async function plan(c: Case, query: Query): Promise<string> {
  const statements: string[] = [];
  const explaining: Sql = {
    async query<T>(text: string, params?: unknown[]): Promise<QueryResult<T>> {
      const { rows } = await client.query<Record<string, string>>(`EXPLAIN ${text}`, params);
      const scans = rows
        .map((r) => Object.values(r)[0]!)
        .map((line) =>
          /((?:Parallel )?(?:Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)?) (?:using|on) (\w+)/.exec(
            line,
          ),
        )
        .filter((m) => m !== null)
        .map((m) => `${m[1]} ${m[2]}`);
      statements.push(scans.join(' + '));
      const result = await client.query(text, params);
      return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
    },
    exec: async (text) => ({ rows: (await client.query(text)).rows }),
  };
  await c.call(explaining, query);
  return statements.join(' → ');
}

let lastStart = 0;
async function get(
  path: string,
  query: Query,
): Promise<{ ms: number; body: { data: unknown[]; nextCursor: string | null } }> {
  const wait = lastStart + PACE_MS - performance.now();
  if (wait > 0) await sleep(wait);
  lastStart = performance.now();
  const url = `${base}${path}?${new URLSearchParams(query)}`;
  const t = performance.now();
  const res = await fetch(url, { headers: { 'x-api-key': measured.key } });
  const text = await res.text();
  const ms = performance.now() - t;
  // A benchmark measures the service, not its rate limiter: any other answer fails the run.
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text}`);
  return { ms, body: JSON.parse(text) };
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const results: {
  name: string;
  first: number[];
  next: number[];
  rows: number;
  plan: string;
  nextPlan: string;
}[] = [];
const measuring = performance.now();
for (const c of cases) {
  const pathOf = (i: number) => (typeof c.path === 'string' ? c.path : c.path(i));
  // Warm-up (the route's first compilation, the index's pages), not measured.
  for (let i = 0; i < 10; i++) await get(pathOf(i), c.query(i));
  const first: number[] = [];
  const next: number[] = [];
  let rows = 0;
  for (let i = 0; first.length + next.length < REQUESTS; i++) {
    const query = c.query(i);
    const page = await get(pathOf(i), query);
    first.push(page.ms);
    rows += page.body.data.length;
    if (page.body.nextCursor)
      next.push((await get(pathOf(i), { ...query, cursor: page.body.nextCursor })).ms);
  }
  const query0 = c.query(0);
  const page0 = await get(pathOf(0), query0);
  const planned = await plan(c, query0);
  const nextPlan = page0.body.nextCursor ? await plan(c, { ...query0, cursor: page0.body.nextCursor }) : '';
  results.push({ name: c.name, first, next, rows: rows / first.length, plan: planned, nextPlan });
  const s = [...first].sort((a, b) => a - b);
  const n = [...next].sort((a, b) => a - b);
  log(
    `${c.name.padEnd(50)} first p50 ${ms(percentile(s, 0.5))} p99 ${ms(percentile(s, 0.99))}` +
      (n.length
        ? ` | next p50 ${ms(percentile(n, 0.5))} p99 ${ms(percentile(n, 0.99))}`
        : ' | no next page') +
      ` | ${(rows / first.length).toFixed(1)} rows | ${planned}${nextPlan && nextPlan !== planned ? ` ; next: ${nextPlan}` : ''}`,
  );
}
const measuredSeconds = (performance.now() - measuring) / 1000;

// --- the table, and the rows of `npm run bench` ---
log(
  `\nLists at ${ROWS.toLocaleString('en')} rows a table, ${ACCOUNT_ROWS.toLocaleString('en')} in the account, ` +
    `the ${NEWEST.toLocaleString('en')} newest a neighbour's; ${REQUESTS} requests a filter (first pages and the pages after them)`,
);
log(
  '| list | first page p50 | p99 | next page p50 | p99 | rows | indexes used (first page; next page if other) |',
);
log('|---|---|---|---|---|---|---|');
let failures = 0;
for (const r of results) {
  const s = [...r.first].sort((a, b) => a - b);
  const n = [...r.next].sort((a, b) => a - b);
  const p99 = Math.max(percentile(s, 0.99), n.length ? percentile(n, 0.99) : 0);
  if (p99 >= 20) failures++;
  log(
    `| ${r.name} | ${ms(percentile(s, 0.5))} | ${ms(percentile(s, 0.99))} | ${n.length ? ms(percentile(n, 0.5)) : '—'} | ` +
      `${n.length ? ms(percentile(n, 0.99)) : '—'} | ${r.rows.toFixed(1)} | ${r.plan}${r.nextPlan && r.nextPlan !== r.plan ? `; next: ${r.nextPlan}` : ''} |`,
  );
  record({
    figure: `${r.name} p99 (first and next pages)`,
    value: p99,
    unit: 'ms',
    target: '< 20 ms',
    met: p99 < 20,
    note: `p50 ${ms(percentile(s, 0.5))}; ${r.plan}`,
  });
}
log(
  `\nload ${loadSeconds.toFixed(0)} s, measuring ${measuredSeconds.toFixed(0)} s, ` +
    `${((performance.now() - began) / 1000).toFixed(0)} s in all; ${failures} of ${results.length} lists over the target`,
);

await stopServer(server);
await client.end();
if (process.env.BENCH_LISTS_KEEP) log(`kept: ${database.url}`);
else await database.drop();
