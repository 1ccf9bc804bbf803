// DATA_DIR for its owner alone (docs/operations.md § File modes): the real server started by the CLI
// on a DATA_DIR it makes, with the usual umask 022 around it, leaves every directory 0700 and every
// file 0600, the embedded database's included, and so does a backup through its admin socket (even
// over a stale partial file). A DATA_DIR of an earlier version (files 0666, directories 0755) fails
// `tidings doctor` and is closed when the server starts. The database is always the embedded one:
// DATA_DIR is what is tested (with PostgreSQL it holds the bootstrap token only).
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor/command.ts';
import { makeConfig } from '../../src/config.ts';
import { loadPgliteDump } from '../../src/kernel/database/db.ts';
import { startServer } from '../../src/server.ts';
import { BOOTSTRAP_TOKEN, TEST_SECRETS_KEY } from '../helpers/harness.ts';
import { exited, processApi, ROOT, runProcess, startServerProcess } from '../helpers/processes.ts';

const parent = mkdtempSync(join(tmpdir(), 'tidings-modes-'));
// The usual umask around the commands (a stricter one would hide what they leave open themselves).
let umask: number;
beforeAll(() => {
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
  rmSync(parent, { recursive: true, force: true });
});

/** Every directory and file under `dir` (itself included) whose mode is not 0700 / 0600. */
function wrongModes(dir: string): string[] {
  const wrong: string[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    const mode = stat.mode & 0o777;
    const want = stat.isDirectory() ? 0o700 : 0o600;
    if (mode !== want) wrong.push(`${path.slice(dir.length) || '/'} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return wrong;
}

const count = (dir: string): number =>
  1 +
  (lstatSync(dir).isDirectory() ? readdirSync(dir).reduce((n, name) => n + count(join(dir, name)), 0) : 0);

const tidings = (args: string[], env: Record<string, string>) =>
  runProcess(process.execPath, ['src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...env },
  });

// The doctor's network checks pointed at a closed port: they answer at once (only `files` is read).
const doctorEnv = (dataDir: string) => ({
  DATA_DIR: dataDir,
  SECRETS_KEY: TEST_SECRETS_KEY,
  PUBLIC_BASE_URL: 'http://127.0.0.1:1',
  TIDINGS_WHATSAPP_GRAPH_URL: 'http://127.0.0.1:1',
  TIDINGS_TWILIO_API_URL: 'http://127.0.0.1:1',
});

describe('DATA_DIR file modes', { timeout: 240_000 }, () => {
  it('tidings serve on a new DATA_DIR makes everything 0700 / 0600, and a backup 0600', async () => {
    const dataDir = join(parent, 'fresh', 'data');
    // No SECRETS_KEY and no BOOTSTRAP_TOKEN: the server generates both into DATA_DIR.
    // A first start makes the database (initdb, migrations): slow on a loaded machine.
    const server = await startServerProcess(
      { DATA_DIR: dataDir, SECRETS_KEY: '', BOOTSTRAP_TOKEN: '' },
      { readyMs: 150_000 },
    );
    try {
      const token = readFileSync(join(dataDir, 'bootstrap-token'), 'utf8').trim();
      const boot = await processApi(server, 'POST', '/partner/bootstrap', `Bearer ${token}`);
      expect(boot.status, JSON.stringify(boot.body)).toBe(201);
      const account = await processApi(server, 'POST', '/partner/accounts', boot.body.apiKey, {
        accountName: 'Modes',
        countryCode: 'US',
        planCode: 'scale',
        externalRef: 'modes',
      });
      expect(account.status, JSON.stringify(account.body)).toBe(201);

      const backup = join(parent, 'fresh', 'tidings.backup');
      writeFileSync(`${backup}.partial`, 'left by a run cut short', { mode: 0o666 });
      chmodSync(`${backup}.partial`, 0o666);
      const taken = await tidings(['backup', backup], { DATA_DIR: dataDir });
      expect(taken.code, taken.output).toBe(0);
      expect(taken.output).toContain("the running server's");
      expect((lstatSync(backup).mode & 0o777).toString(8)).toBe('600');

      // The admin socket and the pid file are there while it runs.
      expect(readdirSync(dataDir).sort()).toEqual(['admin.sock', 'db', 'secrets.key', 'server.pid']);
      expect(wrongModes(dataDir)).toEqual([]);
    } finally {
      server.child.kill('SIGTERM');
      expect(await exited(server.child, 30_000)).toEqual({ code: 0, signal: null });
    }
    expect(count(dataDir)).toBeGreaterThan(500); // the database's files are all there
    expect(wrongModes(dataDir)).toEqual([]);
    // The doctor agrees.
    const findings = await runDoctor(doctorEnv(dataDir));
    expect(findings.find((f) => f.check === 'files')).toMatchObject({ level: 'ok' });
  });

  it('a DATA_DIR left open by an earlier version fails the doctor and is closed at start', async () => {
    const dataDir = join(parent, 'upgraded');
    await loadPgliteDump(join(dataDir, 'db'), new Blob([readFileSync(inject('pgliteTemplate'))]));
    writeFileSync(join(dataDir, 'secrets.key'), TEST_SECRETS_KEY);
    // The modes the landed code left: directories 0755, the database's files 0666, a key 0644.
    const open = (path: string) => {
      const stat = lstatSync(path);
      chmodSync(path, stat.isDirectory() ? 0o755 : 0o666);
      if (stat.isDirectory()) for (const name of readdirSync(path)) open(join(path, name));
    };
    open(dataDir);
    chmodSync(join(dataDir, 'secrets.key'), 0o644);

    const before = (await runDoctor(doctorEnv(dataDir))).filter((f) => f.check === 'files');
    expect(before).toEqual([
      {
        level: 'fail',
        check: 'files',
        says: expect.stringMatching(
          new RegExp(
            `^${count(dataDir)} in ${dataDir} open to other users: ${dataDir} \\(0755\\), .* and \\d+ more; run chmod -R go-rwx`,
          ),
        ),
      },
    ]);

    const server = await startServer(
      makeConfig({
        dataDir,
        port: 0,
        host: '127.0.0.1',
        logLevel: 'silent',
        bootstrapToken: BOOTSTRAP_TOKEN,
        runWorkers: false,
      }),
    );
    try {
      expect(wrongModes(dataDir)).toEqual([]);
    } finally {
      await server.close();
    }
    expect(wrongModes(dataDir)).toEqual([]);
    const after = (await runDoctor(doctorEnv(dataDir))).filter((f) => f.check === 'files');
    expect(after).toMatchObject([{ level: 'ok' }]);
  });
});
