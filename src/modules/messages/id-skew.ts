// How far apart a message's id time and its created_at may be (migrations/033), so that the
// list's time filters can bound by id the walk of the account's rows, and stay exact.
//
// created_at is the clock of the request or job that stores the message (the services' `now`,
// which tests move); the id is a UUIDv7 of the process's clock, made a little later. For every
// stored message, with d = (the id's millisecond) − floor(created_at in ms):
//   -behind_ms ≤ d ≤ ahead_ms.
// So created_at < X (X in whole ms) gives id < idAt(X + ahead_ms), and created_at > A gives
// id ≥ idAt(A − behind_ms). Every statement that stores messages raises the two bounds first when
// its rows go further, in the same transaction: a list never sees a row outside the bounds it read.
// Real clocks keep them at their start (a minute ahead, nothing behind); raising is then a row
// read and no write.
import type { Sql } from '../../kernel/database/db.ts';
import { timeOfId } from '../../kernel/values/ids.ts';

export interface IdSkew {
  aheadMs: number;
  behindMs: number;
}

/** The skew of messages stored with the ids `ids` and the created_at `createdAt`. */
export function skewOf(ids: string[], createdAt: Date): IdSkew {
  const at = createdAt.getTime();
  let aheadMs = 0;
  let behindMs = 0;
  for (const id of ids) {
    const d = timeOfId(id).getTime() - at;
    if (d > aheadMs) aheadMs = d;
    if (-d > behindMs) behindMs = -d;
  }
  return { aheadMs, behindMs };
}

/**
 * The statement raising the bounds to `ahead` and `behind` (parameter references): it writes, and
 * locks the row, only when one of them goes further than the row says.
 */
export function raiseSkewSql(ahead: string, behind: string): string {
  return `UPDATE message_id_skew
             SET ahead_ms = greatest(ahead_ms, ${ahead}::bigint), behind_ms = greatest(behind_ms, ${behind}::bigint)
           WHERE ahead_ms < ${ahead}::bigint OR behind_ms < ${behind}::bigint`;
}

export async function readIdSkew(sql: Sql): Promise<IdSkew> {
  const { rows } = await sql.query<{ ahead_ms: number; behind_ms: number }>(
    'SELECT ahead_ms, behind_ms FROM message_id_skew',
  );
  const row = rows[0];
  if (!row) throw new Error('message_id_skew has no row (migrations/033)');
  return { aheadMs: Number(row.ahead_ms), behindMs: Number(row.behind_ms) };
}
