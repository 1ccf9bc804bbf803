// Background jobs on pg-boss, in the same database as the data. enqueue() takes the caller's
// transaction, so a job exists exactly when the change that caused it commits.
//
// Queues are created at boot, before the app serves: pg-boss looks a queue up through its main
// connection the first time it is used, and on PGlite (one connection) that lookup would wait
// forever on a transaction that is holding the connection.
//
// Wake-ups: enqueue() also sends a NOTIFY in the same transaction; PostgreSQL delivers it at commit
// to every process, whose workers then fetch at once instead of at their next poll. The busiest
// path (sending messages) wakes after its commit instead (wake()): a transaction that sent a
// NOTIFY holds one lock for the whole database from its commit until its WAL is on disk, so such
// commits cannot share a disk flush and queue behind each other whenever the disk stalls.
//
// A worker that dies leaves its job `active`; pg-boss fails it once `expireInSeconds` have passed
// (checked every `superviseSeconds`) and retries it. Handlers must therefore be idempotent, and
// safe when a slow first run and its retry overlap.
import PgBoss from 'pg-boss';
import plans from 'pg-boss/src/plans.js';
import type { Database, Sql } from '../database/db.ts';

export const JOB_CHANNEL = 'tidings_jobs';

export interface JobMeta {
  id: string;
  /** Retries so far (0 on the first run). */
  retryCount: number;
}

export interface JobDefinition<T extends object = object> {
  name: string;
  /** Handles one job; throwing makes pg-boss retry it with backoff. Delivery is at least once. */
  handle: (data: T, meta: JobMeta) => Promise<void>;
  /**
   * Handles a whole fetched batch at once instead (then `handle` is not called). Throwing fails
   * and retries the whole batch, so a handler that can fail one job alone must deal with it itself.
   */
  handleBatch?: (jobs: { data: T; meta: JobMeta }[]) => Promise<void>;
  retryLimit?: number;
  retryDelaySeconds?: number;
  /** A run still unfinished after this long is presumed dead, failed and retried. */
  expireInSeconds?: number;
  /** Jobs of this queue fetched and run at once by each process. */
  batchSize?: number;
  /**
   * Fetch loops of this queue in each process (1 by default). A loop fetches its next batch only
   * when its handler is done with the last one; with several, a batch that waits (on a slow
   * provider, say) holds up its own jobs only, while the other loops go on fetching.
   */
  workers?: number;
  /**
   * Runs once for a job that failed for good: its retries used up, whether its handler threw or
   * its worker died on the last try (pg-boss moves it to a dead-letter queue either way).
   */
  onGiveUp?: (data: T) => Promise<void>;
  /** Work a handler left running after it returned, waited for (up to timeoutMs) when jobs stop. */
  drain?: (timeoutMs: number) => Promise<void>;
}

const givenUpQueue = (name: string) => `${name}.given-up`;

/** The least time between two wake-ups of a queue sent by one process (see wake()). */
const WAKE_INTERVAL_MS = 5;

/**
 * A wake-up on its own, as one statement: not waiting for its commit to reach the disk (nothing is
 * lost with it but a wake-up, and the workers poll) keeps the NOTIFY lock for microseconds.
 */
const WAKE_SQL = `SELECT pg_notify($1, $2) FROM set_config('synchronous_commit', 'off', true)`;
/** A job id that exists nowhere: completing it touches nothing but warms pg-boss's queue cache. */
const NO_JOB = '00000000-0000-0000-0000-000000000000';

export interface JobsOptions {
  pollingIntervalSeconds?: number;
  /** How often expired runs are looked for. */
  superviseSeconds?: number;
}

function bossDb(sql: Sql): PgBoss.Db {
  return {
    executeSql: (text: string, values?: unknown[]) =>
      values && values.length > 0 ? sql.query(text, values) : sql.exec(text),
  };
}

export class Jobs {
  readonly #db: Database;
  readonly #boss: PgBoss;
  readonly #definitions = new Map<string, JobDefinition>();
  readonly #workerIds: string[] = [];
  /** The table each queue's jobs are stored in (pg-boss's choice, read at start). */
  readonly #tables = new Map<string, string>();
  #unlisten: (() => Promise<void>) | null = null;
  #started = false;
  /** Per queue: when this process last sent it a wake-up, and the one it has scheduled, if any. */
  readonly #wakes = new Map<string, { sentAt: number; timer: NodeJS.Timeout | null }>();

  constructor(db: Database, options: JobsOptions = {}) {
    this.#db = db;
    const supervise = options.superviseSeconds ?? 30;
    this.#boss = new PgBoss({
      db: bossDb(db),
      schema: 'pgboss',
      // Each test and each process stops its own; cron scheduling is not used yet.
      schedule: false,
      superviseIntervalSeconds: supervise,
      monitorIntervalSeconds: supervise,
      ...(options.pollingIntervalSeconds ? { pollingIntervalSeconds: options.pollingIntervalSeconds } : {}),
    });
    this.#boss.on('error', () => {});
  }

  define<T extends object>(definition: JobDefinition<T>): void {
    if (this.#started) throw new Error(`job ${definition.name} defined after start`);
    this.#definitions.set(definition.name, definition as unknown as JobDefinition);
  }

  /** Installs pg-boss's schema and creates (or updates) every defined queue. Safe in several processes. */
  async start(): Promise<void> {
    await this.#boss.start();
    for (const d of this.#definitions.values()) {
      if (d.onGiveUp)
        await this.#ensureQueue(givenUpQueue(d.name), { retryLimit: 5, retryDelay: 5, retryBackoff: true });
      await this.#ensureQueue(d.name, {
        retryLimit: d.retryLimit ?? 5,
        retryDelay: d.retryDelaySeconds ?? 2,
        retryBackoff: true,
        expireInSeconds: d.expireInSeconds ?? 15 * 60,
        ...(d.onGiveUp ? { deadLetter: givenUpQueue(d.name) } : {}),
      });
      const queue = await this.#boss.getQueue(d.name);
      // (pg-boss's types say number; it is the table's name.)
      if (queue?.table) this.#tables.set(d.name, String(queue.table));
    }
    this.#started = true;
  }

  async #ensureQueue(name: string, options: PgBoss.QueueOptions & { deadLetter?: string }): Promise<void> {
    if (await this.#boss.getQueue(name)) await this.#boss.updateQueue(name, options);
    else await this.#boss.createQueue(name, options);
    // pg-boss caches the queues that existed when it started; a queue created since is looked up
    // on first use through the main connection, which inside a PGlite transaction never returns.
    await this.#boss.complete(name, NO_JOB);
  }

  /** Starts the workers of every defined queue in this process. */
  async runWorkers(): Promise<void> {
    for (const d of this.#definitions.values()) {
      for (let loop = 0; loop < (d.workers ?? 1); loop++) this.#workerIds.push(await this.#work(d));
      const onGiveUp = d.onGiveUp;
      if (onGiveUp) {
        const deadId = await this.#boss.work(
          givenUpQueue(d.name),
          { batchSize: 1, pollingIntervalSeconds: 2 },
          async (jobs: PgBoss.Job<object>[]) => {
            for (const job of jobs) await onGiveUp(job.data);
          },
        );
        this.#workerIds.push(deadId);
      }
    }
    this.#unlisten = await this.#db.listen(JOB_CHANNEL, () => {
      for (const id of this.#workerIds) this.#boss.notifyWorker(id);
    });
  }

  /** Starts one fetch loop of a queue; answers its worker id. */
  async #work(d: JobDefinition): Promise<string> {
    const batchSize = d.batchSize ?? 1;
    let id = '';
    id = await this.#boss.work(
      d.name,
      { batchSize, pollingIntervalSeconds: 0.5, includeMetadata: true },
      async (jobs: PgBoss.JobWithMetadata<object>[]) => {
        // A full batch means more may be waiting: fetch again at once instead of after the
        // polling interval (which would cap a queue at batchSize jobs per half second).
        if (jobs.length === batchSize) setImmediate(() => this.#boss.notifyWorker(id));
        const handleBatch = d.handleBatch;
        if (handleBatch) {
          await handleBatch(
            jobs.map((j) => ({ data: j.data, meta: { id: j.id, retryCount: j.retryCount } })),
          );
          return;
        }
        for (const job of jobs) {
          await d.handle(job.data, { id: job.id, retryCount: job.retryCount });
        }
      },
    );
    return id;
  }

  /**
   * Adds a job inside the caller's transaction (or, given the database, on its own). `startAfter`
   * delays it (seconds, or a time); `notify: false` leaves the wake-up to the caller, who has
   * already sent `SELECT pg_notify(JOB_CHANNEL, name)` in one of its own statements.
   */
  async enqueue<T extends object>(
    sql: Sql,
    name: string,
    data: T,
    options: {
      startAfterSeconds?: number;
      startAfter?: Date;
      singletonKey?: string;
      /**
       * With singletonKey: at most one job of this key per window of this many seconds (aligned on
       * the epoch), whichever process sends it; a second send in the window adds nothing (null).
       */
      singletonSeconds?: number;
      /** Fetched before the queue's jobs of lower priority (0 by default), oldest first within one. */
      priority?: number;
      notify?: boolean;
    } = {},
  ): Promise<string | null> {
    if (!this.#definitions.has(name)) throw new Error(`unknown job ${name}`);
    const startAfter = options.startAfter ?? (options.startAfterSeconds || undefined);
    const id = await this.#boss.send(name, data, {
      db: bossDb(sql),
      ...(startAfter ? { startAfter } : {}),
      ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
      ...(options.singletonSeconds ? { singletonSeconds: options.singletonSeconds } : {}),
      ...(options.priority ? { priority: options.priority } : {}),
    });
    if (!startAfter && options.notify !== false)
      await sql.query('SELECT pg_notify($1, $2)', [JOB_CHANNEL, name]);
    return id;
  }

  /**
   * Wakes the workers of queue `name` in every process (this one too) with a NOTIFY, after the
   * caller committed jobs for it without one (insertStatement). A process sends a queue at most
   * one wake-up per WAKE_INTERVAL_MS: the first at once, the ones asked for meanwhile as one at the
   * end of the interval (a woken worker fetches every job that is ready).
   * Best effort: a lost wake-up costs a worker's polling interval, not a job.
   */
  wake(name: string): void {
    const w = this.#wakes.get(name) ?? { sentAt: -Infinity, timer: null };
    this.#wakes.set(name, w);
    if (w.timer) return;
    const send = () => {
      w.timer = null;
      w.sentAt = performance.now();
      this.#db.query(WAKE_SQL, [JOB_CHANNEL, name]).catch(() => {
        // The database is away or closing: the workers' polling finds the jobs.
      });
    };
    const wait = w.sentAt + WAKE_INTERVAL_MS - performance.now();
    if (wait <= 0) send();
    else w.timer = setTimeout(send, wait);
  }

  /**
   * Adds many jobs of one queue in one statement, inside the caller's transaction; each may wait
   * until its own `startAfter`.
   */
  async enqueueMany<T extends object>(
    sql: Sql,
    name: string,
    jobs: { data: T; startAfter?: Date }[],
    options: { notify?: boolean } = {},
  ): Promise<void> {
    if (!this.#definitions.has(name)) throw new Error(`unknown job ${name}`);
    if (jobs.length === 0) return;
    await this.#boss.insert(
      name,
      jobs.map((j) => ({
        name,
        data: j.data,
        ...(j.startAfter ? { startAfter: j.startAfter.toISOString() } : {}),
      })),
      { db: bossDb(sql) },
    );
    if (options.notify !== false && jobs.some((j) => !j.startAfter)) {
      await sql.query('SELECT pg_notify($1, $2)', [JOB_CHANNEL, name]);
    }
  }

  /**
   * pg-boss's own INSERT that adds jobs of queue `name` from the JSON array parameter `$param`
   * (`[{ "data": … }]`), for a caller to run inside one of its statements (as a CTE) instead of a
   * statement of its own: a round trip less on the busiest paths. No NOTIFY: the caller calls
   * wake() once it committed.
   */
  insertStatement(name: string, param: number): string {
    const table = this.#tables.get(name);
    if (!table) throw new Error(`queue ${name} is not started`);
    return plans
      .insertJobs('pgboss', { table, name, returnId: false })
      .replace('$1::json', `$${param}::json`);
  }

  /** Stops fetching and waits up to timeoutMs for jobs in progress to finish. */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    for (const w of this.#wakes.values()) if (w.timer) clearTimeout(w.timer);
    this.#wakes.clear();
    await this.#unlisten?.();
    this.#unlisten = null;
    await this.#boss.stop({ graceful: true, wait: true, timeout: Math.max(timeoutMs, 1000), close: false });
    for (const d of this.#definitions.values()) await d.drain?.(timeoutMs);
  }
}
