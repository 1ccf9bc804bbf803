// The sandbox's delivery simulation: the status callbacks a provider would send, played through
// applyStatuses like real ones. Steps due at once (a delay of 0) are applied in the transaction
// that reaches them; each later one is a job that waits out its delay, then applies its step and
// any that follow at once, and schedules the next.
import type { SimulatedStatus } from '../../channels/sandbox/simulation.ts';
import type { Database, Tx } from '../../kernel/db.ts';
import type { EventOutbox } from '../../kernel/events.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs.ts';
import { applyStatuses, type TargetedChange } from './status.ts';

export const SANDBOX_STATUS_JOB = 'messages.sandbox-status';

export interface SandboxStatusJob {
  accountId: string;
  messageId: string;
  /** The steps still to play, the first one due when the job runs. */
  steps: SimulatedStatus[];
}

export interface SandboxPlay {
  accountId: string;
  messageId: string;
  /** Steps due now (applied by the caller), then those still to schedule. */
  now: SimulatedStatus[];
  later: SimulatedStatus[];
}

/** Splits steps at the first one that waits (the first step itself is due now when `firstIsDue`). */
export function split(
  accountId: string,
  messageId: string,
  steps: SimulatedStatus[],
  firstIsDue: boolean,
): SandboxPlay {
  let due = 0;
  while (due < steps.length && ((firstIsDue && due === 0) || steps[due]!.afterMs === 0)) due++;
  return { accountId, messageId, now: steps.slice(0, due), later: steps.slice(due) };
}

export function changesOf(play: SandboxPlay, at: Date): TargetedChange[] {
  return play.now.map((step) => ({
    target: { accountId: play.accountId, id: play.messageId },
    change: { status: step.status, at, ...(step.error ? { error: step.error } : {}) },
  }));
}

/** Schedules what remains of each play (in the caller's transaction). */
export async function scheduleLater(jobs: Jobs, tx: Tx, plays: SandboxPlay[]): Promise<void> {
  await jobs.enqueueMany(
    tx,
    SANDBOX_STATUS_JOB,
    plays
      .filter((p) => p.later.length > 0)
      .map((p) => ({
        data: { accountId: p.accountId, messageId: p.messageId, steps: p.later } satisfies SandboxStatusJob,
        startAfter: new Date(Date.now() + p.later[0]!.afterMs),
      })),
  );
}

export function sandboxStatusJob(d: {
  db: Database;
  jobs: Jobs;
  events: EventOutbox;
  now: () => Date;
}): JobDefinition<SandboxStatusJob> {
  const play = async (jobs: SandboxStatusJob[]) => {
    await d.db.transaction(async (tx) => {
      const plays = jobs.map((j) => split(j.accountId, j.messageId, j.steps, true));
      const at = d.now();
      const results = await applyStatuses(
        d,
        tx,
        plays.flatMap((p) => changesOf(p, at)),
      );
      // A message whose due step was moot (it failed meanwhile) plays no further.
      let i = 0;
      const going = plays.filter((p) => {
        const applied = results.slice(i, i + p.now.length).some((r) => r !== null);
        i += p.now.length;
        return applied;
      });
      await scheduleLater(d.jobs, tx, going);
    });
  };
  return {
    name: SANDBOX_STATUS_JOB,
    batchSize: 50,
    handle: (job) => play([job]),
    handleBatch: (jobs) => play(jobs.map((j) => j.data)),
  };
}
