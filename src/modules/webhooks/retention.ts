// Retention: events and finished deliveries (with their attempts) older than the retention period
// are deleted in small batches, so the tables stay the size of the window users can look back on.
// Pending deliveries are never deleted, nor the events they still need.
import { deleteInBatches, type Sql } from '../../kernel/database/db.ts';
import { idAt } from '../../kernel/values/ids.ts';

const BATCH = 5000;

export async function pruneOlderThan(
  sql: Sql,
  cutoff: Date,
): Promise<{ deliveries: number; events: number }> {
  // Ids sort by creation time: "made before the cutoff" is a primary-key range.
  const deliveries = await deleteInBatches(
    sql,
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT id FROM webhook_deliveries WHERE id < $1 AND status <> 'pending' LIMIT ${BATCH})`,
    [idAt('delivery', cutoff)],
    BATCH,
  );
  const events = await deleteInBatches(
    sql,
    `DELETE FROM events WHERE id IN (
       SELECT e.id FROM events e
        WHERE e.id < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
        LIMIT ${BATCH})`,
    [idAt('event', cutoff)],
    BATCH,
  );
  return { deliveries, events };
}
