// Load generation for the benchmarks: closed loops (N workers, each starting its next request when
// the last answers: the most the system can take) and an open loop (requests started on a fixed
// schedule whatever happens, latency counted from the scheduled start, so a stall is not hidden).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { BenchFailure, percentile, sleep, Unexpected } from './support.ts';

export interface LoadResult {
  count: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** Answers that were not what the work expects (non-2xx, or a thrown error). */
  failures: number;
  firstFailure: string | null;
  /** The failures by status and error code (work that answers `answerOf(…)` strings). */
  unexpected?: Unexpected;
  /**
   * Open loop only: each request's scheduled start (Date.now() scale, ms), latency (ms) and how
   * late the generator itself started it (ms).
   */
  timeline?: { at: number; ms: number; late: number }[];
  /** Open loop only: the generator's event loop, late by up to this much (ms; its own pauses). */
  loopDelayMax?: number;
}

/** One unit of work; answers whether it succeeded (or a description of how it failed). */
export type Work = (i: number) => Promise<true | string>;

/** The figures of a run from its latencies (ms, any order). */
export function result(
  latencies: number[],
  seconds: number,
  failures: number,
  firstFailure: string | null,
): LoadResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    seconds,
    perSecond: sorted.length / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
    failures,
    firstFailure,
  };
}

/** `concurrency` workers run `work` back to back for `seconds`. */
export async function closedLoop(concurrency: number, seconds: number, work: Work): Promise<LoadResult> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const unexpected = new Unexpected();
  let counter = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const ok = await work(counter++).catch((err: Error) => err.message);
        latencies.push(performance.now() - t0);
        if (ok !== true) {
          failures++;
          firstFailure ??= ok;
          unexpected.add(ok);
        }
      }
    }),
  );
  return { ...result(latencies, (performance.now() - started) / 1000, failures, firstFailure), unexpected };
}

/** Starts `work` `rate` times a second for `seconds`; latency counts from each scheduled start. */
export async function openLoop(rate: number, seconds: number, work: Work): Promise<LoadResult> {
  const latencies: number[] = [];
  const timeline: { at: number; ms: number; late: number }[] = [];
  let failures = 0;
  let firstFailure: string | null = null;
  const unexpected = new Unexpected();
  const total = Math.round(rate * seconds);
  // A pause of the generator's own (a GC, say) delays every request due meanwhile: counted, so
  // that it is not taken for the server's.
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const late = performance.now() - due;
    pending.push(
      work(i)
        .catch((err: Error) => err.message)
        .then((ok) => {
          latencies.push(performance.now() - due);
          timeline.push({ at: performance.timeOrigin + due, ms: performance.now() - due, late });
          if (ok !== true) {
            failures++;
            firstFailure ??= ok;
            unexpected.add(ok);
          }
        }),
    );
  }
  await Promise.all(pending);
  loop.disable();
  return {
    ...result(latencies, seconds, failures, firstFailure),
    timeline,
    loopDelayMax: loop.max / 1e6,
    unexpected,
  };
}

/** Fails the bench, naming `where` and the answers, when any of the run's work failed. */
export function expectNoFailures(where: string, r: LoadResult): void {
  if (r.failures === 0) return;
  if (r.unexpected) r.unexpected.check(where, r.count);
  throw new BenchFailure(`${r.failures} of ${r.count} failed (first: ${r.firstFailure})`, where);
}

export function describe(r: LoadResult): string {
  const failed = r.failures ? `, ${r.failures} failed (first: ${r.firstFailure})` : '';
  return `${r.perSecond.toFixed(0).padStart(6)}/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms  max ${r.max.toFixed(1)} ms  (${r.count} in ${r.seconds.toFixed(1)} s${failed})`;
}
