// The test harness: one database per test file (cloned from the migrated template that
// global-setup.ts builds), apps built on it with a test config, and a small HTTP client over
// app.inject. PostgreSQL when TEST_DATABASE_URL is set, PGlite otherwise.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { inject } from 'vitest';
import { type App, buildApp } from '../../src/app.ts';
import { type Config, makeConfig } from '../../src/config.ts';
import { type Database, openPglite, openPostgres } from '../../src/kernel/database/db.ts';
import type { Resolver } from '../../src/kernel/outbound/egress.ts';
import { attachBook } from '../../src/modules/pricing/index.ts';
import { databaseUrl } from './global-setup.ts';

export const BOOTSTRAP_TOKEN = 'test-bootstrap-token-0123456789abcdef';
export const TEST_SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
export const redisUrl = process.env.TEST_REDIS_URL ?? null;

export interface TestDatabase {
  db: Database;
  /** The connection string, on PostgreSQL (for starting real server processes). */
  url: string | null;
  drop: () => Promise<void>;
}

/** Runs one statement as the administrator of the test server (CREATE or DROP DATABASE). */
export async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A fresh, migrated database of this test file's own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = inject('postgresTemplate');
  if (onPostgres && template) {
    const name = `tidings_t_${randomBytes(6).toString('hex')}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        break;
      } catch (err) {
        // Two files cloning the template at the same instant can collide; try again shortly.
        if (attempt >= 10) throw err;
        await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
      }
    }
    const url = databaseUrl(process.env.TEST_DATABASE_URL!, name);
    const db = await openPostgres(url, 10);
    return {
      db,
      url,
      drop: async () => {
        await db.close();
        await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  const blob = new Blob([readFileSync(inject('pgliteTemplate'))]);
  const db = await openPglite({ loadDataDir: blob });
  return { db, url: null, drop: () => db.close() };
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return makeConfig({
    logLevel: 'silent',
    bootstrapToken: BOOTSTRAP_TOKEN,
    // Tests call partner endpoints in quick bursts; the partner limit has its own test.
    partnerRatePerSecond: 100_000,
    publicBaseUrl: 'http://tidings.test',
    secretsKey: TEST_SECRETS_KEY,
    ...overrides,
  });
}

export interface TestAppOptions {
  /** A function is called when the app is built (for settings known only then, like a fake's port). */
  config?: Partial<Config> | (() => Partial<Config>);
  now?: () => Date;
  redis?: Redis | null;
  /** Receives the JSON log lines (the config's level applies). */
  logStream?: { write(line: string): void };
  /** Adds routes (test-only probes) before the app is sealed. */
  beforeReady?: (app: App) => void;
  /** Resolves webhook host names (instead of the system resolver). */
  resolver?: Resolver;
  /** Runs the background job workers in this app (the queue itself is always started). */
  workers?: boolean;
  /** Reads the price book's table as the server does (default); false for a database never migrated. */
  priceBook?: boolean;
}

export async function createTestApp(db: Database, options: TestAppOptions = {}): Promise<App> {
  const config = typeof options.config === 'function' ? options.config() : options.config;
  const app = await buildApp(testConfig(config), {
    db,
    now: options.now,
    redis: options.redis ?? null,
    logStream: options.logStream,
    processMetrics: false,
    resolver: options.resolver,
  });
  // As the server does (src/server.ts): the price book's stored rows in the app's prices.
  if (options.priceBook !== false) {
    const stopReadingBook = await attachBook(db, app.ctx.prices);
    app.addHook('onClose', async () => stopReadingBook());
  }
  options.beforeReady?.(app);
  // Jobs in flight finish before the database goes; queues exist before the first request, as in
  // the server (a cold queue would deadlock an enqueue inside a PGlite transaction).
  app.addHook('onClose', () => app.ctx.jobs.stop(2000));
  await app.ready();
  await app.ctx.jobs.start();
  if (options.workers) {
    await app.ctx.jobs.runWorkers();
    await app.ctx.automation.start();
    app.ctx.voice.start();
    app.ctx.campaigns.start();
  }
  return app;
}

export function connectRedis(): Redis {
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set');
  return new Redis(redisUrl, { maxRetriesPerRequest: 1 });
}

/** A clock tests can move. */
export class FakeClock {
  #now: number;
  constructor(start = Date.now()) {
    this.#now = start;
  }
  now = (): Date => new Date(this.#now);
  advance(ms: number): void {
    this.#now += ms;
  }
  set(date: Date): void {
    this.#now = date.getTime();
  }
}
