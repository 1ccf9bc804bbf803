// Working a batch of rows in one transaction so that one bad row cannot hold up the others: the
// whole batch runs in one savepoint (the usual case, one pass); when it throws, the batch is undone
// and each row runs alone in a savepoint of its own, and a row that still throws is handed to
// `rowFailed` (inside the transaction, to put it aside). The sends the work accepted are added to
// `sent` only for the work that stood, so the dispatchers are woken for nothing rolled back.
import type { Tx } from '../../kernel/database/db.ts';
import type { SendResult } from '../messages/accept-batch.ts';

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
