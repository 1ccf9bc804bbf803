// The hourly retention prune (policies.ts says what goes and what stays). Each process that runs
// workers sends a `retention.prune` job once an hour (and a minute after it starts), keyed by the
// clock hour, so however many processes run, one of them prunes each hour. The job deletes table by
// table in batches of policies.BATCH rows, each batch its own statement; a failure is retried by
// pg-boss, and what was deleted before it stays deleted (a prune is safe to run again at any time).
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import { type Database, deleteInBatches } from '../../kernel/database/db.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { Metrics } from '../../kernel/observability/metrics.ts';
import { BATCH, POLICIES, paramsOf } from './policies.ts';

export const RETENTION_JOB = 'retention.prune';
const EVERY_MS = 3600_000;
const FIRST_AFTER_MS = 60_000;
const DAY_MS = 24 * 3600_000;

export interface RetentionDeps {
  db: Database;
  config: Config;
  metrics: Metrics;
  now: () => Date;
  log: FastifyBaseLogger;
}

export class RetentionPruner {
  readonly #d: RetentionDeps;

  constructor(deps: RetentionDeps) {
    this.#d = deps;
  }

  /** Deletes what every policy says is past its retention; answers the rows deleted per table. */
  async prune(): Promise<Record<string, number>> {
    const { db, config, metrics, now, log } = this.#d;
    const deleted: Record<string, number> = {};
    for (const policy of POLICIES) {
      const days = policy.days(config);
      if (days === null) continue;
      const cutoff = new Date(now().getTime() - days * DAY_MS);
      const n = await deleteInBatches(db, policy.sql, paramsOf(policy, cutoff), BATCH);
      deleted[policy.table] = n;
      if (n > 0) metrics.retentionDeleted.inc({ table: policy.table }, n);
    }
    if (Object.values(deleted).some((n) => n > 0)) log.info({ deleted }, 'pruned rows past their retention');
    return deleted;
  }

  job(): JobDefinition<Record<string, never>> {
    return {
      name: RETENTION_JOB,
      retryLimit: 3,
      retryDelaySeconds: 300,
      expireInSeconds: 3600,
      handle: async () => {
        await this.prune();
      },
    };
  }
}

/** Sends this hour's prune (once per clock hour, whoever sends it); answers whether it was new. */
export async function schedulePrune(deps: { db: Database; jobs: Jobs }): Promise<boolean> {
  const id = await deps.jobs.enqueue(
    deps.db,
    RETENTION_JOB,
    {},
    { singletonKey: RETENTION_JOB, singletonSeconds: EVERY_MS / 1000 },
  );
  return id !== null;
}

/** Sends a prune a minute after start, then hourly; answers the function that stops it. */
export function startRetention(deps: { db: Database; jobs: Jobs; log: FastifyBaseLogger }): () => void {
  const send = () =>
    void schedulePrune(deps).catch((err) => deps.log.warn({ err }, 'could not schedule the retention prune'));
  const first = setTimeout(send, FIRST_AFTER_MS).unref();
  const every = setInterval(send, EVERY_MS).unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
