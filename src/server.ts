// The running service: config → database → migrations → job queue → app → listen, and a graceful
// shutdown that stops accepting requests, lets in-flight requests and jobs finish, then closes.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { type App, buildApp } from './app.ts';
import { type Config, ConfigError } from './config.ts';
import { readSecretsKeyFile, secretsKeyFile } from './kernel/crypto/secrets.ts';
import { type Database, openDatabase } from './kernel/database/db.ts';
import { migrate } from './kernel/database/migrate.ts';
import { pruneIdempotencyKeys } from './kernel/http/idempotency.ts';
import { Jobs } from './kernel/jobs/jobs.ts';
import { claimDataDir, describeOpen } from './kernel/runtime/data-dir.ts';
import { openAdminSocket } from './modules/backup/index.ts';
import { prepareDummyHash } from './modules/console-auth/index.ts';
import { ensureBootstrapToken } from './modules/partner/index.ts';
import { attachBook } from './modules/pricing/index.ts';
import { startRetention } from './modules/retention/index.ts';
import { startTemplateSyncs } from './modules/templates/index.ts';

export interface RunningServer {
  app: App;
  db: Database;
  jobs: Jobs;
  url: string;
  close: () => Promise<void>;
}

/**
 * In embedded mode, SECRETS_KEY may be left unset: one is generated once into DATA_DIR. With
 * PostgreSQL every process must seal and open secrets with the same key, so it must be given.
 */
export function resolveSecretsKey(config: Config): Config {
  if (config.secretsKey) return config;
  if (config.databaseUrl) {
    throw new ConfigError(
      'Invalid configuration:\n  SECRETS_KEY: required with DATABASE_URL (every process must share it); make one with: openssl rand -base64 32',
    );
  }
  const path = secretsKeyFile(config.dataDir);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return Object.freeze({ ...config, secretsKey: readSecretsKeyFile(config.dataDir) });
}

export function openRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  // Connection errors are retried by ioredis; the rate limiter falls back to in-process counters meanwhile.
  redis.on('error', () => {});
  return redis;
}

/**
 * Opens and migrates the database and makes its job queue, not yet started: the app defines its
 * jobs first, then start() creates their queues. Used by `serve` and by the CLI.
 */
export async function prepareDatabase(
  config: Config,
): Promise<{ db: Database; jobs: Jobs; applied: string[] }> {
  const db = await openDatabase(config);
  const applied = await migrate(db);
  const jobs = new Jobs(db, { superviseSeconds: config.jobSuperviseSeconds });
  return { db, jobs, applied };
}

export async function startServer(
  rawConfig: Config,
  options: { announceBootstrapToken?: (token: string) => void } = {},
): Promise<RunningServer> {
  // Before anything is written there (with PostgreSQL, DATA_DIR holds the bootstrap token only).
  const closed = claimDataDir(rawConfig.dataDir, { create: !rawConfig.databaseUrl });
  const config = resolveSecretsKey(rawConfig);
  const { db, jobs } = await prepareDatabase(config);
  const redis = config.redisUrl ? openRedis(config.redisUrl) : null;
  const app = await buildApp(config, { db, jobs, redis });
  // The price book: the release's shipped rows written, the operator's read, now and every minute.
  const stopReadingBook = await attachBook(db, app.ctx.prices);
  if (closed.length > 0) {
    app.log.warn(
      { dataDir: config.dataDir, closed: closed.length },
      `DATA_DIR was open to other users; closed (0700 directories, 0600 files): ${describeOpen(closed)}`,
    );
  }
  prepareDummyHash();
  await jobs.start();
  const token = await ensureBootstrapToken(db, config);
  if (token) options.announceBootstrapToken?.(token);
  let pruneTimer: NodeJS.Timeout | null = null;
  let stopTemplateSyncs: (() => void) | null = null;
  let stopRetention: (() => void) | null = null;
  if (config.runWorkers) {
    await jobs.runWorkers();
    await app.ctx.dispatcher.start();
    await app.ctx.automation.start();
    app.ctx.voice.start();
    app.ctx.campaigns.start();
    app.ctx.media.start();
    stopTemplateSyncs = startTemplateSyncs({ db, jobs, log: app.log });
    stopRetention = startRetention({ db, jobs, log: app.log });
    pruneTimer = setInterval(() => {
      pruneIdempotencyKeys(db, new Date()).catch((err) =>
        app.log.warn({ err }, 'could not prune idempotency keys'),
      );
    }, 3600_000).unref();
  }
  // The embedded database's one owner answers `tidings backup` through a socket in its data directory.
  const closeAdminSocket = config.databaseUrl
    ? null
    : await openAdminSocket({
        dataDir: config.dataDir,
        db,
        secretsKey: rawConfig.secretsKey ? null : config.secretsKey,
        log: app.log,
      });
  const address = await app.listen({ port: config.port, host: config.host });
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const deadline = setTimeout(() => {
        app.log.error('graceful shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs + 2000);
      deadline.unref();
      if (pruneTimer) clearInterval(pruneTimer);
      stopReadingBook();
      stopTemplateSyncs?.();
      stopRetention?.();
      await closeAdminSocket?.();
      await app.close();
      await jobs.stop(config.shutdownTimeoutMs);
      redis?.disconnect();
      await db.close();
      clearTimeout(deadline);
    })();
    return closing;
  };
  return { app, db, jobs, url: address, close };
}
