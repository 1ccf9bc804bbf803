// Real processes for the tests that start them: server processes (`node src/cli.ts serve`) for tests
// that need more than one process, a crash, or a signal, started on a free port, ready once /healthz
// answers; and commands (the CLI, npm, bash), their output collected as it comes and their end
// awaited, and long-running ones killed when the file ends.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { API_PREFIX } from '../../src/app.ts';
import {
  BOOTSTRAP_TOKEN,
  createTestDatabase,
  onPostgres,
  TEST_SECRETS_KEY,
  type TestDatabase,
} from './harness.ts';

/** The repository, with a trailing slash: where the processes run (`src/cli.ts`, `bin/tidings.js`). */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** PATH with the project's own binaries first (its Node 24 among them), for `node src/cli.ts …`. */
export const projectPath = (): string => `${ROOT}node_modules/.bin:${process.env.PATH}`;

/** How a command ended and what it printed: stdout, stderr, and both in the order they came. */
export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  output: string;
}

/** A started command: its output so far, and its end (after its output is all read). */
export interface WatchedProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  output: () => string;
  done: Promise<ProcessRun>;
}

/**
 * Starts a command with its output collected as it comes (stdio as spawn's options say: pipes by
 * default); `timeoutMs` SIGKILLs it if it has not ended by then. `done` rejects only when the
 * command could not be started.
 */
export function watchProcess(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): WatchedProcess {
  const { timeoutMs, ...spawnOptions } = options;
  const child = spawn(command, args, spawnOptions);
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
    output += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
    output += d;
  });
  const done = new Promise<ProcessRun>((resolve, reject) => {
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, output });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => output, done };
}

/** Runs a command to its end (see watchProcess). */
export function runProcess(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<ProcessRun> {
  return watchProcess(command, args, options).done;
}

/**
 * For a file's long-running commands: `watch` starts one (as watchProcess does), and every one
 * still running when the file ends is SIGKILLed.
 */
export function useWatchedProcesses(): { watch: typeof watchProcess } {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (running(c)) c.kill('SIGKILL');
  });
  return {
    watch: (command, args, options) => {
      const watched = watchProcess(command, args, options);
      children.push(watched.child);
      return watched;
    },
  };
}

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  output: string[];
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Waits for the process to end (SIGKILL after timeoutMs); resolves with how it ended. */
export async function exited(
  child: ChildProcess,
  timeoutMs: number,
): Promise<{ code: number | null; signal: string | null }> {
  if (running(child)) {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      await once(child, 'exit');
    } finally {
      clearTimeout(timer);
    }
  }
  return { code: child.exitCode, signal: child.signalCode };
}

/** Starts `tidings serve` with the given settings added to a quiet test environment. */
export async function startServerProcess(
  env: Record<string, string>,
  options: { readyMs?: number } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn('node', ['src/cli.ts', 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      BOOTSTRAP_TOKEN,
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk) => output.push(String(chunk)));
  child.stderr?.on('data', (chunk) => output.push(String(chunk)));
  const server = { child, base: `http://127.0.0.1:${port}`, output };
  const deadline = Date.now() + (options.readyMs ?? 45_000);
  while (Date.now() < deadline) {
    if (!running(child)) throw new Error(`server exited with ${child.exitCode}: ${output.join('')}`);
    try {
      const res = await fetch(`${server.base}/healthz`);
      if (res.status === 200) return server;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not answer /healthz in time: ${output.join('')}`);
}

/** A JSON call to a server process; `key` is an API key, or `Bearer <token>`. */
export async function processApi(
  server: ServerProcess,
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (key?.startsWith('Bearer ')) headers.authorization = key;
  else if (key) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.base}${API_PREFIX}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A partner bootstrapped on a server process. */
export async function bootstrapOnProcess(server: ServerProcess): Promise<string> {
  const boot = await processApi(server, 'POST', '/partner/bootstrap', `Bearer ${BOOTSTRAP_TOKEN}`);
  if (boot.status !== 201) throw new Error(`bootstrap: ${boot.status} ${JSON.stringify(boot.body)}`);
  return boot.body.apiKey as string;
}

/** A `scale` account of the partner, provisioned on a server process, and a key of `scope`. */
export async function accountOnProcess(
  server: ServerProcess,
  partnerKey: string,
  externalRef: string,
  scope: 'live' | 'sandbox' = 'live',
): Promise<{ accountId: string; apiKey: string }> {
  const account = await processApi(server, 'POST', '/partner/accounts', partnerKey, {
    accountName: externalRef,
    countryCode: 'US',
    planCode: 'scale',
    externalRef,
  });
  if (account.status !== 201) throw new Error(`provision: ${account.status} ${JSON.stringify(account.body)}`);
  const accountId = account.body.accountId as string;
  const key = await processApi(server, 'POST', `/partner/accounts/${accountId}/keys`, partnerKey, {
    name: scope,
    scope,
  });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { accountId, apiKey: key.body.apiKey as string };
}

export interface DurableStore {
  /** The settings that point a server process at the store, plus the test's own. */
  settings: Record<string, string>;
  /** The processes started on it; each is killed when the file ends. */
  servers: ServerProcess[];
  /** The database, on PostgreSQL (null on PGlite, whose data is in a DATA_DIR). */
  tdb: TestDatabase | null;
  dataDir: string | null;
}

/**
 * A database that outlives the server processes started on it, for crash tests: a fresh
 * PostgreSQL database when TEST_DATABASE_URL is set, else a temporary DATA_DIR for PGlite.
 */
export function useDurableStore(name: string, settings: Record<string, string>): DurableStore {
  const store: DurableStore = { settings: {}, servers: [], tdb: null, dataDir: null };
  beforeAll(async () => {
    if (onPostgres) store.tdb = await createTestDatabase();
    else store.dataDir = mkdtempSync(join(tmpdir(), `tidings-${name}-`));
    store.settings = {
      ...(store.tdb ? { DATABASE_URL: store.tdb.url! } : { DATA_DIR: store.dataDir! }),
      ...settings,
    };
  });
  afterAll(async () => {
    for (const s of store.servers) if (running(s.child)) s.child.kill('SIGKILL');
    await Promise.all(store.servers.map((s) => exited(s.child, 10_000)));
    await store.tdb?.drop();
    if (store.dataDir) rmSync(store.dataDir, { recursive: true, force: true });
  });
  return store;
}
