// Benchmark: WhatsApp callbacks on PostgreSQL, the app-level URL of a partner's Meta app beside
// the per-account URL, in the same run. The Tidings server runs in its own process; this process
// plays Meta (a fake Graph API to configure the numbers, and the signed callbacks).
//   npm run bench:callbacks     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
// Each request carries BENCH_ENTRIES entries, each a customer's text to one of ACCOUNTS numbers:
//   per-account: POST /api/v1/callbacks/whatsapp/{accountId}, all its entries for that account;
//   app-level:   POST /api/v1/callbacks/whatsapp, its entries for numbers of different accounts,
//                the partner found by the signature and each entry routed by its phone number id;
//   phone-less:  the per-account URL, each text from a customer with a username who withholds their
//                number (their user id and username only), beside the first's customers, who come
//                with their number and user id as Meta sends every message since April 2026.
// The three run in turns (BENCH_ROUNDS each, BENCH_SECONDS long, closed loops of BENCH_CONCURRENCY),
// and the figure is the median; every answer must say all its entries were stored.
import { createHmac, randomBytes } from 'node:crypto';
import { openPostgres } from '../src/kernel/database/db.ts';
import { migrate } from '../src/kernel/database/migrate.ts';
import { type FakeBusiness, FakeWhatsAppCloud } from '../test/fakes/whatsapp-cloud.ts';
import { closedLoop, describe, expectNoFailures } from './load.ts';
import { record } from './report.ts';
import { answerOf, BenchFailure, benchDatabase, phase, startServer, stopServer } from './support.ts';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ACCOUNTS = 20;
/** Customers per account: their first message makes a contact, the others continue a conversation. */
const CUSTOMERS = 50;
const TOKEN = randomBytes(24).toString('hex');
const SECRETS_KEY = randomBytes(32).toString('base64');
const APP_SECRET = randomBytes(16).toString('hex');

const fake = await FakeWhatsAppCloud.start();
const database = await benchDatabase();
const db = await openPostgres(database.url, 2);
await migrate(db);
await db.close();
const port = 40_000 + Math.floor(Math.random() * 10_000);
const base = `http://127.0.0.1:${port}`;
const server = await startServer(
  {
    DATABASE_URL: database.url,
    PORT: String(port),
    BOOTSTRAP_TOKEN: TOKEN,
    SECRETS_KEY,
    TIDINGS_WHATSAPP_GRAPH_URL: fake.graphUrl,
    TIDINGS_DB_POOL_SIZE: '10',
  },
  { label: 'server' },
);

async function api(path: string, method: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}/api/v1/public${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new BenchFailure(`${method} ${path}: ${answerOf(res.status, await res.text())}`);
  return (await res.json()) as Record<string, string>;
}

// --- setup: a partner with its Meta app, and its accounts on numbers of that app ---
const { apiKey: partnerKey } = await api('/partner/bootstrap', 'POST', { authorization: `Bearer ${TOKEN}` });
const partner = { 'x-api-key': partnerKey };
await api('/partner/whatsapp-app', 'PUT', partner, {
  appId: '1234567890',
  appSecret: APP_SECRET,
  verifyToken: randomBytes(12).toString('hex'),
});
const accounts: { accountId: string; business: FakeBusiness }[] = [];
for (let i = 0; i < ACCOUNTS; i++) {
  const { accountId } = await api('/partner/accounts', 'POST', partner, {
    accountName: `bench ${i}`,
    countryCode: 'US',
    planCode: 'scale',
  });
  const { apiKey } = await api(`/partner/accounts/${accountId}/keys`, 'POST', partner, { name: 'bench' });
  const business = fake.createBusiness({ appSecret: APP_SECRET });
  await api(
    '/account/channel',
    'PUT',
    { 'x-api-key': apiKey },
    {
      provider: 'whatsapp_cloud',
      whatsapp: FakeWhatsAppCloud.channelSettings(business),
    },
  );
  accounts.push({ accountId, business });
}

let sequence = 0;
/**
 * One entry: a customer's text to `business`, as Meta's `messages` webhook carries it: with the
 * customer's number and user id, or (`withheld`) with their user id and username alone.
 */
function entry(business: FakeBusiness, withheld = false) {
  const n = 1000 + (sequence % CUSTOMERS);
  sequence++;
  const userId = `US.${withheld ? 2 : 1}34912086553027${n}`;
  const sender = withheld
    ? { userId, username: `customer.${n}` }
    : { from: `+1415555${String(n).padStart(4, '0')}`, userId };
  return fake.inboundPayload(business, { ...sender, text: `message ${sequence}` }).entry[0]!;
}

function signed(entries: unknown[]) {
  const body = JSON.stringify({ object: 'whatsapp_business_account', entry: entries });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
    },
  };
}

async function post(path: string, entries: unknown[]): Promise<true | string> {
  const { body, headers } = signed(entries);
  const res = await fetch(`${base}/api/v1/callbacks${path}`, { method: 'POST', headers, body });
  const text = await res.text();
  if (res.status !== 200) return answerOf(res.status, text);
  const answer = JSON.parse(text) as { applied: number; dropped: number };
  return answer.applied === entries.length && answer.dropped === 0 ? true : `unexpected answer ${text}`;
}

const perAccount = (i: number) => {
  const { accountId, business } = accounts[i % ACCOUNTS]!;
  return post(
    `/whatsapp/${accountId}`,
    Array.from({ length: ENTRIES }, () => entry(business)),
  );
};
const phoneless = (i: number) => {
  const { accountId, business } = accounts[i % ACCOUNTS]!;
  return post(
    `/whatsapp/${accountId}`,
    Array.from({ length: ENTRIES }, () => entry(business, true)),
  );
};
const appLevel = (i: number) =>
  post(
    '/whatsapp',
    Array.from({ length: ENTRIES }, (_, k) => entry(accounts[(i * ENTRIES + k) % ACCOUNTS]!.business)),
  );

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rates = { account: [] as number[], app: [] as number[], phoneless: [] as number[] };
// Warm the paths (connections, plans, the first contacts) before measuring.
phase('warm-up');
expectNoFailures('warm-up, per-account callbacks', await closedLoop(CONCURRENCY, 2, perAccount));
expectNoFailures('warm-up, app-level callbacks', await closedLoop(CONCURRENCY, 2, appLevel));
expectNoFailures('warm-up, phone-less customers', await closedLoop(CONCURRENCY, 2, phoneless));
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, work] of [
    ['account', perAccount],
    ['app', appLevel],
    ['phoneless', phoneless],
  ] as const) {
    phase(`${name} round ${round}`);
    const r = await closedLoop(CONCURRENCY, SECONDS, work);
    expectNoFailures(`${name} round ${round}`, r);
    rates[name].push(r.perSecond * ENTRIES);
    console.log(
      `round ${round} ${name.padEnd(9)} ${describe(r)}; ${(r.perSecond * ENTRIES).toFixed(0)} entries/s`,
    );
  }
}
const account = median(rates.account);
const app = median(rates.app);
const withheld = median(rates.phoneless);
console.log(
  `per-account callback: ${account.toFixed(0)} entries/s; app-level callback: ${app.toFixed(0)} entries/s; ` +
    `customers without a number: ${withheld.toFixed(0)} entries/s (${(withheld / account).toFixed(2)}× per-account, target ≥ 0.9×)`,
);
record({
  figure: 'per-account WhatsApp callback, customer texts stored',
  value: account,
  unit: 'entries/s',
  note: `${ENTRIES} entries a request, ${CONCURRENCY} in flight, median of ${ROUNDS} rounds of ${SECONDS} s`,
});
record({
  figure: "app-level WhatsApp callback (partner's Meta app, routed by number)",
  value: app,
  unit: 'entries/s',
  baseline: { name: 'per-account callback', value: account },
  target: '≥ 0.8× per-account',
  met: app >= 0.8 * account,
});
record({
  figure: 'per-account WhatsApp callback, texts from customers without a phone number (user id only)',
  value: withheld,
  unit: 'entries/s',
  baseline: { name: 'per-account callback (customers with number and user id)', value: account },
  target: '≥ 0.9× per-account',
  met: withheld >= 0.9 * account,
});

await stopServer(server);
await fake.close();
await database.drop();
