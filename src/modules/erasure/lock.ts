// The account's erasure lock: what keeps work in flight from writing a person again after their
// erasure (docs/history/issue-43.md, "Erasure against work in flight"). Background work that reads an
// account's contacts and writes about them in one transaction (automation's events and timed
// triggers, sequence steps, journey runs, campaign rounds, voice campaigns' calls, bulk imports)
// holds the lock shared until it commits; an erasure holds it alone, as its first lock. So such work
// either commits before the erasure begins (and is erased with the rest), or reads after it
// committed (and finds the contact gone, its rows and events erased). In READ COMMITTED every
// statement after the lock sees the erasure's commit; what was read before it must be read again.
//
// No deadlock: the erasure waits for the lock holding nothing yet; work waits for it only while it
// holds nothing an erasure locks (the rows it took are its own queue's, which no erasure touches),
// and work that already holds such rows (due enrollments, due runs) only tries, and leaves an
// account being erased for its next round. A transaction-scoped advisory lock (released at commit
// or rollback), keyed like the codebase's others; on PGlite's one connection it never waits.
import type { Sql } from '../../kernel/database/db.ts';

const KEY = `hashtextextended('erasure:' || a, 0)`;

/** Taken by an erasure before anything else: waits for the account's work in flight to commit. */
export async function lockForErasure(sql: Sql, accountId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(${KEY}) FROM (SELECT $1::text AS a) x`, [accountId]);
}

/**
 * Holds the accounts' erasure locks shared, waiting for an erasure under way to commit. Only for a
 * transaction that holds no lock an erasure takes (see above); in id order, so two never wait on
 * each other.
 */
export async function holdAgainstErasure(sql: Sql, accountIds: string[]): Promise<void> {
  const accounts = [...new Set(accountIds)].sort();
  if (accounts.length === 0) return;
  await sql.query(`SELECT pg_advisory_xact_lock_shared(${KEY}) FROM unnest($1::text[]) a`, [accounts]);
}

/**
 * Holds the accounts' erasure locks shared where no erasure is under way; answers those held. For
 * a transaction that already holds rows an erasure locks: the others' work is left for later.
 */
export async function tryHoldAgainstErasure(sql: Sql, accountIds: string[]): Promise<Set<string>> {
  const accounts = [...new Set(accountIds)].sort();
  if (accounts.length === 0) return new Set();
  const { rows } = await sql.query<{ a: string }>(
    `SELECT a FROM unnest($1::text[]) a WHERE pg_try_advisory_xact_lock_shared(${KEY})`,
    [accounts],
  );
  return new Set(rows.map((r) => r.a));
}
