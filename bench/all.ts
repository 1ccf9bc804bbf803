// `npm run bench`: every benchmark of the project, one after another (on a 2-core machine two at
// once would measure each other), each as its own process as `npm run bench:<name>` runs it, then
// one table of their headline figures, each beside its baseline from the same run, the ratio and
// the target. Written to bench/results/<date>.json and .md, and latest.json and latest.md.
//   npm run bench                     all of them (BENCH_DATABASE_URL, default the local server)
//   npm run bench -- send contacts    some of them
// The scripts' own settings (BENCH_SECONDS, …) pass through; at their defaults the whole run takes
// 5–8 minutes on a 2-core machine.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Failure, Row } from './report.ts';
import { ADMIN_URL, dropStaleBenchDatabases, ROOT, sleep } from './support.ts';

const BENCHES = [
  'request-path',
  'webhooks',
  'contacts',
  'send',
  'callbacks',
  'automation',
  'voice',
  'campaigns',
  'lists',
  'assignment',
];
const chosen = process.argv.slice(2);
for (const name of chosen) if (!BENCHES.includes(name)) throw new Error(`no benchmark ${name}`);
const names = chosen.length ? chosen : BENCHES;

/** The machine and the versions the figures belong to. */
async function machine() {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
  await client.end();
  return {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    postgresql: rows[0]!.server_version,
    os: `${os.type()} ${os.release()}`,
    // Other work on the machine when the run began (1, 5 and 15 minutes): figures from a busy
    // machine are not comparable with a quiet one's.
    loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
  };
}

let current: number | undefined;
let interrupted = false;
// Ctrl-C stops the script under way (its own process group, below) and the run, which still writes
// what it got.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    if (current) process.kill(-current, signal);
  });
}

function run(name: string, file: string): Promise<number> {
  // Its own process group, which its servers join: whatever it leaves running (if it was killed
  // before it could stop them) is killed with the group once it has exited.
  const proc = spawn(process.execPath, [`bench/${name}.ts`], {
    cwd: ROOT,
    env: { ...process.env, BENCH_RESULTS_FILE: file },
    stdio: 'inherit',
    detached: true,
  });
  current = proc.pid;
  return new Promise((resolve) =>
    proc.once('exit', (code, signal) => {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        // nothing left
      }
      current = undefined;
      resolve(code ?? (signal ? 1 : 0));
    }),
  );
}

const started = new Date();
const about = await machine();
// Settings other than the defaults (a short run must not pass for a full one); not the database's
// URL, which may hold a password.
const settings = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_') && k !== 'BENCH_DATABASE_URL'),
) as Record<string, string>;
const stale = await dropStaleBenchDatabases();
if (stale.length) process.stderr.write(`dropped databases that killed runs left: ${stale.join(', ')}\n`);

const dir = mkdtempSync(join(os.tmpdir(), 'tidings-bench-'));
const rows: Row[] = [];
// Why a script failed, as it recorded it (report.ts recordFailure): the phase and the cause.
const failures: Failure[] = [];
const runs: { bench: string; exitCode: number; seconds: number }[] = [];
for (const name of names) {
  if (interrupted) break;
  process.stderr.write(`\n=== bench:${name} ===\n`);
  const file = join(dir, `${name}.jsonl`);
  writeFileSync(file, '');
  const t = performance.now();
  const exitCode = await run(name, file);
  runs.push({ bench: name, exitCode, seconds: Math.round((performance.now() - t) / 1000) });
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row | { failure: Failure });
  const recorded = lines.filter((l): l is Row => !('failure' in l));
  failures.push(...lines.flatMap((l) => ('failure' in l ? [l.failure] : [])));
  if (exitCode !== 0 && !failures.some((f) => f.bench === name)) {
    failures.push({
      bench: name,
      phase: 'unknown',
      cause: `exited with code ${exitCode} (its output above says why)`,
    });
  }
  // Each script's figures first, then its servers' memory.
  const memory = (r: Row) => (r.figure.startsWith('peak RSS') ? 1 : 0);
  rows.push(...recorded.sort((a, b) => memory(a) - memory(b)));
}
rmSync(dir, { recursive: true, force: true });
// A script that failed half-way left its database: nobody uses it any more once its server's
// connections have closed (PostgreSQL ends their sessions a moment after the process died).
if (runs.some((r) => r.exitCode !== 0)) {
  await sleep(3000);
  await dropStaleBenchDatabases();
}

// ---------------------------------------------------------------- the table
const number = (n: number) =>
  Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en') : n.toFixed(Math.abs(n) >= 10 ? 1 : 2);
const cells = (r: Row) => [
  r.bench,
  r.figure,
  `${number(r.value)} ${r.unit}`,
  r.baseline ? `${number(r.baseline.value)} ${r.unit} (${r.baseline.name})` : '—',
  r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`,
  r.target ?? '—',
  r.met === null ? '—' : r.met ? 'yes' : 'NO',
];
const header = ['bench', 'figure', 'value', 'baseline (same run)', 'ratio', 'target', 'met'];
const table = [header, ...rows.map(cells)];
const widths = header.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
const markdownTable = [
  line(table[0]!),
  line(widths.map((w) => '-'.repeat(w))),
  ...table.slice(1).map(line),
].join('\n');
const notes = rows.filter((r) => r.note).map((r) => `- ${r.bench}, ${r.figure}: ${r.note}`);
const failed = runs.filter((r) => r.exitCode !== 0);
const failureLines = failures.map((f) => `bench:${f.bench} FAILED in phase "${f.phase}": ${f.cause}`);
const skipped = names.slice(runs.length);
const seconds = Math.round((Date.now() - started.getTime()) / 1000);
const summary = [
  `${about.cores} cores (${about.cpu}), ${about.memoryGiB} GiB, Node ${about.node}, PostgreSQL ${about.postgresql}, ` +
    `load average at the start ${about.loadAverage.join(' ')}`,
  `runs: ${runs.map((r) => `${r.bench} ${r.seconds} s${r.exitCode ? ` (FAILED, exit ${r.exitCode})` : ''}`).join(', ')}; ` +
    `${seconds} s in all${skipped.length ? `; interrupted, not run: ${skipped.join(', ')}` : ''}`,
  `settings: ${
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || 'the defaults'
  }`,
];

const markdown = [
  `# Benchmarks, ${started.toISOString()}`,
  '',
  ...summary.map((s) => `${s}  `),
  '',
  markdownTable,
  '',
  ...(notes.length ? ['Notes:', '', ...notes, ''] : []),
  ...(failureLines.length
    ? [
        'Failures (the figures of a failed script are not to be trusted):',
        '',
        ...failureLines.map((f) => `- ${f}`),
        '',
      ]
    : []),
].join('\n');
process.stdout.write(`\n${summary.join('\n')}\n\n${markdownTable}\n\n${notes.join('\n')}\n`);

const out = join(ROOT, 'bench', 'results');
mkdirSync(out, { recursive: true });
const stamp = started.toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-');
const json = `${JSON.stringify({ date: started.toISOString(), seconds, machine: about, settings, runs, failures, rows }, null, 2)}\n`;
for (const base of [stamp, 'latest']) {
  writeFileSync(join(out, `${base}.json`), json);
  writeFileSync(join(out, `${base}.md`), markdown);
}
process.stdout.write(`\nwritten to bench/results/${stamp}.{json,md} and bench/results/latest.{json,md}\n`);
// Last, where it is seen: what failed and why (the figures above are what was measured).
if (failed.length || skipped.length) {
  process.stderr.write(`\n${failureLines.join('\n')}\n`);
  if (skipped.length) process.stderr.write(`interrupted, not run: ${skipped.join(', ')}\n`);
  process.stderr.write(`npm run bench FAILED: ${failed.map((r) => r.bench).join(', ') || 'interrupted'}\n`);
  process.exitCode = 1;
}
