// The `tidings` command line, run as a real process on an embedded database in a temporary folder.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/kernel/database/db.ts';
import { call } from '../helpers/client.ts';
import { createTestApp } from '../helpers/harness.ts';
import { runProcess, watchProcess } from '../helpers/processes.ts';

const dataDir = mkdtempSync(`${tmpdir()}/tidings-cli-`);

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const tidings = (args: string[], env: Record<string, string> = {}) =>
  runProcess(process.execPath, ['bin/tidings.js', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env },
  });

/** Opens the CLI's embedded database in this process (the CLI has exited) and builds an app on it. */
async function withApp<T>(work: (app: Awaited<ReturnType<typeof createTestApp>>) => Promise<T>): Promise<T> {
  const db = await openPglite(`${dataDir}/db`);
  // DATA_DIR is the CLI's: a bootstrap removes the token file there, and nowhere else.
  const app = await createTestApp(db, { config: { bootstrapToken: null, dataDir } });
  try {
    return await work(app);
  } finally {
    await app.close();
    await db.close();
  }
}

// Each step starts a process that opens the embedded database from disk (2–5 s each, more while the
// other test files load the machine): the five of one test took 26 s alone and over 30 under CI.
describe('tidings CLI', { timeout: 120_000 }, () => {
  it('stops on an invalid or unknown setting, naming each', async () => {
    const run = await tidings(['migrate'], { PORT: 'abc', TIDINGS_RATE_LIMT: '5' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('PORT="abc": must be a whole number');
    expect(run.stderr).toContain('TIDINGS_RATE_LIMT: unknown setting');
  });

  it('migrates, creates an account and a key that works at once', async () => {
    expect((await tidings(['migrate'])).stdout).toContain('database is up to date');
    const created = await tidings(['accounts', 'create', '--name', 'Self-hosted', '--plan', 'business']);
    expect(created.code, created.stderr).toBe(0);
    const { accountId } = JSON.parse(created.stdout);
    expect(accountId).toMatch(/^acc_/);
    const listed = await tidings(['accounts', 'list']);
    expect(listed.stdout).toContain(accountId);
    const key = await tidings(['keys', 'create', '--account', accountId, '--name', 'server']);
    expect(key.code, key.stderr).toBe(0);
    const { apiKey, id } = JSON.parse(key.stdout);
    expect(apiKey).toMatch(/^tdg_live_/);
    await withApp(async (app) => {
      const res = await call(app, 'GET', '/account', { key: apiKey });
      expect(res.status).toBe(200);
      expect(res.body.accountId).toBe(accountId);
    });
    const revoked = await tidings(['keys', 'revoke', id, '--account', accountId]);
    expect(revoked.code, revoked.stderr).toBe(0);
    await withApp(async (app) => {
      expect((await call(app, 'GET', '/account', { key: apiKey })).status).toBe(401);
    });
  });

  it('refuses a key on a plan without API access', async () => {
    const created = await tidings(['accounts', 'create', '--name', 'Starter', '--plan', 'starter']);
    const { accountId } = JSON.parse(created.stdout);
    const key = await tidings(['keys', 'create', '--account', accountId]);
    expect(key.code).toBe(1);
    expect(key.stderr).toContain('PLAN_UPGRADE_REQUIRED');
  });

  it('loads price rows whole or not at all, and lists which rows are in force on a day', async () => {
    const bad = `${dataDir}/bad-prices.json`;
    writeFileSync(bad, JSON.stringify({ currency: 'USD', rows: [{ market: 'usa', category: 'marketing' }] }));
    const refused = await tidings(['prices', 'load', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('nothing loaded');
    expect(refused.stderr).toContain('rows[0].market: must be an ISO 3166-1 alpha-2 code');
    expect(refused.stderr).toContain('rows[0].price: must be a decimal string');
    const good = `${dataDir}/prices.json`;
    writeFileSync(
      good,
      JSON.stringify({
        currency: 'USD',
        rows: [
          { market: 'US', category: 'marketing', price: '0.0275', effectiveFrom: '2027-01-01', note: 'Q1' },
        ],
      }),
    );
    const loaded = await tidings(['prices', 'load', good]);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(JSON.parse(loaded.stdout)).toEqual({ loaded: 1, added: 1, replaced: 0 });
    const listed = async (at: string) =>
      (await tidings(['prices', 'list', '--market', 'US', '--at', at])).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .filter((r) => r.category === 'marketing');
    const marketing = (rows: { source: string; inForce: boolean; price: string }[]) =>
      rows.map((r) => [r.source, r.price, r.inForce]);
    expect(marketing(await listed('2026-12-31'))).toEqual([
      ['operator', '0.0275', false],
      ['shipped', '0.0250', true],
    ]);
    expect(marketing(await listed('2027-01-01'))).toEqual([
      ['operator', '0.0275', true],
      ['shipped', '0.0250', false],
    ]);
  });

  it('issues bootstrap tokens until the installation is bootstrapped; only the newest works', async () => {
    const first = /\n {4}(\S+)\n/.exec((await tidings(['bootstrap-token'])).stdout)?.[1];
    const second = /\n {4}(\S+)\n/.exec((await tidings(['bootstrap-token'])).stdout)?.[1];
    expect(first).toBeTruthy();
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    // The newest is the one kept for --show.
    expect((await tidings(['bootstrap-token', '--show'])).stdout.trim()).toBe(second);
    await withApp(async (app) => {
      const stale = await call(app, 'POST', '/partner/bootstrap', {
        headers: { authorization: `Bearer ${first}` },
      });
      expect(stale.status).toBe(401);
      const ok = await call(app, 'POST', '/partner/bootstrap', {
        headers: { authorization: `Bearer ${second}` },
      });
      expect(ok.status).toBe(201);
    });
    // The used token's file is gone, and --show says why there is nothing to show.
    expect(existsSync(`${dataDir}/bootstrap-token`)).toBe(false);
    const shown = await tidings(['bootstrap-token', '--show']);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('No unused bootstrap token');
    const after = await tidings(['bootstrap-token']);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('ALREADY_BOOTSTRAPPED');
  });

  it('serve prints the bootstrap token at first start and shuts down cleanly on SIGTERM', async () => {
    const fresh = mkdtempSync(`${tmpdir()}/tidings-serve-`);
    const serve = watchProcess(process.execPath, ['bin/tidings.js', 'serve'], {
      env: { PATH: process.env.PATH, DATA_DIR: fresh, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    });
    // A first start migrates a new embedded database: slow on a machine busy with the rest of the
    // suite. A SIGTERM before the server listens would find no handler yet and kill it outright.
    const deadline = Date.now() + 60_000;
    while (!serve.stdout().includes('Server listening') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const out = serve.stdout();
    expect(out).toContain('Tidings bootstrap token');
    expect(out).toContain('Server listening');
    const printed = /\n {4}(\S+)\n/.exec(out)?.[1];
    expect(printed).toBeTruthy();
    // Findable again while the server runs (the embedded database stays the server's alone), from a
    // file only its owner can read.
    expect(statSync(`${fresh}/bootstrap-token`).mode & 0o777).toBe(0o600);
    const shown = await tidings(['bootstrap-token', '--show'], { DATA_DIR: fresh });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.trim()).toBe(printed);
    serve.child.kill('SIGTERM');
    expect((await serve.done).code).toBe(0);
    rmSync(fresh, { recursive: true, force: true });
  }, 90_000);
});
