// What the benchmark scripts share: a throw-away PostgreSQL database, a real server process on it,
// and percentiles.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { BENCH, record, recordFailure } from './report.ts';

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const ROOT = new URL('..', import.meta.url).pathname;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- failing loudly
// A benchmark measures the service: an answer it did not expect (a 429 from a plan's limit, say)
// makes its figures meaningless, so the script fails, naming its phase and the cause, and `npm run
// bench` (all.ts) repeats that at the end. Any error a script does not catch is reported the same way.

let currentPhase = 'setup';
let phasesNamed = false;

/**
 * Names the phase the script is in, for a failure's report. A script that names none is placed
 * by the label of the server it last started (startServer).
 */
export function phase(name: string): void {
  currentPhase = name;
  phasesNamed = true;
  process.stderr.write(`[bench:${BENCH}] ${name}\n`);
}

/** An error that names the bench, the phase and the cause, and is recorded for all.ts. */
export class BenchFailure extends Error {
  constructor(cause: string, where = currentPhase) {
    super(`bench:${BENCH} failed in phase "${where}": ${cause}`);
    recordFailure(where, cause);
  }
}

if (BENCH !== 'all') {
  process.on('uncaughtException', (err) => {
    if (err instanceof BenchFailure) process.stderr.write(`\n${err.stack ?? err.message}\n`);
    else {
      recordFailure(currentPhase, err.message.split('\n')[0]!.slice(0, 500));
      process.stderr.write(
        `\nbench:${BENCH} failed in phase "${currentPhase}": ${err.stack ?? err.message}\n`,
      );
    }
    process.exit(1);
  });
}

/** An answer's status and, for an API error, its code and message: what a failure names. */
export function answerOf(status: number, body: unknown): string {
  let error: { code?: unknown; message?: unknown } | undefined;
  if (typeof body === 'string') {
    try {
      error = JSON.parse(body)?.error;
    } catch {
      // not JSON: the status says it
    }
  } else if (body && typeof body === 'object') error = (body as { error?: typeof error }).error;
  const code = typeof error?.code === 'string' ? ` ${error.code}` : '';
  const message = typeof error?.message === 'string' ? ` (${error.message.slice(0, 160)})` : '';
  return `HTTP ${status}${code}${message}`;
}

/**
 * Unexpected answers of one phase, tallied by status and error code with the first few kept
 * whole; `check()` fails the bench with them.
 */
export class Unexpected {
  readonly kinds = new Map<string, number>();
  readonly first: string[] = [];
  count = 0;

  add(description: string): void {
    this.count++;
    const kind = /^HTTP \d+( [A-Z_]+)?/.exec(description)?.[0] ?? description.slice(0, 120);
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    // The first few distinct answers, whole.
    if (this.first.length < 3 && !this.first.includes(description)) this.first.push(description);
  }

  describe(of?: number): string {
    const kinds = [...this.kinds].map(([kind, n]) => `${kind} ×${n}`).join(', ');
    return `${this.count}${of === undefined ? '' : ` of ${of}`} answers unexpected: ${kinds}; first: ${this.first.join(' | ')}`;
  }

  /** Fails the bench when there was any. */
  check(where: string, of?: number): void {
    if (this.count > 0) throw new BenchFailure(this.describe(of), where);
  }
}

/** The value below which a fraction q of the sorted values lie. */
export const percentile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

/** The middle value, or the mean of the two middle ones (an even count of rounds or pairs). */
export const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** `NAME=value` words as an environment (a value may hold '=' itself). */
const envOf = (words: string[]): Record<string, string> =>
  Object.fromEntries(
    words.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );

export async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(sql);
  await client.end();
}

/**
 * A new, empty database on the benchmark server; answers its URL, how to vacuum it and how to drop
 * it. A phase starts from a vacuumed database, as pgbench's do: the machine's PostgreSQL may run
 * without autovacuum (CI's does), and the dead rows and missing statistics the phases before left
 * would otherwise weigh on the ones after.
 */
export async function benchDatabase(): Promise<{
  url: string;
  vacuum: () => Promise<void>;
  drop: () => Promise<void>;
}> {
  const name = `tidings_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const vacuum = async () => {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    await client.query('VACUUM (ANALYZE)');
    await client.end();
  };
  return {
    url: url.toString(),
    vacuum,
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * Drops the `tidings_bench_*` databases that killed runs left behind: only those nobody is
 * connected to, so that a benchmark running beside this one keeps its own.
 */
export async function dropStaleBenchDatabases(): Promise<string[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  const { rows } = await client.query<{ datname: string }>(
    `SELECT datname FROM pg_database d
      WHERE datname LIKE 'tidings\\_bench\\_%'
        AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
  );
  const dropped: string[] = [];
  for (const { datname } of rows) {
    // One that a run has connected to meanwhile refuses to go: it is that run's.
    await client.query(`DROP DATABASE IF EXISTS "${datname}"`).then(
      () => dropped.push(datname),
      () => {},
    );
  }
  await client.end();
  return dropped;
}

/** The Scale plan's per-second limit (src/modules/accounts/plans.ts): what the benches' accounts are on. */
export const SCALE_PER_SECOND = 500;

/**
 * Keeps one account's requests to `perSecond` in any second (by default 80% of the Scale plan's
 * limit: the server counts a request a moment after it was sent, so a margin is left), for phases
 * that would otherwise run past the limit on a fast machine. `await pacer.next()` before each
 * request, outside what is timed.
 */
export class Pacer {
  readonly #sent: number[] = [];
  readonly perSecond: number;
  constructor(perSecond = Math.floor(SCALE_PER_SECOND * 0.8)) {
    this.perSecond = perSecond;
  }

  async next(): Promise<void> {
    for (;;) {
      const now = performance.now();
      while (this.#sent.length > 0 && this.#sent[0]! <= now - 1000) this.#sent.shift();
      if (this.#sent.length < this.perSecond) {
        this.#sent.push(now);
        return;
      }
      await sleep(this.#sent[0]! + 1000 - now);
    }
  }
}

/** A process's peak resident memory so far, in KiB (Linux's VmHWM; null where there is none). */
export function peakRssKib(pid: number): number | null {
  try {
    const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Number(line[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Records a server's peak RSS (as a row of report.ts) when it exits. VmHWM is a high-water mark,
 * but /proc/<pid> is gone once the process has exited: it is read until then, every 200 ms.
 */
function samplePeakRss(proc: ChildProcess, label: string, maxMib?: number): void {
  const pid = proc.pid;
  if (pid === undefined) return;
  let peak: number | null = null;
  const timer = setInterval(() => {
    peak = peakRssKib(pid) ?? peak;
  }, 200);
  timer.unref();
  let done = false;
  const report = () => {
    if (done) return;
    done = true;
    clearInterval(timer);
    if (peak === null) return;
    const mib = peak / 1024;
    record({
      figure: `peak RSS: ${label}`,
      value: mib,
      unit: 'MiB',
      ...(maxMib === undefined ? {} : { target: `≤ ${maxMib} MiB`, met: mib <= maxMib }),
    });
  };
  proc.once('exit', report);
  // A server still running when the script ends is killed then: what it reached so far counts.
  process.once('exit', report);
}

/**
 * The environment (`NAME=value` words before `node`) and the Node options `npm start` gives the
 * embedded server (package.json's start script): a bench server on a DATA_DIR runs as users run it.
 */
const START_WORDS: string[] = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).scripts.start.split(
  /\s+/,
);
export const START_ENV = envOf(START_WORDS.slice(0, START_WORDS.indexOf('node')));
export const START_NODE_ARGS: string[] = START_WORDS.slice(
  START_WORDS.indexOf('node') + 1,
  START_WORDS.indexOf('src/cli.ts'),
);

/**
 * Starts `tidings serve` (or `command`, another server script) with `env` (its DATABASE_URL or
 * DATA_DIR, and PORT); resolves once `readyPath` (/healthz) answers. BENCH_NODE_ARGS adds Node options (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it). `label` names the server in the results'
 * peak-RSS row.
 */
export async function startServer(
  env: { PORT: string } & Record<string, string>,
  options: {
    label?: string;
    /** A target for the peak-RSS row. */
    peakRssMaxMib?: number;
    /** Node options; by default those of `npm start` for a server on a DATA_DIR, none otherwise. */
    nodeArgs?: string[];
    command?: string[];
    readyPath?: string;
    readySeconds?: number;
  } = {},
): Promise<ChildProcess> {
  // Given no Node options, a server on a DATA_DIR runs as `npm start` runs it.
  const asStarted = !options.nodeArgs && env.DATA_DIR !== undefined && !options.command;
  const proc = spawn(
    'node',
    [
      ...(options.nodeArgs ?? (asStarted ? START_NODE_ARGS : [])),
      ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...(options.command ?? ['src/cli.ts', 'serve']),
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        // The setups provision accounts through /partner/* one after another: the partner's
        // per-second limit (50 by default) is not what any benchmark measures.
        TIDINGS_PARTNER_RATE_LIMIT: '100000',
        ...(asStarted ? START_ENV : {}),
        ...env,
        // Settings to try on every server of a run (BENCH_SERVER_ENV=NAME=value,NAME=value).
        ...envOf((process.env.BENCH_SERVER_ENV ?? '').split(',').filter(Boolean)),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  samplePeakRss(proc, options.label ?? 'server', options.peakRssMaxMib);
  if (!phasesNamed && options.label) currentPhase = `with the ${options.label}`;
  // A benchmark that fails half-way must not leave its servers running (and loading the machine).
  process.once('exit', () => proc.kill('SIGKILL'));
  for (let i = 0; i < (options.readySeconds ?? 30) * 10; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited with code ${proc.exitCode} before answering`);
    try {
      if ((await fetch(`http://127.0.0.1:${env.PORT}${options.readyPath ?? '/healthz'}`)).ok) return proc;
    } catch {
      // not up yet
    }
    await sleep(100);
  }
  throw new Error('server did not start');
}

/** Stops a server started above and waits until it has exited. */
export async function stopServer(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

/** The machine's CPU counters (/proc/stat's first line; null where there is none). */
function cpuTicks(): number[] | null {
  try {
    return readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
}

/**
 * The time every process of the machine spent runnable but waiting for a CPU, per process id, in
 * ns (the second field of Linux's /proc/<pid>/schedstat; empty where there is none).
 */
function runQueueWaits(): Map<string, number> {
  const waits = new Map<string, number>();
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        waits.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return waits;
}

/**
 * Measures how busy the machine's CPUs were while `work` ran, how much of their time the
 * hypervisor gave to someone else (steal), and how long the processes waited for a CPU in all
 * (per second of the run): a latency tail on a small or shared machine is often a queue for the
 * CPUs, not the code.
 */
export async function withCpuUsage<T>(work: () => Promise<T>): Promise<{ result: T; cpu: string }> {
  const before = cpuTicks();
  const waitsBefore = runQueueWaits();
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const after = cpuTicks();
  let waited = 0;
  for (const [pid, ns] of runQueueWaits()) waited += ns - (waitsBefore.get(pid) ?? 0);
  if (!before || !after) return { result, cpu: 'CPU use unknown' };
  const d = after.map((v, i) => v - (before[i] ?? 0));
  // user nice system idle iowait irq softirq steal
  const total = d.slice(0, 8).reduce((a, b) => a + b, 0) || 1;
  const idle = (d[3] ?? 0) + (d[4] ?? 0);
  const pct = (n: number) => `${((100 * n) / total).toFixed(0)}%`;
  return {
    result,
    cpu:
      `CPUs ${pct(total - idle - (d[7] ?? 0))} busy, ${pct(d[7] ?? 0)} stolen by the host, ` +
      `processes waiting for a CPU ${(waited / 1e9 / seconds).toFixed(2)} s a second in all`,
  };
}

// Runs in a child process (fdatasync blocks its thread): writes 8 KiB and flushes it to the disk
// every 10 ms for the given seconds, then prints the flush times' p50, p99 and max in ms, and the
// flushes that took over 10 ms (when they began, Date.now() scale, and how long they took).
const DISK_PROBE = `
const fs = require('node:fs'), os = require('node:os'), path = require('node:path');
const file = path.join(os.tmpdir(), 'tidings-bench-disk-probe-' + process.pid);
const fd = fs.openSync(file, 'w'); const buf = Buffer.alloc(8192, 120); const times = [], stalls = [];
const end = Date.now() + Number(process.argv[1]) * 1000;
const tick = () => {
  if (Date.now() >= end) {
    fs.closeSync(fd); fs.rmSync(file, { force: true }); times.sort((a, b) => a - b);
    const q = (f) => times[Math.min(times.length - 1, Math.floor(f * times.length))];
    process.stdout.write(JSON.stringify({ p50: q(0.5), p99: q(0.99), max: times.at(-1), stalls }));
    return;
  }
  const at = Date.now(), t = performance.now(); fs.writeSync(fd, buf, 0, buf.length, 0); fs.fdatasyncSync(fd);
  const ms = performance.now() - t; times.push(ms); if (ms > 10) stalls.push({ at, ms });
  setTimeout(tick, 10);
};
tick();`;

/**
 * Measures this machine's disk flushes (what every commit waits for) while `work` runs, from a
 * child process: on a VM whose disk stalls now and then, a commit's latency tail is the disk's.
 */
export async function withDiskFlushes<T>(
  seconds: number,
  work: () => Promise<T>,
): Promise<{ result: T; disk: string; stalls: Stall[] }> {
  const probe = spawn('node', ['-e', DISK_PROBE, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  probe.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const done = new Promise<void>((resolve) => probe.once('close', () => resolve()));
  const result = await work();
  await done;
  try {
    const { p50, p99, max, stalls } = JSON.parse(out) as {
      p50: number;
      p99: number;
      max: number;
      stalls: Stall[];
    };
    return {
      result,
      disk: `disk flushes p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(1)} ms`,
      stalls,
    };
  } catch {
    return { result, disk: 'disk flushes not measured', stalls: [] };
  }
}

/** A flush of the disk probe that took over 10 ms: when it began (Date.now() scale) and how long. */
export interface Stall {
  at: number;
  ms: number;
}

/**
 * Where a latency tail lies: how many requests took longer than `limitMs`, in how many distinct
 * seconds, how many of them were under way while the disk probe's flush stalled (a request
 * overlapping a stall waited for the same disk, most likely), and how many the load generator
 * itself started over 5 ms late (its own pause, not the server's).
 */
export function describeTail(
  load: { timeline?: { at: number; ms: number; late: number }[]; loopDelayMax?: number },
  stalls: Stall[],
  limitMs: number,
) {
  const timeline = load.timeline ?? [];
  const slow = timeline.filter((t) => t.ms > limitMs);
  const seconds = new Set(slow.map((t) => Math.floor(t.at / 1000))).size;
  const duringStall = slow.filter((t) => stalls.some((s) => t.at < s.at + s.ms && t.at + t.ms > s.at)).length;
  const startedLate = slow.filter((t) => t.late > 5).length;
  const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)}%`;
  return (
    `${slow.length} over ${limitMs} ms (${pct(slow.length, timeline.length)}) in ${seconds} distinct seconds, ` +
    `${duringStall} of them (${pct(duringStall, slow.length)}) under way during one of the disk's ${stalls.length} flushes over 10 ms, ` +
    `${startedLate} (${pct(startedLate, slow.length)}) started over 5 ms late by the load generator (its event loop late by up to ${(load.loopDelayMax ?? 0).toFixed(1)} ms)`
  );
}

/** What the server's /metrics said at one moment (see serverView). */
interface ServerMetrics {
  /** Answers of `route` with `status`, by upper bound in seconds (the histogram's cumulative buckets). */
  buckets: Map<string, number>;
  gcSeconds: number;
  loopLagP99: number;
  loopLagMax: number;
}

async function scrape(port: number, route: string, status: number): Promise<ServerMetrics> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const buckets = new Map<string, number>();
  let gcSeconds = 0;
  let loopLagP99 = 0;
  let loopLagMax = 0;
  for (const line of text.split('\n')) {
    const [series, value] = line.split(' ') as [string, string];
    if (series.startsWith('tidings_http_request_duration_seconds_bucket{')) {
      if (!series.includes(`route="${route}"`) || !series.includes(`status="${status}"`)) continue;
      buckets.set(/le="([^"]+)"/.exec(series)![1]!, Number(value));
    } else if (series.startsWith('tidings_nodejs_gc_duration_seconds_sum')) gcSeconds += Number(value);
    else if (series === 'tidings_nodejs_eventloop_lag_p99_seconds') loopLagP99 = Number(value);
    else if (series === 'tidings_nodejs_eventloop_lag_max_seconds') loopLagMax = Number(value);
  }
  return { buckets, gcSeconds, loopLagP99, loopLagMax };
}

/**
 * The server's own view of `work`, from its /metrics before and after: how many answers of `route`
 * took over 25 ms from the request's arrival (the generator's and the network's delays left out),
 * how late its event loop was (prom-client's figures cover the time since the last scrape) and how
 * long it spent in garbage collection.
 */
export async function withServerView<T>(
  port: number,
  route: string,
  status: number,
  work: () => Promise<T>,
): Promise<{ result: T; server: string }> {
  const before = await scrape(port, route, status);
  const result = await work();
  const after = await scrape(port, route, status);
  const delta = (le: string) => (after.buckets.get(le) ?? 0) - (before.buckets.get(le) ?? 0);
  const total = delta('+Inf');
  const slow = total - delta('0.025');
  return {
    result,
    server:
      `the server's own view: ${slow} of ${total} answers (${((100 * slow) / Math.max(1, total)).toFixed(1)}%) over 25 ms from arrival, ` +
      `its event loop late by p99 ${(after.loopLagP99 * 1000).toFixed(1)} ms, max ${(after.loopLagMax * 1000).toFixed(1)} ms, ` +
      `${((after.gcSeconds - before.gcSeconds) * 1000).toFixed(0)} ms in garbage collection`,
  };
}
