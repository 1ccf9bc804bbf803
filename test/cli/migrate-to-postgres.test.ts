// Moving from the embedded database to PostgreSQL (tidings migrate-to-postgres). An embedded data
// directory gets one of every kind of row through the API (test/helpers/world.ts: accounts, keys,
// contacts, templates, messages, conversations, webhooks and pending deliveries, wallet, bulk jobs,
// automation, voice, campaigns, media); the command copies it into a new PostgreSQL database. Then
// every GET of the OpenAPI document that an account's or the partner's key may call answers the
// same on PostgreSQL as it did before, field for field, with the keys made before; a second run
// into the now full database is refused; and the pending work goes on: a webhook delivery queued
// on the embedded database is delivered by the PostgreSQL server, signed with its old secret.
// PostgreSQL runs only (the target is a server).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { type Database, loadPgliteDump, openPglite, openPostgres } from '../../src/kernel/database/db.ts';
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { bootstrapPartner, call } from '../helpers/client.ts';
import { databaseUrl } from '../helpers/global-setup.ts';
import { adminQuery, createTestApp, onPostgres, TEST_SECRETS_KEY } from '../helpers/harness.ts';
import { fixtureKey, operationsOf, PREFIX } from '../helpers/isolation-rules.ts';
import { ROOT, runProcess } from '../helpers/processes.ts';
import { Receiver } from '../helpers/receiver.ts';
import { until } from '../helpers/wait.ts';
import { buildWorld, type World } from '../helpers/world.ts';

// A server-sent event stream never ends; the rest of the GETs are compared.
const NOT_COMPARED = new Set(['streamEvents']);

async function migrateCli(url: string, dataDir: string): Promise<{ code: number; output: string }> {
  const run = await runProcess('node', ['src/cli.ts', 'migrate-to-postgres', '--database-url', url], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { code: run.code ?? -1, output: run.output };
}

type Answer = { status: number; body: unknown };

/**
 * An answer with what may differ between two passes taken apart: each error's request id, the
 * time a usage report runs to, and the API calls counted, which include the comparison's own.
 */
function comparable(path: string, answers: Map<string, Answer>): Answer & { path: string } {
  const answer = structuredClone(answers.get(path)!);
  const body = answer.body as Record<string, any>;
  if (body?.error?.requestId) body.error.requestId = 'req_…';
  if (path.endsWith('/usage')) {
    if ('to' in body && path === '/voice/usage') body.to = 'now';
    if ('totalCalls' in body) {
      body.totalCalls = 'counted';
      for (const day of body.days) day.calls = 'counted';
    }
  }
  if (path === '/account') body.usage.calls = 'counted';
  // A report over a period that ends now by default.
  if (path === '/account/pricing/adjustments') body.to = 'now';
  return { path, ...answer };
}

describe.runIf(onPostgres)('tidings migrate-to-postgres', () => {
  let fake: FakeWhatsAppCloud;
  let dataDir: string;
  let target: { name: string; url: string };
  let world: World;
  let gets: { operationId: string; path: string; key: string }[];
  const before = new Map<string, { status: number; body: unknown }>();
  const config = () => ({ whatsappGraphUrl: fake.graphUrl, webhookAllowedHosts: ['127.0.0.1'] });

  async function answers(app: App): Promise<Map<string, { status: number; body: unknown }>> {
    const out = new Map<string, { status: number; body: unknown }>();
    for (const g of gets) {
      const res = await app.inject({
        method: 'GET',
        url: `${PREFIX}${g.path}`,
        headers: { 'x-api-key': g.key },
      });
      const json = res.headers['content-type']?.toString().includes('json');
      out.set(g.path, {
        status: res.statusCode,
        body: json ? res.json() : res.rawPayload.toString('base64'),
      });
    }
    return out;
  }

  beforeAll(async () => {
    fake = await FakeWhatsAppCloud.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tidings-migrate-'));
    await loadPgliteDump(join(dataDir, 'db'), new Blob([readFileSync(inject('pgliteTemplate'))]));
    const db = await openPglite(join(dataDir, 'db'));
    const app = await createTestApp(db, { config });
    const partner = await bootstrapPartner(app);
    world = await buildWorld({ app, partner, tdb: { db, url: null, drop: async () => {} } }, fake);
    const doc = await call(app, 'GET', `${PREFIX}/openapi.json`);
    gets = operationsOf(doc.body)
      .keyed.filter((op) => op.method === 'GET' && !NOT_COMPARED.has(op.operationId))
      .flatMap((op) => {
        let path = op.path;
        for (const param of op.params) {
          const value = world.ids[fixtureKey(op.path, param)];
          if (value === undefined) return [];
          path = path.replace(`{${param}}`, encodeURIComponent(value));
        }
        const key = op.access === 'partner' ? world.partner.partnerKey : world.keys.live;
        return [{ operationId: op.operationId, path, key }];
      });
    for (const [path, answer] of await answers(app)) before.set(path, answer);
    await app.close();
    await db.close();
    target = { name: `tidings_mig_${randomBytes(5).toString('hex')}`, url: '' };
    target.url = databaseUrl(process.env.TEST_DATABASE_URL!, target.name);
    await adminQuery(`CREATE DATABASE ${target.name}`);
  }, 180_000);

  afterAll(async () => {
    await fake?.close();
    if (target) await adminQuery(`DROP DATABASE IF EXISTS ${target.name} WITH (FORCE)`);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('copies every table, checks each, and refuses a database that is not empty', async () => {
    const run = await migrateCli(target.url, dataDir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Every table matches: \d+ rows in \d+ tables/);
    expect(run.output).toContain('SECRETS_KEY=(the key you have set');
    expect(run.output).not.toContain('DIFFERS');
    const again = await migrateCli(target.url, dataDir);
    expect(again.code).toBe(2);
    expect(again.output).toContain('is not empty');
  }, 120_000);

  it('answers every GET the same on PostgreSQL, with the keys made before', async () => {
    expect(gets.length).toBeGreaterThan(40);
    const db = await openPostgres(target.url, 4);
    const app = await createTestApp(db, { config });
    try {
      const after = await answers(app);
      const differing = gets
        .map((g) => g.path)
        .filter(
          (path) => JSON.stringify(comparable(path, after)) !== JSON.stringify(comparable(path, before)),
        );
      for (const path of differing) expect(comparable(path, after)).toEqual(comparable(path, before));
      // The API calls counted before the move are all still counted (and the comparison's own since).
      for (const path of ['/account/usage', `/partner/accounts/${world.accountId}/usage`]) {
        const [was, is] = [before, after].map(
          (m) => (m.get(path)!.body as { totalCalls: number }).totalCalls,
        );
        expect(is).toBeGreaterThan(was!);
      }
    } finally {
      await app.close();
      await db.close();
    }
  }, 120_000);

  it('goes on with the pending work: a delivery queued before is delivered, signed with the old secret', async () => {
    const receiver = await Receiver.start();
    const db: Database = await openPostgres(target.url, 4);
    const app = await createTestApp(db, { config });
    try {
      const hookId = world.ids['/webhooks/{id}']!;
      const pending = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
        [hookId],
      );
      expect(pending.rows[0]!.n).toBeGreaterThan(0);
      const moved = await call(app, 'PATCH', `/webhooks/${hookId}`, {
        key: world.keys.live,
        body: { url: receiver.url() },
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      await app.ctx.dispatcher.start();
      await until(
        () => receiver.received.length >= pending.rows[0]!.n,
        30_000,
        () => `received ${receiver.received.length} of ${pending.rows[0]!.n}`,
      );
      const secret = world.webhookSecret;
      for (const r of receiver.received) {
        expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      }
    } finally {
      await app.close();
      await db.close();
      await receiver.close();
    }
  }, 60_000);
});
