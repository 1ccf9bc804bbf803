// Background jobs on pg-boss, in the same database as the data. enqueue() takes the caller's
// transaction, so a job exists exactly when the change that caused it commits.
//
// Queues are created at boot, before the app serves: pg-boss looks a queue up through its main
// connection the first time it is used, and on PGlite (one connection) that lookup would wait
// forever on a transaction that is holding the connection.
import PgBoss from 'pg-boss';
import type { Database, Sql } from './db.ts';

export interface JobDefinition<T extends object = object> {
  name: string;
  /** Handles one job; throwing makes pg-boss retry it with backoff. Delivery is at least once. */
  handle: (data: T, meta: { id: string; retryCount: number }) => Promise<void>;
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** Jobs of this queue fetched and run at once by each process. */
  batchSize?: number;
}

function bossDb(sql: Sql): PgBoss.Db {
  return {
    executeSql: (text: string, values?: unknown[]) =>
      values && values.length > 0 ? sql.query(text, values) : sql.exec(text),
  };
}

export class Jobs {
  readonly #boss: PgBoss;
  readonly #definitions = new Map<string, JobDefinition>();
  #started = false;

  constructor(db: Database, options: { pollingIntervalSeconds?: number } = {}) {
    this.#boss = new PgBoss({
      db: bossDb(db),
      schema: 'pgboss',
      // Each test and each process stops its own; cron scheduling is not used yet.
      schedule: false,
      ...options,
    });
    this.#boss.on('error', () => {});
  }

  define<T extends object>(definition: JobDefinition<T>): void {
    if (this.#started) throw new Error(`job ${definition.name} defined after start`);
    this.#definitions.set(definition.name, definition as unknown as JobDefinition);
  }

  /** Installs pg-boss's schema and creates every defined queue. Safe to run in several processes. */
  async start(): Promise<void> {
    await this.#boss.start();
    for (const d of this.#definitions.values()) {
      await this.#boss.createQueue(d.name, {
        retryLimit: d.retryLimit ?? 5,
        retryDelay: d.retryDelaySeconds ?? 2,
        retryBackoff: true,
      });
    }
    this.#started = true;
  }

  /** Starts the workers of every defined queue in this process. */
  async runWorkers(): Promise<void> {
    for (const d of this.#definitions.values()) {
      await this.#boss.work(
        d.name,
        { batchSize: d.batchSize ?? 1, pollingIntervalSeconds: 0.5 },
        async (jobs: PgBoss.Job<object>[]) => {
          for (const job of jobs) {
            await d.handle(job.data, { id: job.id, retryCount: 0 });
          }
        },
      );
    }
  }

  /** Adds a job inside the caller's transaction (or, given the database, on its own). */
  async enqueue<T extends object>(
    sql: Sql,
    name: string,
    data: T,
    options: { startAfterSeconds?: number; singletonKey?: string } = {},
  ): Promise<string | null> {
    if (!this.#definitions.has(name)) throw new Error(`unknown job ${name}`);
    return this.#boss.send(name, data, {
      db: bossDb(sql),
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
    });
  }

  /** Stops fetching and waits up to timeoutMs for jobs in progress to finish. */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    await this.#boss.stop({ graceful: true, wait: true, timeout: Math.max(timeoutMs, 1000), close: false });
  }
}
