// The hourly sync of templates from Meta (meta-sync.ts) for every active account on the WhatsApp
// Cloud API. Each process that runs workers sweeps once an hour (and a minute after it starts):
// one `templates.meta-sync` job per such account, keyed by the account and the clock hour, so that
// however many processes sweep (or restart), an account is synced at most once an hour. A job reads
// Meta and writes as POST /templates/sync does; Meta unreachable is retried by pg-boss, Meta refusing
// (a revoked token) is logged and waits for the next hour.
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import { type SyncServices, syncTemplates } from './meta-sync.ts';

export const TEMPLATE_SYNC_JOB = 'templates.meta-sync';
export const TEMPLATE_SYNC_EVERY_MS = 3600_000;
const FIRST_SWEEP_AFTER_MS = 60_000;

export interface TemplateSyncJobData {
  accountId: string;
}

export function templateSyncJob(
  deps: SyncServices & { log: FastifyBaseLogger },
): JobDefinition<TemplateSyncJobData> {
  return {
    name: TEMPLATE_SYNC_JOB,
    retryLimit: 3,
    retryDelaySeconds: 60,
    expireInSeconds: 600,
    handle: async ({ accountId }) => {
      try {
        const summary = await syncTemplates(deps, accountId, 'live');
        deps.log.info(
          { accountId, pages: summary.pages, created: summary.created, updated: summary.updated },
          'templates synced from Meta',
        );
      } catch (err) {
        // 503: Meta could not answer; pg-boss tries again. Anything else waits for the next hour.
        if (err instanceof ApiError && err.code !== 'SERVICE_UNAVAILABLE') {
          deps.log.warn({ accountId, code: err.code, reason: err.message }, 'template sync refused');
          return;
        }
        throw err;
      }
    },
  };
}

/** Enqueues this hour's sync of every active account on the WhatsApp Cloud API; answers how many are new. */
export async function scheduleTemplateSyncs(deps: { db: Database; jobs: Jobs }): Promise<number> {
  const { rows } = await deps.db.query<{ account_id: string }>(
    `SELECT c.account_id FROM account_channels c JOIN accounts a ON a.id = c.account_id
      WHERE c.provider = 'whatsapp_cloud' AND c.secrets_sealed IS NOT NULL AND a.status = 'ACTIVE'
      ORDER BY c.account_id`,
  );
  let added = 0;
  for (const { account_id: accountId } of rows) {
    const id = await deps.jobs.enqueue(
      deps.db,
      TEMPLATE_SYNC_JOB,
      { accountId },
      { singletonKey: accountId, singletonSeconds: TEMPLATE_SYNC_EVERY_MS / 1000 },
    );
    if (id) added++;
  }
  return added;
}

/** Sweeps a minute after start, then hourly; answers the function that stops it. */
export function startTemplateSyncs(deps: { db: Database; jobs: Jobs; log: FastifyBaseLogger }): () => void {
  const sweep = () =>
    void scheduleTemplateSyncs(deps).catch((err) =>
      deps.log.warn({ err }, 'could not schedule the hourly template sync'),
    );
  const first = setTimeout(sweep, FIRST_SWEEP_AFTER_MS).unref();
  const every = setInterval(sweep, TEMPLATE_SYNC_EVERY_MS).unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
