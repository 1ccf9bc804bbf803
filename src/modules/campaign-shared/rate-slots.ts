// Rates per second held exactly across any number of processes: a row per (key, second) counts what
// was started in it, and a block of slots is taken by one atomic upsert that adds at most what is
// left below the rate, so two processes can never both take the last slot. Keys name what is
// paced: `voice:<account>` (calls per second of the plan), `voice-campaign:<id>`, `wa:<account>`
// (the WhatsApp number's throughput). What was not granted waits for a later second.
import type { Sql } from '../../kernel/database/db.ts';

/** Takes up to `want` slots of `key`'s second `now` at `perSecond`; answers how many it got (0 … want). */
export async function takeSlots(
  sql: Sql,
  key: string,
  now: Date,
  want: number,
  perSecond: number,
): Promise<number> {
  if (want <= 0 || perSecond <= 0) return 0;
  const second = Math.floor(now.getTime() / 1000);
  // On conflict the SET reads the row as it was (locked by the upsert): `granted` is what this take
  // added. The first take of a second inserts what it may.
  const { rows } = await sql.query<{ granted: number }>(
    `INSERT INTO rate_slots (key, second, used, granted) VALUES ($1, $2, least($3::int, $4::int), least($3::int, $4::int))
     ON CONFLICT (key, second) DO UPDATE
        SET used = least($4::int, rate_slots.used + $3::int),
            granted = least($4::int, rate_slots.used + $3::int) - rate_slots.used
      WHERE rate_slots.used < $4::int
     RETURNING granted`,
    [key, second, want, perSecond],
  );
  return rows[0]?.granted ?? 0;
}

/** Forgets the seconds gone by (kept a minute, for anyone reading them). */
export async function pruneSlots(sql: Sql, now: Date): Promise<void> {
  await sql.query('DELETE FROM rate_slots WHERE second < $1', [Math.floor(now.getTime() / 1000) - 60]);
}
