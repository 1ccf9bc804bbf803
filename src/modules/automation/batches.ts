// Working a batch of rows in one transaction so that one bad row cannot hold up the others: the
// whole batch runs in one savepoint (the usual case, one pass); when it throws, the batch is undone
// and each row runs alone in a savepoint of its own, and a row that still throws is handed to
// `rowFailed` (inside the transaction, to put it aside). The sends the work accepted are added to
// `sent` only for the work that stood, so the dispatchers are woken for nothing rolled back.
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Tx } from '../../kernel/database/db.ts';
import { tryHoldAgainstErasure } from '../erasure/index.ts';
import type { SendResult } from '../messages/index.ts';

export async function batchOrOneByOne<R>(
  tx: Tx,
  rows: R[],
  work: (rows: R[], sent: SendResult[]) => Promise<void>,
  sent: SendResult[],
  on: { batchFailed: (err: unknown) => void; rowFailed: (row: R, err: unknown) => Promise<void> },
): Promise<void> {
  const batch: SendResult[] = [];
  await tx.query('SAVEPOINT automation_batch');
  try {
    await work(rows, batch);
    await tx.query('RELEASE SAVEPOINT automation_batch');
    sent.push(...batch);
    return;
  } catch (err) {
    await tx.query('ROLLBACK TO SAVEPOINT automation_batch');
    on.batchFailed(err);
  }
  for (const row of rows) {
    const own: SendResult[] = [];
    await tx.query('SAVEPOINT automation_row');
    try {
      await work([row], own);
      await tx.query('RELEASE SAVEPOINT automation_row');
      sent.push(...own);
    } catch (err) {
      await tx.query('ROLLBACK TO SAVEPOINT automation_row');
      await on.rowFailed(row, err);
    }
  }
}

/** What a timer of due rows (sequences' steps, journeys' runs) gives `runDueBatch`. */
export interface DueWork<R extends { id: string; account_id: string }> {
  /** Takes the due rows, locked: `$1` the time now, `$2` the limit. */
  dueSql: string;
  /** Works a batch of them in the transaction; the sends it accepts go in `into`. */
  work: (tx: Tx, rows: R[], now: Date, into: SendResult[]) => Promise<void>;
  /** Puts a row that failed alone aside until `at`. */
  putBack: (tx: Tx, id: string, at: Date) => Promise<void>;
  log: {
    batchFailed: string;
    rowFailed: string;
    /** The log field naming a row that failed (`enrollmentId`, `runId`). */
    idField: string;
  };
}

/**
 * Works up to `limit` due rows in one transaction; answers how many were taken. Their contacts are
 * read after the take (erasure/lock.ts): an account being erased waits for the next look, its rows
 * untouched (the erasure ends them), and counts as no backlog. A batch that throws is taken one
 * row at a time (batchOrOneByOne); a row that still throws is put back for a minute. The accepted
 * sends are added to `sent` (for the dispatchers, woken after commit).
 */
export async function runDueBatch<R extends { id: string; account_id: string }>(
  s: { db: Database; now: () => Date },
  sent: SendResult[],
  log: FastifyBaseLogger,
  limit: number,
  due: DueWork<R>,
): Promise<number> {
  return s.db.transaction(async (tx) => {
    const now = s.now();
    const { rows: taken } = await tx.query<R>(due.dueSql, [now, limit]);
    if (taken.length === 0) return 0;
    const held = await tryHoldAgainstErasure(
      tx,
      taken.map((r) => r.account_id),
    );
    const rows = taken.filter((r) => held.has(r.account_id));
    if (rows.length === 0) return 0;
    await batchOrOneByOne(tx, rows, (batch, into) => due.work(tx, batch, now, into), sent, {
      batchFailed: (err) => log.warn({ err }, due.log.batchFailed),
      rowFailed: async (row, err) => {
        log.error({ err, [due.log.idField]: row.id }, due.log.rowFailed);
        await due.putBack(tx, row.id, new Date(now.getTime() + 60_000));
      },
    });
    return rows.length;
  });
}
