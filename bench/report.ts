// The benchmarks' figures in one shape, for `npm run bench` (all.ts) to gather into one table. A
// script records its headline figures beside its human-readable output; the rows go to the file
// named by BENCH_RESULTS_FILE (one JSON object a line, appended synchronously, so a script that
// fails later keeps what it measured), and nowhere when it is unset: a script run alone prints
// what it always printed.
import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';

export interface Row {
  /** The script's name, as in `npm run bench:<name>`. */
  bench: string;
  figure: string;
  value: number;
  unit: string;
  /** The same work without the code under test, from the same run. */
  baseline: { name: string; value: number } | null;
  /** value ÷ baseline, or the script's own reading of it (e.g. a median of per-round ratios). */
  ratio: number | null;
  target: string | null;
  met: boolean | null;
  note?: string;
}

/** The running script's name: the rows of a script and of the servers it starts carry it. */
export const BENCH = basename(process.argv[1] ?? 'bench', '.ts');

export function record(
  row: Omit<Row, 'bench' | 'baseline' | 'ratio' | 'target' | 'met'> & Partial<Row>,
): void {
  const file = process.env.BENCH_RESULTS_FILE;
  if (!file) return;
  const baseline = row.baseline ?? null;
  const full: Row = {
    bench: BENCH,
    target: null,
    met: null,
    ...row,
    baseline,
    ratio: row.ratio ?? (baseline ? row.value / baseline.value : null),
  };
  appendFileSync(file, `${JSON.stringify(full)}\n`);
}

/** Why a script failed: the phase it was in and the cause (what all.ts prints at the end). */
export interface Failure {
  bench: string;
  phase: string;
  cause: string;
}

/** Records the script's failure beside its figures (a line `{"failure": …}`). */
export function recordFailure(phase: string, cause: string): void {
  const file = process.env.BENCH_RESULTS_FILE;
  if (!file) return;
  const failure: Failure = { bench: BENCH, phase, cause };
  appendFileSync(file, `${JSON.stringify({ failure })}\n`);
}
