// `tidings doctor` on a working set-up (nothing to fix, nothing to look at), then each part broken
// alone: the line that names it, at the level it deserves, and the exit code. The database is the
// suite's own (an embedded data directory on PGlite runs, a database of its own on PostgreSQL), with
// a webhook endpoint's secret sealed in it, so a wrong SECRETS_KEY is caught.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor/command.ts';
import { exitCodeOf, type Finding } from '../../src/cli/doctor/findings.ts';
import { loadPgliteDump, openPglite } from '../../src/kernel/database/db.ts';
import { bootstrapPartner, call, tenant } from '../helpers/client.ts';
import {
  createTestApp,
  createTestDatabase,
  onPostgres,
  redisUrl,
  TEST_SECRETS_KEY,
  type TestDatabase,
} from '../helpers/harness.ts';
import { useTestApp } from '../helpers/setup.ts';

// A running Tidings server for PUBLIC_BASE_URL and the provider URLs to reach.
const live = useTestApp({ bootstrap: false });
let dataDir: string;
let pgDatabase: TestDatabase | null = null;
let base: NodeJS.ProcessEnv;

/** A database with one sealed secret in it (a webhook endpoint's), as a business's would have. */
async function sealSecretIn(db: Awaited<ReturnType<typeof openPglite>>): Promise<void> {
  const app = await createTestApp(db, { config: { webhookAllowedHosts: ['127.0.0.1'] } });
  try {
    const partner = await bootstrapPartner(app);
    const { apiKey } = await tenant(app, partner.partnerKey);
    const made = await call(app, 'POST', '/webhooks', {
      key: apiKey,
      body: { url: 'http://127.0.0.1:9/hook' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  const address = await live.app.listen({ port: 0, host: '127.0.0.1' });
  dataDir = mkdtempSync(join(tmpdir(), 'tidings-doctor-'));
  base = {
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: address,
    TIDINGS_WHATSAPP_GRAPH_URL: address,
    TIDINGS_TWILIO_API_URL: address,
  };
  if (onPostgres) {
    pgDatabase = await createTestDatabase();
    await sealSecretIn(pgDatabase.db);
    base = {
      ...base,
      DATABASE_URL: pgDatabase.url!,
      SECRETS_KEY: TEST_SECRETS_KEY,
      REDIS_URL: redisUrl ?? '',
    };
  } else {
    const dir = join(dataDir, 'db');
    await loadPgliteDump(dir, new Blob([readFileSync(inject('pgliteTemplate'))]));
    const db = await openPglite(dir);
    await sealSecretIn(db);
    await db.close();
    // The embedded server keeps the key it made at first start in the data directory.
    writeFileSync(join(dataDir, 'secrets.key'), TEST_SECRETS_KEY, { mode: 0o600 });
  }
}, 60_000);

afterAll(async () => {
  await pgDatabase?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const lines = (findings: Finding[], check: string) => findings.filter((f) => f.check === check);
const notOk = (findings: Finding[]) => findings.filter((f) => f.level !== 'ok');

describe('tidings doctor', () => {
  it('finds nothing to fix and nothing to look at on a working set-up', async () => {
    const findings = await runDoctor(base);
    expect(notOk(findings)).toEqual([]);
    expect(exitCodeOf(findings)).toBe(0);
    expect(lines(findings, 'migrations')[0]!.says).toMatch(/^all \d+ applied/);
    expect(lines(findings, 'secrets')[0]!.says).toMatch(/opens the sealed secrets/);
    expect(lines(findings, 'jobs')[0]!.says).toMatch(/pg-boss schema version \d+/);
    expect(lines(findings, 'public-url')[0]!.says).toMatch(/reaches a Tidings server/);
    expect(lines(findings, 'egress')).toHaveLength(3);
  });

  it('fails on a setting it cannot read, and checks nothing else', async () => {
    const findings = await runDoctor({ ...base, TIDINGS_WEBHOOK_TIMOUT_MS: '5' });
    expect(findings).toEqual([
      {
        level: 'fail',
        check: 'config',
        says: expect.stringContaining('TIDINGS_WEBHOOK_TIMOUT_MS: unknown setting'),
      },
    ]);
    expect(exitCodeOf(findings)).toBe(1);
  });

  it('fails when SECRETS_KEY does not open what is sealed, or is not a key at all', async () => {
    const other = Buffer.alloc(32, 9).toString('base64');
    const wrong = await runDoctor({ ...base, SECRETS_KEY: other });
    expect(notOk(wrong)).toEqual([
      {
        level: 'fail',
        check: 'secrets',
        says: expect.stringMatching(/does not open the secrets sealed .*webhook_endpoints/),
      },
    ]);
    // A key that is not 32 bytes is refused as the configuration is read, before anything else.
    const malformed = await runDoctor({ ...base, SECRETS_KEY: 'short' });
    expect(malformed).toEqual([
      { level: 'fail', check: 'config', says: expect.stringMatching(/SECRETS_KEY=.*32 bytes/) },
    ]);
  });

  it('warns of pending migrations and fails on migrations this code does not know', async () => {
    const edit = async (sql: string) => {
      if (pgDatabase) await pgDatabase.db.query(sql);
      else {
        const db = await openPglite(join(dataDir, 'db'));
        await db.query(sql);
        await db.close();
      }
    };
    const last = (await runDoctor(base))
      .find((f) => f.check === 'migrations')!
      .says.match(/last: (\d+)_/)![1]!;
    await edit(`UPDATE schema_migrations SET version = 999 WHERE version = ${Number(last)}`);
    try {
      const findings = await runDoctor(base);
      expect(notOk(findings)).toEqual([
        { level: 'fail', check: 'migrations', says: expect.stringContaining('does not know (999)') },
      ]);
      await edit('DELETE FROM schema_migrations WHERE version = 999');
      const pending = await runDoctor(base);
      expect(notOk(pending)).toEqual([
        {
          level: 'warn',
          check: 'migrations',
          says: expect.stringMatching(/^1 of \d+ pending \(first: \d+_\w+\): tidings migrate/),
        },
      ]);
      expect(exitCodeOf(pending)).toBe(0);
    } finally {
      const name = (await import('../../src/kernel/database/migrate.ts')).listMigrations().at(-1)!.name;
      await edit(
        `INSERT INTO schema_migrations (version, name) VALUES (${Number(last)}, '${name}') ON CONFLICT DO NOTHING`,
      );
    }
    expect(notOk(await runDoctor(base))).toEqual([]);
  });

  it('fails on an unreachable Redis and a WEBHOOK_ALLOWED_HOSTS it cannot read', async () => {
    const findings = await runDoctor({
      ...base,
      REDIS_URL: 'redis://127.0.0.1:1',
      WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/99',
    });
    expect(notOk(findings)).toEqual([
      { level: 'fail', check: 'redis', says: expect.stringContaining('cannot reach REDIS_URL') },
      { level: 'fail', check: 'egress', says: expect.stringContaining('WEBHOOK_ALLOWED_HOSTS') },
    ]);
    expect(exitCodeOf(findings)).toBe(1);
  });

  it('warns of a public URL that does not answer or is plain http, an open allow-list, and an unreachable provider', async () => {
    const down = await runDoctor({
      ...base,
      PUBLIC_BASE_URL: 'http://127.0.0.1:1',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      TIDINGS_TWILIO_API_URL: 'http://127.0.0.1:1',
    });
    expect(notOk(down)).toEqual([
      {
        level: 'warn',
        check: 'public-url',
        says: expect.stringContaining('no answer from http://127.0.0.1:1/healthz'),
      },
      { level: 'warn', check: 'egress', says: expect.stringContaining('lets webhook URLs reach 127.0.0.1') },
      {
        level: 'warn',
        check: 'egress',
        says: expect.stringMatching(/cannot reach 127\.0\.0\.1:1 .*TIDINGS_TWILIO_API_URL/),
      },
    ]);
    expect(exitCodeOf(down)).toBe(0);
    const plain = await runDoctor({ ...base, PUBLIC_BASE_URL: 'http://tidings.invalid' });
    expect(lines(plain, 'public-url')).toEqual([
      {
        level: 'warn',
        check: 'public-url',
        says: expect.stringMatching(/^PUBLIC_BASE_URL http:\/\/tidings.invalid is plain http/),
      },
      {
        level: 'warn',
        check: 'public-url',
        says: expect.stringMatching(/^no answer from http:\/\/tidings.invalid\/healthz/),
      },
    ]);
  });

  it.runIf(onPostgres)(
    'fails on an unreachable database, and on DATABASE_URL without SECRETS_KEY',
    async () => {
      const unreachable = await runDoctor({
        ...base,
        DATABASE_URL: 'postgres://tidings:secret@127.0.0.1:1/nowhere',
      });
      const failed = unreachable.filter((f) => f.level === 'fail');
      expect(failed).toEqual([
        {
          level: 'fail',
          check: 'database',
          says: expect.stringContaining('cannot connect to postgres://tidings:***@127.0.0.1:1/nowhere'),
        },
      ]);
      expect(JSON.stringify(unreachable)).not.toContain('secret@');
      const keyless = await runDoctor({ ...base, SECRETS_KEY: '' });
      expect(notOk(keyless)).toEqual([
        {
          level: 'fail',
          check: 'secrets',
          says: expect.stringMatching(
            /^SECRETS_KEY is required with DATABASE_URL .*, and the database holds sealed secrets \(webhook_endpoints/,
          ),
        },
      ]);
    },
  );

  it.runIf(!onPostgres)(
    'asks the running server instead of opening the embedded database it holds',
    async () => {
      const port = new URL(base.PUBLIC_BASE_URL!).port;
      writeFileSync(join(dataDir, 'server.pid'), String(process.pid));
      try {
        const findings = await runDoctor({ ...base, PORT: port });
        expect(lines(findings, 'database')).toEqual([
          {
            level: 'ok',
            check: 'database',
            says: `embedded, open in the running server (pid ${process.pid}), which answers ready`,
          },
        ]);
        expect(lines(findings, 'migrations')).toEqual([]);
      } finally {
        rmSync(join(dataDir, 'server.pid'));
      }
    },
  );
});
