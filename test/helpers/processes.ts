// Real server processes (`node src/cli.ts serve`) for tests that need more than one process, a
// crash, or a signal: started on a free port, ready once /healthz answers.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { BOOTSTRAP_TOKEN, TEST_SECRETS_KEY } from './harness.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

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
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
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
  const deadline = Date.now() + 45_000;
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
