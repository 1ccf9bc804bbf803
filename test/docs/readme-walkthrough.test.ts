// The README's "first five minutes" block, pasted as one: taken from README.md as it is and run by
// bash against a fresh server process (its generated bootstrap token read from DATA_DIR, as a
// newcomer's would be), on this run's database. It must finish, and show each step.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '../../src/app.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/harness.ts';
import { exited, runProcess, type ServerProcess, startServerProcess } from '../helpers/processes.ts';
import { firstFiveMinutes } from '../helpers/reader.ts';

/** The sh block of the section that runs the walkthrough (the one that bootstraps). */
function walkthroughBlock(): string {
  const blocks = [...firstFiveMinutes().matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  const block = blocks.find((b) => b.includes('/partner/bootstrap'));
  if (!block) throw new Error('README.md: no walkthrough block under "## The first five minutes"');
  return block;
}

let tdb: TestDatabase | null = null;
let server: ServerProcess;
const dataDir = mkdtempSync(join(tmpdir(), 'tidings-readme-'));

beforeAll(async () => {
  if (onPostgres) tdb = await createTestDatabase();
  server = await startServerProcess(
    {
      DATA_DIR: dataDir,
      BOOTSTRAP_TOKEN: '', // unset: the server generates one, as on a newcomer's first start
      ...(tdb ? { DATABASE_URL: tdb.url! } : {}),
    },
    { readyMs: 100_000 },
  ); // a first start migrates a new database: slow on a busy machine
}, 120_000);

afterAll(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await exited(server.child, 15_000);
  }
  await tdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function bash(script: string, env: Record<string, string>, timeoutMs: number) {
  // -e: a step whose answer lacks the field it needs stops the block (a human sees the answer).
  return runProcess('bash', ['-e', '-c', script], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    timeoutMs,
  });
}

describe('the README walkthrough', () => {
  it('runs as one pasted block: keys, an approved template, a send read, the customer’s reply', async () => {
    const block = walkthroughBlock();
    // The token is found where the README says, not handed over.
    const run = await bash(block, { BASE: `${server.base}${API_PREFIX}`, DATA_DIR: dataDir }, 60_000);
    expect(run.code, `${run.stdout}\n${run.stderr}\n${server.output.join('')}`).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^partner key: tdg_partner_\w+$/m);
    expect(out).toMatch(/^account acc_\w+, live key tdg_live_\w+, sandbox key tdg_sandbox_\w+$/m);
    expect(out).toMatch(/^template tpl_\w+: APPROVED$/m);
    expect(out).toMatch(/"charge":\{"amount":"0\.0000"[^}]*\},"liveCharge":\{"amount":"0\.0034"/);
    expect(out).toMatch(/^message msg_\w+: read$/m);
    const reply = JSON.parse(out.trim().split('\n').at(-1)!);
    expect(reply.data).toHaveLength(1);
    expect(reply.data[0]).toMatchObject({ direction: 'inbound', from: '+14155550123' });
    expect(JSON.stringify(reply.data[0])).toContain('Yes, see you Monday');
    // Nothing went to stderr: no answer lacked what the next step needed.
    expect(run.stderr).toBe('');
  }, 90_000);
});
