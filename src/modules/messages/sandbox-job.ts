// The sandbox's delivery simulation: the status callbacks a provider would send, played through
// applyStatuses like real ones. Steps due at once (a delay of 0) are applied in the transaction
// that reaches them; the rest wait in a job until their delay is over. One job carries every
// message of a batch that has the same steps ahead (they were handed over together, so they are
// due together): the queue costs the same for one message or a hundred.
import type { SimulatedStatus } from '../../channels/sandbox/simulation.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { applyStatuses, type TargetedChange } from './status.ts';

export const SANDBOX_STATUS_JOB = 'messages.sandbox-status';

export interface SimulatedMessage {
  accountId: string;
  messageId: string;
}

export interface SandboxStatusJob {
  messages: SimulatedMessage[];
  /** The steps still to play, the first one due when the job runs. */
  steps: SimulatedStatus[];
}

/** One message's steps due now (applied by the caller), then those still to schedule. */
export interface SandboxPlay extends SimulatedMessage {
  now: SimulatedStatus[];
  later: SimulatedStatus[];
}

/** Splits steps at the first one that waits (the first step itself is due now when `firstIsDue`). */
export function split(message: SimulatedMessage, steps: SimulatedStatus[], firstIsDue: boolean): SandboxPlay {
  let due = 0;
  while (due < steps.length && ((firstIsDue && due === 0) || steps[due]!.afterMs === 0)) due++;
  return { ...message, now: steps.slice(0, due), later: steps.slice(due) };
}

export function changesOf(play: SandboxPlay, at: Date): TargetedChange[] {
  return play.now.map((step) => ({
    target: { accountId: play.accountId, id: play.messageId },
    change: { status: step.status, at, ...(step.error ? { error: step.error } : {}) },
  }));
}

/** Schedules what remains of the plays: one job per distinct list of steps ahead. */
export async function scheduleLater(jobs: Jobs, tx: Tx, plays: SandboxPlay[]): Promise<void> {
  const groups = new Map<string, SandboxStatusJob>();
  for (const p of plays) {
    if (p.later.length === 0) continue;
    const key = JSON.stringify(p.later);
    const group = groups.get(key) ?? { messages: [], steps: p.later };
    group.messages.push({ accountId: p.accountId, messageId: p.messageId });
    groups.set(key, group);
  }
  await jobs.enqueueMany(
    tx,
    SANDBOX_STATUS_JOB,
    [...groups.values()].map((data) => ({ data, startAfter: new Date(Date.now() + data.steps[0]!.afterMs) })),
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
      const plays = jobs.flatMap((j) => j.messages.map((m) => split(m, j.steps, true)));
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
    batchSize: 20,
    handle: (job) => play([job]),
    handleBatch: (jobs) => play(jobs.map((j) => j.data)),
  };
}
