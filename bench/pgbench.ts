// pgbench as a yardstick of the machine: PostgreSQL's own benchmark client (C, no Node, no HTTP)
// running its built-in "simple-update" transaction (an UPDATE, a SELECT and an INSERT: TPC-B
// without the branch and teller rows every client would queue on) against the benchmark's server,
// saturated and then at half its own rate. A latency target that pgbench itself
// misses at the same relative load is the machine's, not the code's: on a 2-core VM the clients,
// the backends and the disk share the same CPUs and flushes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LoadResult, result } from './load.ts';

/** Whether pgbench is on this machine (Debian's postgresql-client has it). */
export function hasPgbench(): boolean {
  return spawnSync('pgbench', ['--version'], { stdio: 'ignore' }).status === 0;
}

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn('pgbench', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`pgbench ${args.join(' ')} exited ${code}:\n${out}`)),
    );
  });
}

/** Creates pgbench's tables in the database (100,000 account rows per client). */
export async function initPgbench(url: string, clients: number): Promise<void> {
  await run(['-i', '-q', '-s', String(clients), url]);
}

const common = (clients: number) => [
  '-n',
  '-b',
  'simple-update',
  '-M',
  'prepared',
  '-c',
  String(clients),
  '-j',
  '2',
];

/** `clients` sessions back to back for `seconds`: transactions per second. */
export async function pgbenchSaturated(url: string, clients: number, seconds: number): Promise<number> {
  const out = await run([...common(clients), '-T', String(seconds), url]);
  const tps = /tps = ([\d.]+)/.exec(out);
  if (!tps) throw new Error(`no tps in pgbench's output:\n${out}`);
  return Number(tps[1]);
}

/**
 * `rate` transactions a second for `seconds` (pgbench's -R: an open loop, each latency counted from
 * its scheduled start, as the API's), read from its per-transaction log.
 */
export async function pgbenchAtRate(
  url: string,
  clients: number,
  rate: number,
  seconds: number,
): Promise<{ load: LoadResult; share: (overMs: number) => number }> {
  const dir = mkdtempSync(join(tmpdir(), 'tidings-bench-pgbench-'));
  try {
    await run([
      ...common(clients),
      '-T',
      String(seconds),
      '-R',
      rate.toFixed(0),
      '-l',
      `--log-prefix=${join(dir, 'log')}`,
      url,
    ]);
    // client_id transaction_no time script_no time_epoch time_us schedule_lag: under -R, `time` runs
    // from the scheduled start (it includes schedule_lag).
    const latencies: number[] = [];
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
        const time = line.split(' ')[2];
        if (time) latencies.push(Number(time) / 1000);
      }
    }
    const load = result(latencies, seconds, 0, null);
    return { load, share: (overMs) => latencies.filter((ms) => ms > overMs).length / latencies.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
