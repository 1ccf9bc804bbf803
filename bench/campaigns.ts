// Benchmark: broadcast campaigns on PostgreSQL (docs/history/issue-23.md). Three servers in turn,
// each its own `tidings serve` process with workers on its own bench database (so that no phase's
// dispatch backlog runs during the next); this process drives them over HTTP.
//   npm run bench:campaigns     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
//
// Phases 1 and 2 alternate over BENCH_ROUNDS rounds (3); the ratio is the median of the rounds' own.
// 1. The baseline, `POST /bulk/messages`: the same number of recipients as the campaign, in calls of
//    100 (an approved template to existing contacts), BENCH_CONCURRENCY calls at a time, spread over
//    BULK_ACCOUNTS sandbox accounts on the Scale plan so that no rate limit binds; every answer must
//    be 202 with its 100 messages accepted. Messages accepted per second, from the first call to the
//    last answer (the dispatch of what was accepted runs meanwhile, as it does during a campaign).
// 2. A campaign of BENCH_CAMPAIGN_SIZE (50,000) contacts with pacing off, on a fresh server: from
//    the start's answer to `completed` (every recipient's message accepted, each through the send
//    path: price, charge, window, dispatch job), its messages accepted per second while it sends
//    (from the start's answer: the start fixes the audience first) against the baseline's (target
//    ≥ 0.8×), and the time to complete from the start's request.
// 3. Peak RSS flat in the audience size: the same campaign of half the size on another fresh server
//    (a run long enough to reach its steady state); each server's peak RSS (VmHWM) read when its
//    campaign completed; the ratio of the large one's to the small one's (target ≤ 1.25×: the
//    audience is rows, not memory; twice the audience held in memory would show as about 2×).
// The servers run TIDINGS_CAMPAIGN_LANES = BENCH_CONCURRENCY sender lanes, the baseline's number of
// clients (the default is 4, for a pool of 10 connections shared with the API).
// Contacts are written straight into the database beforehand (their import is not what is measured).
import pg from 'pg';
import { newId } from '../src/kernel/values/ids.ts';
import { type Account, bootstrap, type Client, client, provision, SERVER_ENV } from './automation-common.ts';
import { record } from './report.ts';
import { benchDatabase, peakRssKib, sleep, startServer, stopServer } from './support.ts';

const SIZE = Number(process.env.BENCH_CAMPAIGN_SIZE ?? 50_000);
/** The smaller audience the peak RSS is compared with: long enough a run to reach its steady state. */
const SMALL = Math.round(SIZE / 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BULK_ACCOUNTS = 8;
/** Contacts per bulk account, sent to in turn. */
const BULK_CONTACTS = 5000;
const TEMPLATE = 'bench_news';
const TAG = 'bench-broadcast';

const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stderr.write(`${line}\n`);
};
const phoneOf = (i: number) => `+1415${3_000_000 + i}`;

const port = 40_000 + Math.floor(Math.random() * 10_000);
type Database = Awaited<ReturnType<typeof benchDatabase>> & { pool: pg.Pool };

/** Writes `count` contacts with the tag for the account, in batches (ids made as the API makes them). */
async function seedContacts(
  { pool }: Database,
  accountId: string,
  count: number,
  first: number,
): Promise<void> {
  for (let from = 0; from < count; from += 5000) {
    const n = Math.min(5000, count - from);
    const ids = Array.from({ length: n }, () => newId('contact'));
    const phones = Array.from({ length: n }, (_, i) => phoneOf(first + from + i));
    await pool.query(
      `INSERT INTO contacts (id, account_id, phone, name, tags, created_at, updated_at)
       SELECT c.id, $1, c.phone, 'Customer', ARRAY[$2], now(), now() FROM unnest($3::text[], $4::text[]) AS c (id, phone)`,
      [accountId, TAG, ids, phones],
    );
  }
}

/** A sandbox channel with no delays, and an approved MARKETING template (reviewed at once). */
async function prepare(c: Client, account: Account): Promise<void> {
  await c.ok('PUT', '/account/channel', account.key, {
    provider: 'sandbox',
    sandbox: { deliveredAfterMs: 0, readAfterMs: null, reviewAfterMs: 0 },
  });
  const made = await c.ok('POST', '/templates', account.key, {
    name: TEMPLATE,
    language: 'en_US',
    category: 'MARKETING',
    components: [{ type: 'BODY', text: 'News for {{1}} this week.', example: { body_text: [['Ann']] } }],
  });
  await c.ok('POST', `/templates/${made.id}/submit`, account.key);
  for (let i = 0; ; i++) {
    if ((await c.ok('GET', `/templates/${made.id}`, account.key)).status === 'APPROVED') return;
    if (i > 100) throw new Error('the bench template was not approved');
    await sleep(100);
  }
}

/** A fresh bench database and a server with workers on it; both gone afterwards. */
async function withServer<T>(
  label: string,
  work: (c: Client, pid: number, database: Database) => Promise<T>,
): Promise<T> {
  const made = await benchDatabase();
  const database = { ...made, pool: new pg.Pool({ connectionString: made.url, max: 2 }) };
  try {
    const server = await startServer(
      {
        ...SERVER_ENV,
        DATABASE_URL: database.url,
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        TIDINGS_RUN_WORKERS: 'true',
        // As many sender lanes as the baseline has clients: the same concurrency on both sides.
        TIDINGS_CAMPAIGN_LANES: String(CONCURRENCY),
        // Settings to try (TIDINGS_CAMPAIGN_LANES, …) pass through.
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('TIDINGS_'))),
      },
      { label },
    );
    const c = client(port);
    try {
      return await work(c, server.pid!, database);
    } finally {
      await c.http.close();
      await stopServer(server);
    }
  } finally {
    await database.pool.end();
    await database.drop();
  }
}

/** Starts a campaign of the account's tag (pacing off) and waits for `completed`; answers its seconds and peak RSS. */
async function campaign(c: Client, pid: number, account: Account, size: number) {
  const made = await c.ok('POST', '/campaigns', account.key, {
    name: `bench ${size}`,
    message: { templateName: TEMPLATE, templateLanguage: 'en_US', parameters: ['{{ contact.name }}'] },
    audience: { tag: TAG },
  });
  const began = performance.now();
  const started = await c.ok('POST', `/campaigns/${made.id}/start`, account.key);
  if (started.counters.total !== size)
    throw new Error(`the audience is ${started.counters.total}, not ${size}`);
  const fixed = performance.now();
  for (;;) {
    const now = await c.ok('GET', `/campaigns/${made.id}`, account.key);
    if (now.status === 'completed') {
      const seconds = (performance.now() - began) / 1000;
      const { counters } = now;
      const settled = counters.total - counters.skipped - counters.failed;
      if (counters.total !== size || counters.failed !== 0 || counters.skipped !== 0 || settled !== size)
        throw new Error(`campaign ended with ${JSON.stringify(counters)}`);
      return {
        seconds,
        startSeconds: (fixed - began) / 1000,
        sendingSeconds: (performance.now() - fixed) / 1000,
        rssKib: peakRssKib(pid),
      };
    }
    if (now.status !== 'running') throw new Error(`campaign is ${now.status}: ${JSON.stringify(now)}`);
    if (performance.now() - began > 600_000) throw new Error('the campaign did not complete in 10 minutes');
    await sleep(100);
  }
}

/** The baseline: SIZE recipients through POST /bulk/messages on a fresh server. */
function bulkSends() {
  return withServer('server (bulk sends)', async (c, _pid, database) => {
    const partnerKey = await bootstrap(c);
    const accounts = await provision(c, partnerKey, BULK_ACCOUNTS, 'bulk');
    for (const [i, account] of accounts.entries()) {
      await prepare(c, account);
      await seedContacts(database, account.id, BULK_CONTACTS, i * BULK_CONTACTS);
    }
    await database.vacuum();
    // SIZE recipients in calls of 100, CONCURRENCY at a time: what a client does without campaigns.
    const calls = Math.ceil(SIZE / 100);
    let next = 0;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < calls; i = next++) {
          const a = i % accounts.length;
          const first = (Math.floor(i / accounts.length) * 100) % BULK_CONTACTS;
          const recipients = Array.from({ length: 100 }, (_, k) => ({
            to: phoneOf(a * BULK_CONTACTS + ((first + k) % BULK_CONTACTS)),
          }));
          const res = await c.api(
            'POST',
            '/bulk/messages',
            { 'x-api-key': accounts[a]!.key },
            { templateName: TEMPLATE, templateLanguage: 'en_US', parameters: ['Customer'], recipients },
          );
          if (res.status !== 202)
            throw new Error(`bulk send: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
          const refused = (res.body.results as { messageId: string | null }[]).filter((r) => !r.messageId);
          if (refused.length > 0) throw new Error(`bulk send: ${refused.length} recipients refused`);
        }
      }),
    );
    const seconds = (performance.now() - began) / 1000;
    return { perSecond: (calls * 100) / seconds, seconds, calls };
  });
}

/** A campaign of `size` contacts on a fresh server. */
function campaignOf(size: number) {
  return withServer(`server (campaign of ${size})`, async (c, pid, database) => {
    const partnerKey = await bootstrap(c);
    const [account] = await provision(c, partnerKey, 1, `campaign ${size}`);
    await prepare(c, account!);
    await seedContacts(database, account!.id, size, 1_000_000);
    await database.vacuum();
    return campaign(c, pid, account!, size);
  });
}

const describeRun = (size: number, r: Awaited<ReturnType<typeof campaign>>) =>
  `campaign of ${size}: completed in ${r.seconds.toFixed(1)} s (the start, fixing the audience: ${r.startSeconds.toFixed(1)} s), ` +
  `${(size / r.sendingSeconds).toFixed(0)} messages accepted/s while sending; server peak RSS ${r.rssKib === null ? 'unknown' : `${(r.rssKib / 1024).toFixed(0)} MiB`}`;

// 1 and 2, in turns: the bulk sends, then the campaign, ROUNDS times; the ratio is the median of
// the rounds' own ratios (a passing load on the machine moves one round, not the figure).
const rounds: { bulk: number; campaign: number; run: Awaited<ReturnType<typeof campaign>> }[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const bulk = await bulkSends();
  say(
    `round ${round}: POST /bulk/messages: ${bulk.calls * 100} recipients in ${bulk.calls} calls of 100 (${CONCURRENCY} at a time) in ${bulk.seconds.toFixed(1)} s: ${bulk.perSecond.toFixed(0)} messages accepted/s`,
  );
  const run = await campaignOf(SIZE);
  const rate = SIZE / run.sendingSeconds;
  say(`round ${round}: ${describeRun(SIZE, run)}: ${(rate / bulk.perSecond).toFixed(2)}× the bulk sends'`);
  rounds.push({ bulk: bulk.perSecond, campaign: rate, run });
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ratio = median(rounds.map((r) => r.campaign / r.bulk));
record({
  figure: `campaign of ${SIZE}, pacing off: messages accepted/s while sending (median of ${ROUNDS} rounds)`,
  value: median(rounds.map((r) => r.campaign)),
  unit: 'msg/s',
  baseline: {
    name: `the same ${SIZE} recipients through POST /bulk/messages, ${CONCURRENCY} calls of 100 at a time`,
    value: median(rounds.map((r) => r.bulk)),
  },
  ratio,
  target: '≥ 0.8×',
  met: ratio >= 0.8,
});
const times = rounds.map((r) => r.run.seconds);
record({
  figure: `campaign of ${SIZE}: time to complete, the start included (median)`,
  value: median(times),
  unit: 's',
});
say(
  `campaign of ${SIZE}: ${ratio.toFixed(2)}× the bulk sends' rate, the median of ${ROUNDS} rounds (target ≥ 0.8×)`,
);

// 3. Peak RSS flat in the audience size: half the audience, against the rounds' (their median).
const small = await campaignOf(SMALL);
say(describeRun(SMALL, small));
const peaks = rounds.flatMap((r) => (r.run.rssKib === null ? [] : [r.run.rssKib]));
if (small.rssKib !== null && peaks.length > 0) {
  const large = median(peaks);
  record({
    figure: `server peak RSS, campaign of ${SIZE} (median of the rounds)`,
    value: large / 1024,
    unit: 'MiB',
    baseline: { name: `the same, campaign of ${SMALL}`, value: small.rssKib / 1024 },
    target: '≤ 1.25×',
    met: large / small.rssKib <= 1.25,
  });
  say(`peak RSS: ${(large / small.rssKib).toFixed(2)}× from ${SMALL} to ${SIZE} recipients`);
}
