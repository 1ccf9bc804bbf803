// Micro-benchmark: what checking the open event streams' callers costs a process on PostgreSQL
// (src/modules/events/hub.ts): the hub's one check of N streams (a statement each for their keys,
// sessions and accounts, `= ANY` over the ids) beside what checking each stream on its own would
// cost (a statement per stream for its key). Not part of `npm run bench`.
//   node bench/stream-checks-cost.ts      (BENCH_DATABASE_URL as for the other benchmarks)
// Median of 21 checks for each N; the hub checks every 250 ms.
import { Authenticator } from '../src/kernel/access/auth.ts';
import { ConsoleSessions } from '../src/kernel/access/console-principal.ts';
import { openPostgres } from '../src/kernel/database/db.ts';
import { migrate } from '../src/kernel/database/migrate.ts';
import { CHECK_MS } from '../src/modules/events/hub.ts';
import { benchDatabase } from './support.ts';

const MAX = 10_000;
const database = await benchDatabase();
const db = await openPostgres(database.url, 4);
try {
  await migrate(db);
  await db.query(`INSERT INTO partners (id, name) VALUES ('ptn_bench', 'bench')`);
  await db.query(`INSERT INTO accounts (id, partner_id, name, country_code, plan_code)
    SELECT 'acc_' || i, 'ptn_bench', 'a', 'US', 'scale' FROM generate_series(1, ${MAX}) i`);
  await db.query(`INSERT INTO api_keys (id, account_id, scope, name, key_hash, last_four)
    SELECT 'key_' || i, 'acc_' || i, 'live', 'k', md5(i::text), '0000' FROM generate_series(1, ${MAX}) i`);
  await db.query(`INSERT INTO console_users (id, email, name, password_hash, kind, partner_id, created_at)
    SELECT 'usr_' || i, i || '@bench.test', 'u', 'h', 'partner_admin', 'ptn_bench', now()
      FROM generate_series(1, ${MAX}) i`);
  await db.query(`INSERT INTO console_sessions (id, user_id, token_hash, csrf_token, created_at, last_seen_at, expires_at)
    SELECT 'ses_' || i, 'usr_' || i, md5('s' || i), 'c', now(), now(), now() + interval '1 day'
      FROM generate_series(1, ${MAX}) i`);
  await db.query('ANALYZE');
  const auth = new Authenticator(db, 'tdg_');
  const sessions = new ConsoleSessions(db, 60);
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
  const median = async (run: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const started = performance.now();
      await run();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[10]!;
  };
  for (const n of [1, 100, 1000, 10_000]) {
    const hub = await median(() => {
      const now = new Date();
      return Promise.all([
        auth.liveKeys(ids('key_', n), now),
        sessions.liveRoles(ids('ses_', n), now),
        auth.activeAccounts(ids('acc_', n)),
      ]);
    });
    const each = await median(async () => {
      for (const id of ids('key_', n)) await auth.liveKeys([id], new Date());
    });
    console.log(
      `${String(n).padStart(6)} streams: the hub's check ${hub.toFixed(1)} ms (${((hub / CHECK_MS) * 100).toFixed(1)}% of its ${CHECK_MS} ms period); a statement per stream ${each.toFixed(1)} ms`,
    );
  }
} finally {
  await db.close();
  await database.drop();
}
