// Benchmark: voice on PostgreSQL (docs/history/issue-22.md, step 6). Two servers in turn on one
// bench database, each its own process; this process drives them over HTTP and plays the provider.
//   npm run bench:voice     (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
//
// 1. Campaign pacing: a campaign on the sandbox (its simulator fast: TIDINGS_VOICE_SANDBOX_STEP_MS
//    BENCH_VOICE_STEP_MS, TIDINGS_VOICE_POLL_MS BENCH_VOICE_POLL_MS) with callsPerSecond BENCH_CPS and
//    a maxConcurrent that never binds, calling a tag's contacts (ordinary US numbers, which the
//    sandbox answers as a person; their `timezone` a zone where it is day now, calling hours
//    08:00–21:00) for BENCH_PACING_SECONDS whole seconds, then canceled. Enough contacts that it
//    never runs out. From every call's `initiatedAt` (GET /voice/campaigns/{id}/calls, all pages):
//    calls started per whole second over the window, their mean against callsPerSecond (target
//    0.9–1.0×), their p5, and the most in any one second (more than callsPerSecond fails the run).
// 2. Status callbacks: signed, Twilio-shaped, form-encoded status callbacks POSTed to
//    /api/v1/callbacks/twilio/voice/{accountId}?call=<id> for real, open sandbox calls of
//    CALLBACK_ACCOUNTS accounts, in closed loops of BENCH_CONCURRENCY, in turns with GET /healthz of
//    the same server (Tidings' hooks, no database: the plain route) at the same concurrency,
//    BENCH_ROUNDS rounds of BENCH_SECONDS each; the figures are the medians. Every answer must be
//    200 with `{applied}`, and every callback must be found recorded on its call afterwards. The
//    server's CPU time per answer of each kind (its idle use taken out) is shown beside them: on a
//    busy machine the latencies are the CPU queue's as much as the server's.
//    Each callback carries a new SequenceNumber (ringing and in-progress in turn), so each takes the
//    whole path: the signature over the URL and form, the call's row locked, the (CallSid,
//    SequenceNumber) recorded in call_callbacks, the status machine (which moves each call to
//    ringing, then in_progress, and then records and ignores the rest, as it does a late
//    callback). A repeated SequenceNumber would stop at the de-duplication's conflict and write
//    nothing: a cheaper path than the one Twilio's callbacks take. The calls stay open because this
//    server's sandbox is slow (a step a minute): its simulator posts once when a call is placed and
//    then keeps quiet for the phase (rounds longer than a minute in all let it post once more per
//    call, which the route ignores).
// 3. Each server's peak RSS (support.ts records it when the server exits).
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import pg from 'pg';
import { Pool } from 'undici';
import { sandboxVoiceToken } from '../src/channels/sandbox/voice.ts';
import { signTwilioRequest } from '../src/channels/twilio-voice/callbacks.ts';
import {
  type Account,
  bootstrap,
  type Client,
  client,
  completedJob,
  provision,
  SECRETS_KEY,
  SERVER_ENV,
} from './automation-common.ts';
import { closedLoop, describe, expectNoFailures, type LoadResult, type Work } from './load.ts';
import { record } from './report.ts';
import {
  benchDatabase,
  peakRssKib,
  percentile,
  sleep,
  startServer,
  stopServer,
  withCpuUsage,
  withServerView,
} from './support.ts';

const CPS = Number(process.env.BENCH_CPS ?? 5);
const PACING_SECONDS = Number(process.env.BENCH_PACING_SECONDS ?? 60);
const STEP_MS = Number(process.env.BENCH_VOICE_STEP_MS ?? 50);
const POLL_MS = Number(process.env.BENCH_VOICE_POLL_MS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WARM_UP_SECONDS = 2;
/** Calls not over at once: never what binds (calls last a few steps of the fast sandbox). */
const MAX_CONCURRENT = Math.min(100, Math.max(20, CPS * 5));
/** The audience: the window's calls and a margin (the start, the end, and the calls queued at it). */
const CONTACTS = Math.ceil(CPS * (PACING_SECONDS + 20)) + MAX_CONCURRENT;
const CALLBACK_ACCOUNTS = 8;
const CALLS_PER_ACCOUNT = 25;
/** Our callbacks' SequenceNumbers start here, clear of the simulator's (0–3 for a call's life). */
const FIRST_SEQUENCE = 100;
const TAG = 'bench-voice';

if (!Number.isInteger(CPS) || CPS < 1 || CPS > 50) throw new Error('BENCH_CPS must be a whole number 1–50');
if (!Number.isInteger(PACING_SECONDS) || PACING_SECONDS < 5)
  throw new Error('BENCH_PACING_SECONDS must be a whole number of at least 5');

const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  process.stderr.write(`${line}\n`);
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const database = await benchDatabase();
const port = 40_000 + Math.floor(Math.random() * 10_000);
const base = `http://127.0.0.1:${port}`;
// SERVER_ENV: the bootstrap token, the SECRETS_KEY the sandbox's tokens derive from, and no
// partner rate limit to speak of.
const serverEnv = { ...SERVER_ENV, DATABASE_URL: database.url, PORT: String(port), PUBLIC_BASE_URL: base };
/** The server's peak RSS so far (MiB), to print beside the figures (the row is support.ts's). */
const rssOf = (server: { pid?: number }) => {
  const kib = server.pid === undefined ? null : peakRssKib(server.pid);
  return kib === null ? 'unknown' : `${(kib / 1024).toFixed(0)} MiB`;
};

/** The CPU time a process has used so far, in seconds (Linux's /proc/<pid>/stat; null where there is none). */
function cpuSecondsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, the 14th and 15th fields (the 3rd is the first after the name), in ticks of 1/100 s.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** Every page of a list (limit 100), oldest last as the API gives them. */
async function allPages(c: Client, path: string, key: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await c.ok(
      'GET',
      `${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      key,
    );
    rows.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return rows;
}

async function publishedScript(c: Client, key: string): Promise<string> {
  const made = await c.ok('POST', '/voice/scripts', key, {
    name: 'bench',
    type: 'tts',
    tts: { text: 'Hello, this is a reminder of your appointment tomorrow.' },
  });
  await c.ok('POST', `/voice/scripts/${made.id}/publish`, key);
  return made.id as string;
}

/** A zone where the local hour is within 09:00–20:00 now and `minutes` from now (some zone always is). */
function dayZone(minutes: number): string {
  const ok = (z: string, at: DateTime) => {
    const h = at.setZone(z).hour;
    return h >= 9 && h < 20;
  };
  const now = DateTime.now();
  const zone = Intl.supportedValuesOf('timeZone').find(
    (z) => ok(z, now) && ok(z, now.plus({ minutes })) && !z.startsWith('Etc/'),
  );
  if (!zone) throw new Error('no time zone where it is day now');
  return zone;
}

// ---------------------------------------------------------------- 1. campaign pacing

async function pacing(c: Client, account: Account, serverPid: number | undefined) {
  const zone = dayZone(Math.ceil(PACING_SECONDS / 60) + 10);
  const scriptId = await publishedScript(c, account.key);
  for (let from = 0; from < CONTACTS; from += 1000) {
    const job = await c.ok('POST', '/bulk/contacts', account.key, {
      contacts: Array.from({ length: Math.min(1000, CONTACTS - from) }, (_, k) => ({
        phone: `+1415${3_000_000 + from + k}`,
        tags: [TAG],
        attributes: { timezone: zone },
      })),
    });
    await completedJob(c, account.key, `/bulk/contacts/${job.jobId}`);
  }
  await database.vacuum();
  const made = await c.ok('POST', '/voice/campaigns', account.key, {
    name: 'bench pacing',
    scriptId,
    audience: { tag: TAG },
    schedule: { callingHours: { from: '08:00', until: '21:00' } },
    pacing: { callsPerSecond: CPS, maxConcurrent: MAX_CONCURRENT },
    retry: { maxAttempts: 1 },
  });
  const campaign = made.id as string;
  const started = await c.ok('POST', `/voice/campaigns/${campaign}/start`, account.key);
  if (started.status !== 'running' || started.counters.total !== CONTACTS) {
    throw new Error(
      `the campaign started ${started.status} with ${started.counters.total} of ${CONTACTS} contacts`,
    );
  }
  // The window: the whole seconds after the start's.
  const first = Math.floor(Date.parse(started.startedAt as string) / 1000) + 1;
  const last = first + PACING_SECONDS - 1;
  const cpuBefore = cpuSecondsOf(serverPid);
  const windowStarted = performance.now();
  const { cpu } = await withCpuUsage(async () => {
    while (Date.now() < (last + 1) * 1000 + 500) {
      await sleep(Math.min(5000, (last + 1) * 1000 + 500 - Date.now()));
      const now = await c.ok('GET', `/voice/campaigns/${campaign}`, account.key);
      if (now.status !== 'running') throw new Error(`the campaign is ${now.status} before the window's end`);
    }
  });
  const cpuAfter = cpuSecondsOf(serverPid);
  const serverCpu =
    cpuBefore === null || cpuAfter === null
      ? 'the server’s CPU use unknown'
      : `the server used ${((100 * (cpuAfter - cpuBefore)) / ((performance.now() - windowStarted) / 1000)).toFixed(0)}% of a CPU`;
  const canceled = await c.api('POST', `/voice/campaigns/${campaign}/cancel`, { 'x-api-key': account.key });
  if (canceled.status !== 200 || canceled.body.status !== 'canceled') {
    throw new Error(`cancel: ${canceled.status} ${JSON.stringify(canceled.body)}`);
  }
  // The calls under way end as they will: then each has its last status.
  const until = performance.now() + 30_000;
  for (;;) {
    const now = await c.ok('GET', `/voice/campaigns/${campaign}`, account.key);
    if (now.counters.inProgress === 0) break;
    if (performance.now() > until)
      throw new Error(`${now.counters.inProgress} calls still under way 30 s after the cancel`);
    await sleep(200);
  }
  const calls = await allPages(c, `/voice/campaigns/${campaign}/calls`, account.key);
  // Each call answered and completed (the sandbox's person), or canceled by the cancel (one being
  // placed at that moment is canceled once the provider has it: initiated, then canceled).
  const odd = calls.find((call) =>
    call.status === 'canceled'
      ? false
      : !call.initiatedAt || call.status !== 'completed' || !call.answeredAt || call.campaignId !== campaign,
  );
  if (odd) throw new Error(`a call ended unexpectedly: ${JSON.stringify(odd)}`);
  const perSecond = new Map<number, number>();
  for (const call of calls) {
    if (!call.initiatedAt) continue;
    const second = Math.floor(Date.parse(call.initiatedAt as string) / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
  }
  const counts = Array.from({ length: PACING_SECONDS }, (_, k) => perSecond.get(first + k) ?? 0);
  const inWindow = counts.reduce((a, b) => a + b, 0);
  const sorted = [...counts].sort((a, b) => a - b);
  // The most in any second the campaign ran, the window's edges included.
  const max = Math.max(...perSecond.values());
  const busiest = [...perSecond.entries()].find(([, n]) => n === max)![0];
  return {
    mean: inWindow / PACING_SECONDS,
    p5: percentile(sorted, 0.05),
    max,
    busiest,
    zeroSeconds: counts.filter((n) => n === 0).length,
    placed: perSecond.size ? [...perSecond.values()].reduce((a, b) => a + b, 0) : 0,
    canceled: calls.filter((call) => call.status === 'canceled').length,
    zone,
    cpu: `${serverCpu}; ${cpu}`,
  };
}

// ---------------------------------------------------------------- 2. status callbacks

interface OpenCall {
  accountId: string;
  callId: string;
  sid: string;
  to: string;
  token: string;
  path: string;
  url: string;
  seq: number;
}

/** CALLS_PER_ACCOUNT calls of each account, placed (initiated, with the sandbox's CallSid). */
async function openCalls(c: Client, accounts: Account[]): Promise<OpenCall[]> {
  const made: { account: Account; id: string }[] = [];
  await Promise.all(
    accounts.map(async (account, a) => {
      const scriptId = await publishedScript(c, account.key);
      for (let i = 0; i < CALLS_PER_ACCOUNT; i++) {
        const res = await c.api(
          'POST',
          '/voice/calls',
          { 'x-api-key': account.key },
          { to: `+1415${5_000_000 + a * 1000 + i}`, scriptId },
        );
        if (res.status !== 202)
          throw new Error(`POST /voice/calls: ${res.status} ${JSON.stringify(res.body)}`);
        made.push({ account, id: res.body.id as string });
      }
    }),
  );
  const until = performance.now() + 60_000;
  for (;;) {
    const seen = new Map<string, Record<string, unknown>>();
    for (const account of accounts) {
      for (const call of await allPages(c, '/voice/calls', account.key)) seen.set(call.id as string, call);
    }
    const waiting = made.filter(
      ({ id }) => seen.get(id)?.status !== 'initiated' || !seen.get(id)?.providerCallId,
    );
    if (waiting.length === 0) {
      return made.map(({ account, id }) => {
        const call = seen.get(id)!;
        const path = `/api/v1/callbacks/twilio/voice/${account.id}?call=${encodeURIComponent(id)}`;
        return {
          accountId: account.id,
          callId: id,
          sid: call.providerCallId as string,
          to: call.to as string,
          token: sandboxVoiceToken(SECRETS_KEY, account.id),
          path,
          url: `${base}${path}`,
          seq: FIRST_SEQUENCE,
        };
      });
    }
    if (performance.now() > until) {
      throw new Error(
        `${waiting.length} calls not initiated after 60 s, e.g. ${JSON.stringify(seen.get(waiting[0]!.id))}`,
      );
    }
    await sleep(250);
  }
}

async function callbacks(c: Client, partnerKey: string, serverPid: number | undefined) {
  const accounts = await provision(c, partnerKey, CALLBACK_ACCOUNTS, 'callbacks');
  const calls = await openCalls(c, accounts);
  await database.vacuum();
  const http = new Pool(base, { connections: CONCURRENCY, pipelining: 1 });
  let sent = 0;
  const statusCallback: Work = async (i) => {
    const call = calls[i % calls.length]!;
    const seq = call.seq++;
    const params: Record<string, string> = {
      AccountSid: 'ACsandbox',
      ApiVersion: '2010-04-01',
      CallSid: call.sid,
      CallStatus: seq % 2 === 0 ? 'ringing' : 'in-progress',
      CallbackSource: 'call-progress-events',
      Direction: 'outbound-api',
      From: '+15005550000',
      To: call.to,
      SequenceNumber: String(seq),
      Timestamp: new Date().toUTCString(),
    };
    const res = await http.request({
      method: 'POST',
      path: call.path,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signTwilioRequest(call.token, call.url, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return `${res.statusCode} ${text.slice(0, 200)}`;
    if (typeof (JSON.parse(text) as { applied?: unknown }).applied !== 'boolean')
      return `unexpected answer ${text}`;
    sent++;
    return true;
  };
  const healthz: Work = async () => {
    const res = await http.request({ method: 'GET', path: '/healthz' });
    const text = await res.body.text();
    return res.statusCode === 200 && text === '{"status":"ok"}'
      ? true
      : `${res.statusCode} ${text.slice(0, 200)}`;
  };
  const loud = (what: string, r: LoadResult) => {
    expectNoFailures(what, r);
    return r;
  };

  // Each call's first moves (ringing, then in_progress), then a warm-up (JIT, connections); not measured.
  await Promise.all(
    calls.map(async (_, k) => {
      for (let n = 0; n < 2; n++) {
        const ok = await statusCallback(k);
        if (ok !== true) throw new Error(`a call's first callbacks: ${ok}`);
      }
    }),
  );
  loud('warm-up, /healthz', await closedLoop(CONCURRENCY, WARM_UP_SECONDS, healthz));
  loud('warm-up, status callbacks', await closedLoop(CONCURRENCY, WARM_UP_SECONDS, statusCallback));
  const notMoved = [];
  for (const account of accounts) {
    for (const call of await allPages(c, '/voice/calls', account.key)) {
      if (call.status !== 'in_progress') notMoved.push(call);
    }
  }
  if (notMoved.length > 0) {
    throw new Error(
      `${notMoved.length} calls not moved to in_progress by their first callbacks, e.g. ${JSON.stringify(notMoved[0])}`,
    );
  }

  // What the server spends idle (its dialler's and workers' polls): taken out of each round's CPU time.
  const idleBefore = cpuSecondsOf(serverPid);
  const idleStarted = performance.now();
  await sleep(2000);
  const idleAfter = cpuSecondsOf(serverPid);
  const idleRate =
    idleBefore === null || idleAfter === null
      ? 0
      : (idleAfter - idleBefore) / ((performance.now() - idleStarted) / 1000);
  const results = { healthz: [] as LoadResult[], callbacks: [] as LoadResult[] };
  // The server's CPU time per answer of each kind: what a request costs it, however busy the machine.
  const serverCpu = { healthz: 0, callbacks: 0 };
  let view = '';
  const { cpu } = await withCpuUsage(async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, work] of [
        ['healthz', healthz],
        ['callbacks', statusCallback],
      ] as const) {
        const before = cpuSecondsOf(serverPid);
        const r =
          name === 'callbacks'
            ? await withServerView(port, '/api/v1/callbacks/twilio/voice/:accountId', 200, () =>
                closedLoop(CONCURRENCY, SECONDS, work),
              ).then((v) => {
                view = v.server;
                return v.result;
              })
            : await closedLoop(CONCURRENCY, SECONDS, work);
        const after = cpuSecondsOf(serverPid);
        loud(`round ${round}, ${name}`, r);
        if (before !== null && after !== null) serverCpu[name] += after - before - idleRate * r.seconds;
        results[name].push(r);
        say(`round ${round} ${name.padEnd(9)} ${describe(r)}`);
      }
    }
  });
  const answers = (list: LoadResult[]) => list.reduce((n, r) => n + r.count, 0);
  const cpuPer = (name: 'healthz' | 'callbacks') =>
    `${((1000 * serverCpu[name]) / Math.max(1, answers(results[name]))).toFixed(2)} ms`;
  say(`         ${view} (its last round)`);
  const perRequest =
    `the server's CPU time per answer: ${cpuPer('callbacks')} a callback, ${cpuPer('healthz')} a /healthz ` +
    `(beyond the ${(100 * idleRate).toFixed(1)}% of a CPU it uses idle)`;
  say(`         ${perRequest}`);
  await http.close();

  // Every callback answered 200 is on its call: none was taken for another call or dropped.
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM call_callbacks
      WHERE call_id = ANY($1::text[]) AND kind = 'status' AND split_part(key, ':', 2)::int >= $2`,
    [calls.map((call) => call.callId), FIRST_SEQUENCE],
  );
  await client.end();
  if (rows[0]!.n !== sent)
    throw new Error(`${rows[0]!.n} of the ${sent} callbacks answered are recorded on their calls`);

  const figures = (list: LoadResult[]) => ({
    perSecond: median(list.map((r) => r.perSecond)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
  });
  return {
    measured: figures(results.callbacks),
    baseline: figures(results.healthz),
    sent,
    cpu: `${perRequest}; ${cpu}; ${view} (its last round)`,
    calls: calls.length,
  };
}

// ---------------------------------------------------------------- the run

say(
  `bench:voice ${new Date().toISOString()}; pacing: ${CPS} calls/s for ${PACING_SECONDS} s, ${CONTACTS} contacts, maxConcurrent ${MAX_CONCURRENT}, ` +
    `sandbox step ${STEP_MS} ms, dialler poll ${POLL_MS} ms; callbacks: ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${SECONDS} s, ` +
    `${CALLBACK_ACCOUNTS} accounts × ${CALLS_PER_ACCOUNT} calls`,
);

const runStarted = performance.now();
const elapsed = () => `${((performance.now() - runStarted) / 1000).toFixed(0)} s`;
let server = await startServer(
  { ...serverEnv, TIDINGS_VOICE_SANDBOX_STEP_MS: String(STEP_MS), TIDINGS_VOICE_POLL_MS: String(POLL_MS) },
  { label: `server, campaign pacing (sandbox step ${STEP_MS} ms)` },
);
let c = client(port);
const partnerKey = await bootstrap(c);
// On the Scale plan: 50 calls/s and 500 requests/s for the account, neither near what is asked of it.
const [pacingAccount] = await provision(c, partnerKey, 1, 'pacing');
const paced = await pacing(c, pacingAccount!, server.pid);
const meanRatio = paced.mean / CPS;
say(
  `campaign pacing (callsPerSecond ${CPS}, ${PACING_SECONDS} whole seconds): mean ${paced.mean.toFixed(2)}/s (${meanRatio.toFixed(3)}×, target 0.9–1.0×), ` +
    `p5 ${paced.p5}/s, max in any second ${paced.max} (must be ≤ ${CPS}), ${paced.zeroSeconds} seconds without a call; ` +
    `${paced.placed} calls placed in all, ${paced.canceled} queued ones canceled; contacts' zone ${paced.zone}`,
);
say(`         meanwhile: ${paced.cpu}`);
say(`         peak RSS of the server: ${rssOf(server)}; ${elapsed()} since the start`);
const vsTarget = { baseline: { name: `the campaign's callsPerSecond`, value: CPS } };
const pacingNote =
  `a sandbox campaign (step ${STEP_MS} ms, dialler poll ${POLL_MS} ms, maxConcurrent ${MAX_CONCURRENT}) over ${PACING_SECONDS} whole seconds from its start, ` +
  `calls counted by the second of their initiatedAt; ${paced.zeroSeconds} seconds without a call; ${paced.cpu}`;
record({
  figure: `voice campaign pacing, mean calls started per second (callsPerSecond ${CPS})`,
  value: paced.mean,
  unit: 'calls/s',
  ...vsTarget,
  target: '0.9–1.0×',
  met: meanRatio >= 0.9 && meanRatio <= 1,
  note: pacingNote,
});
record({
  figure: 'voice campaign pacing, p5 of the calls started per second',
  value: paced.p5,
  unit: 'calls/s',
  ...vsTarget,
});
record({
  figure: 'voice campaign pacing, most calls started in any one second',
  value: paced.max,
  unit: 'calls/s',
  ...vsTarget,
  target: '≤ 1.0×',
  met: paced.max <= CPS,
});
if (paced.max > CPS) {
  throw new Error(
    `${paced.max} calls started in the second ${new Date(paced.busiest * 1000).toISOString()}: more than the campaign's ${CPS} per second`,
  );
}
await c.http.close();
await stopServer(server);

server = await startServer(
  // The sandbox's step at its longest: a placed call says `initiated` and then stays open a minute.
  { ...serverEnv, TIDINGS_VOICE_SANDBOX_STEP_MS: '60000' },
  { label: 'server, status callbacks (sandbox step 60 s)' },
);
c = client(port);
const cb = await callbacks(c, partnerKey, server.pid);
const ratio = cb.measured.perSecond / cb.baseline.perSecond;
say(
  `status callbacks (median of ${ROUNDS} rounds): ${cb.measured.perSecond.toFixed(0)}/s, p50 ${cb.measured.p50.toFixed(2)} ms, p99 ${cb.measured.p99.toFixed(2)} ms; ` +
    `GET /healthz: ${cb.baseline.perSecond.toFixed(0)}/s, p50 ${cb.baseline.p50.toFixed(2)} ms, p99 ${cb.baseline.p99.toFixed(2)} ms; ` +
    `throughput ratio ${ratio.toFixed(2)}; ${cb.sent} callbacks sent to ${cb.calls} calls, every one recorded`,
);
say(`         meanwhile: ${cb.cpu}`);
say(`         peak RSS of the server: ${rssOf(server)}; ${elapsed()} since the start`);
const vsHealthz = (value: number, base: number) => ({
  value,
  baseline: { name: 'GET /healthz of the same server, same concurrency', value: base },
});
record({
  figure: 'Twilio-shaped voice status callbacks handled, throughput',
  unit: 'req/s',
  ...vsHealthz(cb.measured.perSecond, cb.baseline.perSecond),
  note:
    `signed form posts, each a new SequenceNumber (ringing / in-progress in turn) for ${cb.calls} open sandbox calls of ${CALLBACK_ACCOUNTS} accounts, ` +
    `${CONCURRENCY} in flight, median of ${ROUNDS} rounds of ${SECONDS} s; no target was set; ${cb.cpu}`,
});
record({
  figure: 'Twilio-shaped voice status callbacks, p50',
  unit: 'ms',
  ...vsHealthz(cb.measured.p50, cb.baseline.p50),
});
record({
  figure: 'Twilio-shaped voice status callbacks, p99',
  unit: 'ms',
  ...vsHealthz(cb.measured.p99, cb.baseline.p99),
});
await c.http.close();
await stopServer(server);
await database.drop();
process.stdout.write(`${lines.join('\n')}\n`);
