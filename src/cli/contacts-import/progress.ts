// Progress on stderr: a bar on a terminal, a line per chunk otherwise.
import cliProgress from 'cli-progress';
import type { Chunk, ChunkTally } from './chunks.ts';

export interface Totals {
  rows: number;
  created: number;
  updated: number;
  failed: number;
  jobs: number;
}

export interface Progress {
  chunkDone(chunk: Chunk, tally: ChunkTally, totals: Totals): void;
  /** A request is waited out (shown only without a bar, which the line would break). */
  retrying(message: string): void;
  stop(): void;
}

const rowsDone = (t: Totals) => t.created + t.updated + t.failed;

export function barProgress(stream: NodeJS.WriteStream, totalBytes: number): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format:
        ' {bar} {percentage}% | {rows} rows done | {created} created, {updated} updated, {failed} failed | ETA {eta_formatted}',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(totalBytes, 1), 0, { rows: 0, created: 0, updated: 0, failed: 0 });
  return {
    chunkDone: (chunk, _tally, totals) => bar.update(chunk.endByte, { ...totals, rows: rowsDone(totals) }),
    retrying: () => {},
    stop: () => bar.stop(),
  };
}

export function lineProgress(stream: NodeJS.WritableStream): Progress {
  return {
    chunkDone: (chunk, tally, totals) => {
      const first = chunk.rows[0]?.line;
      const last = chunk.rows.at(-1)?.line;
      stream.write(
        `chunk ${chunk.number}: lines ${first}–${last}, ${chunk.rows.length} rows: ${tally.created} created, ` +
          `${tally.updated} updated, ${tally.rejects.length} failed (${tally.jobIds.join(', ') || 'no job'}); ` +
          `${rowsDone(totals)} rows done\n`,
      );
    },
    retrying: (message) => stream.write(`${message}\n`),
    stop: () => {},
  };
}
