// The sandbox's delivery simulation: each job plays one status a provider would report (delivered,
// read, or failed for a test number) through applyStatus, like a real callback, then schedules the
// next one after its delay.
import type { SimulatedStatus } from '../../channels/sandbox/simulation.ts';
import type { Database } from '../../kernel/db.ts';
import type { EventOutbox } from '../../kernel/events.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs.ts';
import { applyStatus } from './status.ts';

export const SANDBOX_STATUS_JOB = 'messages.sandbox-status';

export interface SandboxStatusJob {
  accountId: string;
  messageId: string;
  step: SimulatedStatus;
  rest: SimulatedStatus[];
}

export function sandboxStatusJob(d: {
  db: Database;
  jobs: Jobs;
  events: EventOutbox;
  now: () => Date;
}): JobDefinition<SandboxStatusJob> {
  return {
    name: SANDBOX_STATUS_JOB,
    batchSize: 20,
    handle: async ({ accountId, messageId, step, rest }) => {
      await d.db.transaction(async (tx) => {
        const applied = await applyStatus(
          d,
          tx,
          { accountId, id: messageId },
          {
            status: step.status,
            at: d.now(),
            ...(step.error ? { error: step.error } : {}),
          },
        );
        const [next, ...after] = rest;
        if (!applied || !next) return;
        await d.jobs.enqueue(
          tx,
          SANDBOX_STATUS_JOB,
          { accountId, messageId, step: next, rest: after } satisfies SandboxStatusJob,
          next.afterMs > 0 ? { startAfter: new Date(Date.now() + next.afterMs) } : {},
        );
      });
    },
  };
}
