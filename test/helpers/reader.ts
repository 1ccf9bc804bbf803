// A reader of the README, for the tests that run the docs and examples as written: a real server
// process started as the README's quick start says (its settings read from README.md), on a
// database of the test file's own, and the state the README's "first five minutes" leave behind
// (the partner key, a Business account in the US with 25.00 in its wallet, a live and a sandbox key).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { API_PREFIX } from '../../src/app.ts';
import { loadPgliteDump } from '../../src/kernel/database/db.ts';
import { BOOTSTRAP_TOKEN, createTestDatabase, onPostgres, type TestDatabase } from './harness.ts';
import { exited, processApi, type ServerProcess, startServerProcess } from './processes.ts';

export const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The README's section "## The first five minutes". */
export function firstFiveMinutes(): string {
  const section = README.split('\n## The first five minutes\n')[1]?.split('\n## ')[0];
  if (!section) throw new Error('README.md has no section "## The first five minutes"');
  return section;
}

/**
 * The settings the quick start gives for a server that webhook receivers on this machine can be
 * reached from: the NAME=value words of its `… npm start` line. Empty when it gives none, and then
 * every example with a local receiver fails, as a reader's would.
 */
export function quickStartLocalEnv(): Record<string, string> {
  const line = firstFiveMinutes()
    .split('\n')
    .find((l) => /^(\w+=\S+\s+)+npm start\s*$/.test(l.trim()));
  const settings: Record<string, string> = {};
  for (const word of line?.trim().split(/\s+/) ?? []) {
    const m = /^(\w+)=(\S+)$/.exec(word);
    if (m) settings[m[1]!] = m[2]!;
  }
  return settings;
}

export interface ReaderServer {
  server: ServerProcess;
  /** The API's base, as the README's `$BASE`: http://127.0.0.1:PORT/api/v1/public. */
  base: string;
  partnerKey: string;
  stop: () => Promise<void>;
}

/**
 * A server process on a migrated database of its own (PostgreSQL: a clone of the template;
 * PGlite: a DATA_DIR loaded from the template's dump, so it starts without migrating), bootstrapped.
 */
export async function startReaderServer(settings: Record<string, string>): Promise<ReaderServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tidings-reader-'));
  let tdb: TestDatabase | null = null;
  if (onPostgres) tdb = await createTestDatabase();
  else await loadPgliteDump(join(dataDir, 'db'), new Blob([readFileSync(inject('pgliteTemplate'))]));
  // As the README walkthrough's: a busy machine (CI runs two files at once) can take a while.
  const server = await startServerProcess(
    { DATA_DIR: dataDir, ...(tdb ? { DATABASE_URL: tdb.url! } : {}), ...settings },
    { readyMs: 100_000 },
  );
  const boot = await processApi(server, 'POST', '/partner/bootstrap', `Bearer ${BOOTSTRAP_TOKEN}`);
  if (boot.status !== 201) throw new Error(`bootstrap: ${boot.status} ${JSON.stringify(boot.body)}`);
  return {
    server,
    base: `${server.base}${API_PREFIX}`,
    partnerKey: boot.body.apiKey,
    stop: async () => {
      server.child.kill('SIGTERM');
      await exited(server.child, 15_000);
      await tdb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ReaderAccount {
  ACCOUNT: string;
  API_KEY: string;
  SANDBOX_KEY: string;
}

/** What the README's step 2 makes: a Business account in the US, 25.00 in its wallet, its two keys. */
export async function readerAccount(r: ReaderServer, name: string): Promise<ReaderAccount> {
  const ok = (what: string, res: { status: number; body: any }, status: number) => {
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const account = ok(
    'account',
    await processApi(r.server, 'POST', '/partner/accounts', r.partnerKey, {
      accountName: name,
      countryCode: 'US',
      planCode: 'business',
      externalRef: name,
    }),
    201,
  );
  const id = account.accountId as string;
  ok(
    'credit',
    await processApi(r.server, 'POST', `/partner/accounts/${id}/wallet/credits`, r.partnerKey, {
      amount: '25.00',
      reference: `${name}-credit`,
    }),
    201,
  );
  const key = async (scope: string) =>
    ok(
      `${scope} key`,
      await processApi(r.server, 'POST', `/partner/accounts/${id}/keys`, r.partnerKey, {
        name: scope,
        scope,
      }),
      201,
    ).apiKey as string;
  return { ACCOUNT: id, API_KEY: await key('live'), SANDBOX_KEY: await key('sandbox') };
}
