// The data of bench:lists, loaded through SQL: contacts, messages and conversations, each with
// BENCH_LISTS_ROWS rows in the table, BENCH_LISTS_ACCOUNT_ROWS of them in the measured account.
// Rows are numbered g = 1..rows in time order and their ids are real TypeIDs of that time (what
// idAt() and the cursors rely on), so the tenants interleave as they do in production: the
// measured account's rows are spread evenly among the other tenants' rows, and the last
// BENCH_LISTS_NEWEST rows all belong to one other tenant (a busy neighbour, newer than anything
// the measured account holds). The secondary indexes are dropped for the load and built again
// after it (far faster than growing them row by row), then the tables are vacuumed and analysed,
// and a checkpoint is taken.
import type pg from 'pg';

export interface Layout {
  /** Rows in each of the three tables. */
  rows: number;
  /** Of which the measured account holds these. */
  accountRows: number;
  /** The newest rows of each table, all another tenant's. */
  newest: number;
  /** Times span this many days, up to the load's start. */
  days: number;
  measured: string;
  neighbour: string;
  /** The other tenants, who share what is left. */
  others: string[];
}

/** Conversations of the measured account j < HOT_CONVERSATIONS hold its messages, ~20 each. */
export const HOT_CONVERSATIONS = 50_000;
/** The measured account's contacts k % PHONE_SPREAD hold its messages (about 10 each). */
export const PHONE_SPREAD = 100_000;
/** One contact in RARE_EVERY of the measured account has the tag `few` and the attribute plan=platinum. */
export const RARE_EVERY = 20_000;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** SQL spelling `value` (a bigint expression) as `n` Crockford base32 characters. */
const base32 = (value: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) => `substr('${ALPHABET}', (((${value}) >> ${5 * (n - 1 - i)}) & 31)::int + 1, 1)`,
  ).join(' || ');

/**
 * Helper functions of the load, in the bench database only: the time of row g, the g of the
 * measured account's k-th row (the rows are spread evenly: Bresenham), and the TypeID of a row: its
 * first 10 characters are the 48-bit millisecond time as in a UUIDv7, then 'f' (above idAt()'s
 * version and variant bits) and g in hex (hex digits are base32 ones), so that ids are unique and
 * sort by time.
 */
function functions(l: Layout, start: number): string {
  const span = l.days * 86_400_000;
  const shared = l.rows - l.newest;
  return `
    CREATE FUNCTION bench_ms(g bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT ${start - span}::bigint + g * ${Math.floor(span / l.rows)}::bigint $$;
    CREATE FUNCTION bench_at(g bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT to_timestamp(bench_ms(g) / 1000.0) $$;
    CREATE FUNCTION bench_g(k bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT ((k + 1) * ${shared}::bigint + ${l.accountRows - 1}) / ${l.accountRows} $$;
    CREATE FUNCTION bench_k(g bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN g <= ${shared} AND (g * ${l.accountRows}::bigint) / ${shared}
                              > ((g - 1) * ${l.accountRows}::bigint) / ${shared}
                        THEN (g * ${l.accountRows}::bigint) / ${shared} - 1 END $$;
    CREATE FUNCTION bench_id(prefix text, g bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT prefix || '_' || ${base32('bench_ms(g)', 10)} || 'f' || lpad(to_hex(g), 15, '0') $$;
    CREATE FUNCTION bench_owner(g bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN g > ${shared} THEN '${l.neighbour}'
                        WHEN bench_k(g) IS NOT NULL THEN '${l.measured}'
                        ELSE (ARRAY['${l.others.join("','")}'])[1 + g % ${l.others.length}] END $$;
    CREATE FUNCTION bench_phone(k bigint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT '+1415' || (2000000 + k)::text $$;`;
}

/** The phone of the measured account's k-th contact (bench_phone). */
export const phoneOf = (k: number) => `+1415${2_000_000 + k}`;

const CONTACTS = `
  INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out,
                        created_at, updated_at)
  SELECT bench_id('ctc', g), o, CASE WHEN k IS NULL THEN '+1' || lpad(g::text, 10, '0') ELSE bench_phone(k) END,
         CASE WHEN k IS NULL THEN 'Other ' || g
              ELSE (ARRAY['John','Mary','Ana','Li','Omar','Sofia','Ken','Zoe'])[1 + k % 8] || ' ' || substr(md5(k::text), 1, 10) END,
         CASE WHEN k IS NULL THEN NULL ELSE 'user' || k || '@example.com' END,
         CASE WHEN k IS NULL THEN CASE WHEN o = $1 THEN ARRAY['customer', 'few', 'many'] ELSE ARRAY['customer'] END
              ELSE ARRAY['customer'] || CASE WHEN k % 3 = 0 THEN ARRAY['many'] ELSE '{}' END
                                     || CASE WHEN k % ${RARE_EVERY} = 7 THEN ARRAY['few'] ELSE '{}' END END,
         CASE WHEN k IS NULL THEN '{}'::jsonb
              ELSE jsonb_build_object('plan', CASE WHEN k % ${RARE_EVERY} = 11 THEN 'platinum' ELSE 'tier' || k % 4 END,
                                      'code', 'c' || k) END,
         coalesce(k % 2 = 0, false), coalesce(k % 50 = 0, false), bench_at(g),
         -- 1 % of the account's contacts changed during the last day.
         CASE WHEN k % 100 = 0 THEN $2::timestamptz - (k % 86400) * interval '1 second' ELSE bench_at(g) END
    FROM (SELECT g, bench_owner(g) AS o, bench_k(g) AS k FROM generate_series(1, $3::bigint) g) s
   ORDER BY g`;

// The measured account's message k: to contact k % PHONE_SPREAD, in conversation k % HOT_CONVERSATIONS.
const MESSAGES = `
  INSERT INTO messages (id, account_id, contact_id, conversation_id, direction, type, phone, content, status,
                        provider, sandbox, created_at, updated_at, failed_at)
  SELECT bench_id('msg', g), o,
         CASE WHEN k IS NULL THEN NULL ELSE bench_id('ctc', bench_g(k % ${PHONE_SPREAD})) END,
         CASE WHEN k IS NULL THEN NULL ELSE bench_id('cnv', bench_g(k % ${HOT_CONVERSATIONS})) END,
         CASE WHEN k % 10 < 3 THEN 'inbound' ELSE 'outbound' END, 'text',
         CASE WHEN k IS NULL THEN '+1' || lpad((g % 1000000)::text, 10, '0') ELSE bench_phone(k % ${PHONE_SPREAD}) END,
         '{"text":{"body":"Hello from the benchmark"}}'::jsonb,
         -- The busy neighbour's newest messages are a queue not yet sent.
         CASE WHEN k IS NULL THEN CASE WHEN o = $1 THEN 'queued' ELSE 'delivered' END
              WHEN k % 10 < 3 THEN 'received' WHEN k % 50 = 3 THEN 'failed' WHEN k % 10 = 5 THEN 'sent'
              WHEN k % 10 IN (6, 7) THEN 'read' ELSE 'delivered' END,
         'sandbox', true, bench_at(g), bench_at(g), CASE WHEN k % 50 = 3 THEN bench_at(g) END
    FROM (SELECT g, bench_owner(g) AS o, bench_k(g) AS k FROM generate_series(1, $2::bigint) g) s
   ORDER BY g`;

// The measured account's conversation j: with contact j; 20 % open; a third unassigned, the rest
// with one of 7 members, and one in 10,000 with a rare one; last activity up to a day after it opened.
// The inbox's: each in one of 3 teams (the unassigned open ones are the teams' queues); a twentieth
// labelled `refund`, one in 2,000 `vip` too; one in 100 snoozed until tomorrow; four in five with an
// SLA due time in the next day.
const CONVERSATIONS = `
  INSERT INTO conversations (id, account_id, contact_id, phone, status, assignee_id, last_message_at,
                             last_message_id, opened_at, closed_at, created_at, updated_at,
                             team_id, labels, snoozed_until, sla_next_due_at)
  SELECT bench_id('cnv', g), o, CASE WHEN k IS NULL THEN 'ctc_other' || g ELSE bench_id('ctc', g) END,
         CASE WHEN k IS NULL THEN '+1' || lpad(g::text, 10, '0') ELSE bench_phone(k) END,
         CASE WHEN coalesce(k, g) % 5 = 0 THEN 'open' ELSE 'closed' END,
         CASE WHEN k IS NULL OR k % 3 = 0 THEN NULL WHEN k % 10000 = 1 THEN 'usr_rare'
              ELSE 'usr_member' || k % 7 END,
         least(bench_at(g) + (coalesce(k, g) * 7919 % 86400) * interval '1 second', $1::timestamptz),
         CASE WHEN k < ${HOT_CONVERSATIONS} THEN bench_id('msg', bench_g(k + ${HOT_CONVERSATIONS} * 19)) END,
         bench_at(g), CASE WHEN coalesce(k, g) % 5 <> 0 THEN bench_at(g) END, bench_at(g), bench_at(g),
         -- (The open ones are those of k % 5 = 0, their queues those of k % 15 = 0: the team and the
         -- labels are taken from what is left, so that every team has a queue and open ones carry each label.)
         'tem_bench' || (coalesce(k, g) / 15) % 3,
         CASE WHEN coalesce(k, g) % 2000 = 15 THEN '{vip,refund}' WHEN coalesce(k, g) % 20 = 5 THEN '{refund}'
              ELSE '{}' END::text[],
         CASE WHEN coalesce(k, g) % 100 = 10 THEN $1::timestamptz + interval '1 day' END,
         -- Four in five due somewhere in the next day (an SLA policy's), the rest without one.
         CASE WHEN coalesce(k, g) % 25 <> 0
              THEN $1::timestamptz + (coalesce(k, g) * 104729 % 86400) * interval '1 second' END
    FROM (SELECT g, bench_owner(g) AS o, bench_k(g) AS k FROM generate_series(1, $2::bigint) g) s
   ORDER BY g`;

/** Loads the three tables; answers the seconds each step took. */
export async function load(client: pg.Client, l: Layout, log: (line: string) => void): Promise<void> {
  const start = Date.now();
  await client.query(functions(l, start));
  await client.query(`SET maintenance_work_mem = '512MB'`);
  // Conversations' contact ids are the measured account's contacts of the same row: same layout.
  const tables = ['contacts', 'messages', 'conversations'];
  const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
      WHERE i.schemaname = 'public' AND i.tablename = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [tables],
  );
  for (const { indexname } of indexes) await client.query(`DROP INDEX ${indexname}`);
  const now = new Date(start);
  const step = async (name: string, sql: string, params: unknown[]) => {
    const t = performance.now();
    await client.query(sql, params);
    log(`  ${name}: ${((performance.now() - t) / 1000).toFixed(0)} s`);
  };
  await step(`${l.rows.toLocaleString('en')} contacts`, CONTACTS, [l.neighbour, now, l.rows]);
  await step(`${l.rows.toLocaleString('en')} messages`, MESSAGES, [l.neighbour, l.rows]);
  await step(`${l.rows.toLocaleString('en')} conversations`, CONVERSATIONS, [now, l.rows]);
  const t = performance.now();
  for (const { indexdef } of indexes) await client.query(indexdef);
  log(`  ${indexes.length} secondary indexes built again: ${((performance.now() - t) / 1000).toFixed(0)} s`);
  const v = performance.now();
  for (const table of tables) await client.query(`VACUUM (ANALYZE) ${table}`);
  log(`  VACUUM ANALYZE: ${((performance.now() - v) / 1000).toFixed(0)} s`);
  // The load wrote gigabytes of WAL: without a checkpoint now, the one it calls for runs during the
  // measurement, and its writes, not the lists, decide the p99s.
  await client.query('CHECKPOINT');
}
