// Benchmark: auto-assignment of new conversations across two server processes on one PostgreSQL.
//   npm run bench:assignment     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Meta (this process) posts BENCH_CONVERSATIONS first messages from as many new customers, one
// signed entry a request, BENCH_CONCURRENCY in flight, alternately to the two servers. Each round
// times them twice, on accounts of their own: one whose default team gives every new conversation
// to one of MEMBERS members round robin under a capacity (teams/assign.ts: the team's queue, given
// out by the drains of both servers), timed until the last seat is given; and the baseline, the same
// messages to an account without teams, timed until the last answer. After each teams round it
// checks, in the database, what the issue asks: no member over capacity, exactly capacity × members
// given, each once (one conversation.assigned each), the rest waiting in the queue.
import { createHmac, randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgres } from '../src/kernel/database/db.ts';
import { migrate } from '../src/kernel/database/migrate.ts';
import { type FakeBusiness, FakeWhatsAppCloud } from '../test/fakes/whatsapp-cloud.ts';
import { record } from './report.ts';
import {
  answerOf,
  BenchFailure,
  benchDatabase,
  median,
  phase,
  sleep,
  startServer,
  stopServer,
} from './support.ts';

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const MEMBERS = 10;
/** Fewer seats than conversations: the rest must wait in the queue, none given past capacity. */
const CAPACITY = Math.floor((CONVERSATIONS * 0.8) / MEMBERS);
const TOKEN = randomBytes(24).toString('hex');
const SECRETS_KEY = randomBytes(32).toString('base64');
const APP_SECRET = randomBytes(16).toString('hex');

const fake = await FakeWhatsAppCloud.start();
const database = await benchDatabase();
const setup = await openPostgres(database.url, 2);
await migrate(setup);
await setup.close();
const ports = [0, 1].map(() => 40_000 + Math.floor(Math.random() * 10_000));
const servers = [];
for (const [i, port] of ports.entries()) {
  servers.push(
    await startServer(
      {
        DATABASE_URL: database.url,
        PORT: String(port),
        BOOTSTRAP_TOKEN: TOKEN,
        SECRETS_KEY,
        TIDINGS_WHATSAPP_GRAPH_URL: fake.graphUrl,
        TIDINGS_DB_POOL_SIZE: '10',
      },
      { label: `server ${i + 1}` },
    ),
  );
}
const bases = ports.map((p) => `http://127.0.0.1:${p}`);

async function api(path: string, method: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${bases[0]}/api/v1/public${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new BenchFailure(`${method} ${path}: ${answerOf(res.status, await res.text())}`);
  return (await res.json()) as Record<string, string>;
}

const sql = new pg.Client({ connectionString: database.url });
await sql.connect();

phase('setup');
const { apiKey: partnerKey } = await api('/partner/bootstrap', 'POST', { authorization: `Bearer ${TOKEN}` });
const partner = { 'x-api-key': partnerKey };
let accountsMade = 0;

/** An account on a number of the fake Meta; with `teams`, MEMBERS members in a default team. */
async function account(teams: boolean) {
  const { accountId } = await api('/partner/accounts', 'POST', partner, {
    accountName: `bench ${accountsMade++}`,
    countryCode: 'US',
    planCode: 'scale',
  });
  const { apiKey } = await api(`/partner/accounts/${accountId}/keys`, 'POST', partner, { name: 'bench' });
  const key = { 'x-api-key': apiKey };
  const business = fake.createBusiness({ appSecret: APP_SECRET });
  await api('/account/channel', 'PUT', key, {
    provider: 'whatsapp_cloud',
    whatsapp: FakeWhatsAppCloud.channelSettings(business),
  });
  if (teams) {
    const members: string[] = [];
    for (let m = 0; m < MEMBERS; m++) {
      const member = await api('/team/members', 'POST', key, {
        name: `Agent ${m}`,
        email: `agent${m}@example.com`,
        role: 'agent',
      });
      members.push(member.id);
    }
    await api('/teams', 'POST', key, {
      name: 'Support',
      members,
      assignment: { mode: 'round_robin', capacity: CAPACITY },
      default: true,
    });
  }
  return { accountId, business };
}

let customers = 0;
/** One customer's first message, signed as Meta signs it. */
function firstMessage(business: FakeBusiness) {
  const n = customers++;
  const from = `+1415${String(2_000_000 + n).padStart(7, '0')}`;
  const body = JSON.stringify(fake.inboundPayload(business, { from, text: 'Hello, I need help' }));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
    },
  };
}

/**
 * Posts the account's CONVERSATIONS first messages, half to each server; answers the seconds until
 * the last answer, and with `seats`, until that many of its conversations have a member.
 */
async function openConversations(
  target: { accountId: string; business: FakeBusiness },
  seats = 0,
): Promise<number> {
  const requests = Array.from({ length: CONVERSATIONS }, () => firstMessage(target.business));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < requests.length; i = next++) {
        const { body, headers } = requests[i]!;
        const url = `${bases[i % 2]}/api/v1/callbacks/whatsapp/${target.accountId}`;
        const res = await fetch(url, { method: 'POST', headers, body });
        const text = await res.text();
        if (res.status !== 200 || JSON.parse(text).applied !== 1)
          throw new BenchFailure(`callback to server ${(i % 2) + 1}: ${answerOf(res.status, text)}`);
      }
    }),
  );
  while (seats > 0 && (await given(target.accountId)) < seats) {
    if (performance.now() - started > 60_000) throw new BenchFailure(`fewer than ${seats} given after 60 s`);
    await sleep(5);
  }
  return (performance.now() - started) / 1000;
}

async function given(accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM conversations WHERE account_id = $1 AND status = 'open' AND assignee_id IS NOT NULL`,
    [accountId],
  );
  return rows[0]!.n;
}

/** What the issue asks of the team's account, read from the database; throws on any breach. */
async function checkAssignments(accountId: string): Promise<void> {
  const { rows: load } = await sql.query<{ assignee_id: string; n: number }>(
    `SELECT assignee_id, count(*)::int AS n FROM conversations
      WHERE account_id = $1 AND status = 'open' AND assignee_id IS NOT NULL GROUP BY assignee_id`,
    [accountId],
  );
  const over = load.filter((r) => r.n > CAPACITY);
  if (over.length > 0) throw new BenchFailure(`members over capacity ${CAPACITY}: ${JSON.stringify(over)}`);
  const given = load.reduce((sum, r) => sum + r.n, 0);
  if (given !== CAPACITY * MEMBERS)
    throw new BenchFailure(
      `${given} conversations given, expected ${CAPACITY * MEMBERS} (capacity × members)`,
    );
  const { rows: events } = await sql.query<{ conversation: string; n: number; given: number }>(
    `SELECT payload::jsonb #>> '{data,id}' AS conversation, count(*)::int AS n,
            count(*) FILTER (WHERE payload::jsonb #>> '{data,assigneeId}' IS NOT NULL)::int AS given
       FROM events WHERE account_id = $1 AND type = 'conversation.assigned' GROUP BY 1`,
    [accountId],
  );
  const twice = events.filter((e) => e.n !== 1 || e.given !== 1);
  if (events.length !== CAPACITY * MEMBERS || twice.length > 0)
    throw new BenchFailure(
      `${events.length} conversations given, expected ${CAPACITY * MEMBERS}; not given exactly once: ${JSON.stringify(twice.slice(0, 5))}`,
    );
}

phase('warm-up');
await openConversations(await account(true), CAPACITY * MEMBERS);
await openConversations(await account(false));

const timed = { teams: [] as number[], baseline: [] as number[] };
for (let round = 1; round <= ROUNDS; round++) {
  phase(`round ${round}`);
  const withTeams = await account(true);
  const without = await account(false);
  timed.teams.push(await openConversations(withTeams, CAPACITY * MEMBERS));
  await checkAssignments(withTeams.accountId);
  timed.baseline.push(await openConversations(without));
  console.log(
    `round ${round}: ${CONVERSATIONS} new conversations auto-assigned in ${timed.teams.at(-1)!.toFixed(2)} s ` +
      `(without teams ${timed.baseline.at(-1)!.toFixed(2)} s); no member over ${CAPACITY}, each given once`,
  );
}
const teams = median(timed.teams);
const baseline = median(timed.baseline);
console.log(
  `auto-assignment across two processes: ${CONVERSATIONS} in ${teams.toFixed(2)} s (${(CONVERSATIONS / teams).toFixed(0)}/s), ` +
    `without teams ${baseline.toFixed(2)} s: ${(baseline / teams).toFixed(2)}× the rate (target: 1,000 in ≤ 1 s)`,
);
record({
  figure: `${CONVERSATIONS} new conversations auto-assigned across two processes (round robin under capacity)`,
  value: CONVERSATIONS / teams,
  unit: 'conversations/s',
  baseline: { name: 'the same first messages to an account without teams', value: CONVERSATIONS / baseline },
  target: `${CONVERSATIONS} in ≤ 1 s, nobody over capacity, none given twice`,
  met: teams <= (CONVERSATIONS / 1000) * 1,
  note: `${MEMBERS} members, capacity ${CAPACITY}, ${CONCURRENCY} requests in flight, median of ${ROUNDS} rounds`,
});

await sql.end();
for (const server of servers) await stopServer(server);
await fake.close();
await database.drop();
