// The monthly call count, kept off the request path (docs/decisions.md § Limits).
//
// Rules:
// - Every admitted call is counted, once, in `api_usage_monthly` (the month, what the quota is
//   checked against) and `api_usage_daily` (reports). The process counts calls in memory and writes
//   them in batches: one statement every flush interval for every account it served, and at close.
// - A plan with a quota takes its calls from the database in leases. One statement reserves a block
//   (`leased`) only while `calls + leased + block ≤ quota`, so all processes together never admit a
//   call past the quota. The block is 1/64 of what remains (at most MAX_BLOCK), shrinking to a single
//   call, the exact per-call count, as the month runs out. A flush turns the lease's used calls into
//   `calls`; a lease unused for a whole flush interval goes back. A process that dies holding a lease
//   takes its unused part with it: the month then stops short by that part, never past the quota.
// - Reads of usage go through `read`: it waits for a flush under way, holds the next one back while
//   it reads, and adds what this process has counted but not yet written. Other processes' calls
//   show once they flush (within an interval).
// - The month's count of a plan without a quota (GET /account) is kept in the process: read once
//   (through `read`), then this process's calls added as they are admitted, and read again in the
//   background once a second for the other processes' calls. This process's own calls show at once.

import type { Maybe } from '../async/maybe.ts';
import type { Sql } from '../database/db.ts';

/** The largest block one lease takes: a busy process leases about once every MAX_BLOCK calls. */
export const MAX_BLOCK = 1000;
/** A lease takes 1/BLOCK_DIVISOR of what remains of the month's quota. */
export const BLOCK_DIVISOR = 64;
/** How old the other processes' part of a month's count (GET /account) may grow. */
const MONTH_READ_MS = 1000;

export interface Admission {
  allowed: boolean;
  limit: number | null;
  /** The month's count this call saw (this call included), for quota plans; null otherwise. */
  used: number | null;
}

interface Lease {
  limit: number;
  /** Calls of the block not yet admitted. */
  left: number;
  /** The month's calls and leases of every process, as of the lease, this block included. */
  total: number;
  /** Admitted from this lease since the last flush (turned from `leased` into `calls` then). */
  usedSinceFlush: number;
}

/** Counts waiting to be written: served calls per account and day, leases to release. */
interface Unwritten {
  days: Map<string, number>;
  /** Calls taken from leases, and unused lease calls given back: both leave `leased`. */
  release: Map<string, number>;
}

// The UTC day and month of a time, kept for the day they name: every admitted call asks for them,
// and formatting a date each time cost 3 % of a GET /account's CPU.
const DAY_MS = 86_400_000;
let dayStart = 0;
let dayEnd = -1;
let dayText = '';
let monthText = '';

function utcDay(now: Date): void {
  const t = now.getTime();
  if (t >= dayStart && t < dayEnd) return;
  dayStart = t - (((t % DAY_MS) + DAY_MS) % DAY_MS);
  dayEnd = dayStart + DAY_MS;
  dayText = new Date(dayStart).toISOString().slice(0, 10);
  monthText = dayText.slice(0, 7);
}

/** The calendar month (UTC) a time falls in, as YYYY-MM: the period a quota counts in. */
export function usagePeriod(now: Date): string {
  utcDay(now);
  return monthText;
}

/**
 * The month's calls and leases of every process as written (what the quota is checked against):
 * the headers of a refused call when this process holds no lease.
 */
export async function monthTotal(sql: Sql, accountId: string, now: Date): Promise<number> {
  const { rows } = await sql.query<{ total: number }>(
    'SELECT calls + leased AS total FROM api_usage_monthly WHERE account_id = $1 AND period = $2',
    [accountId, usagePeriod(now)],
  );
  return rows[0]?.total ?? 0;
}

const dayOf = (now: Date) => {
  utcDay(now);
  return dayText;
};

export class UsageMeter {
  readonly #sql: Sql;
  readonly #leases = new Map<string, Lease>();
  readonly #taking = new Map<string, Promise<boolean>>();
  /** `account|day` → calls served and not yet written. */
  #days = new Map<string, number>();
  /** `account|period` → lease calls to release from `leased`. */
  #release = new Map<string, number>();
  #flushing: Promise<void> | null = null;
  #readers = 0;
  #readersDone: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** `account|period` → the month's calls as last read, and this process's calls since. */
  readonly #months = new Map<string, { calls: number; readAt: number; reading: Promise<void> | null }>();
  #onError: (err: unknown) => void;

  constructor(sql: Sql, options: { flushMs: number; onError: (err: unknown) => void }) {
    this.#sql = sql;
    this.#onError = options.onError;
    if (options.flushMs > 0) {
      this.#timer = setInterval(() => {
        this.flush().catch(this.#onError);
      }, options.flushMs);
      this.#timer.unref();
    }
  }

  /**
   * Admits one call of `accountId` against `limit` (null: no quota), counting it when admitted: at
   * once (no promise) without a quota or from a lease in hand, which is nearly every call.
   */
  admit(accountId: string, limit: number | null, now: Date): Maybe<Admission> {
    if (limit === null) {
      this.#count(accountId, now);
      return { allowed: true, limit, used: null };
    }
    return (
      this.#fromLease(`${accountId}|${usagePeriod(now)}`, accountId, limit, now) ??
      this.#admitWaiting(accountId, limit, now)
    );
  }

  /** The call admitted from the lease in hand, or null when there is none with calls left. */
  #fromLease(key: string, accountId: string, limit: number, now: Date): Admission | null {
    const lease = this.#leases.get(key);
    if (!lease || lease.left <= 0 || lease.limit !== limit) return null;
    lease.left--;
    lease.usedSinceFlush++;
    this.#count(accountId, now);
    return { allowed: true, limit, used: lease.total - lease.left };
  }

  async #admitWaiting(accountId: string, limit: number, now: Date): Promise<Admission> {
    const period = usagePeriod(now);
    const key = `${accountId}|${period}`;
    for (;;) {
      const admitted = this.#fromLease(key, accountId, limit, now);
      if (admitted) return admitted;
      const lease = this.#leases.get(key);
      if (lease) this.#retire(key, lease);
      // One lease statement at a time per account: concurrent calls wait for it, then try again.
      let taking = this.#taking.get(key);
      if (!taking) {
        taking = this.#take(accountId, period, limit).finally(() => this.#taking.delete(key));
        this.#taking.set(key, taking);
      }
      // Refused only when the database had nothing left; a block granted but used up by the other
      // waiters sends this call round again for the next one.
      if (!(await taking)) return { allowed: false, limit, used: limit };
    }
  }

  /** The month's count this process last saw for a quota plan (refused calls' headers), if any. */
  lastSeen(accountId: string, now: Date): number | null {
    const lease = this.#leases.get(`${accountId}|${usagePeriod(now)}`);
    return lease ? lease.total - lease.left : null;
  }

  /**
   * Runs a read of usage with what this process has not yet written: `unwritten(accountId)` gives
   * its calls by day (YYYY-MM-DD). No flush runs during the read, so nothing is counted twice.
   */
  async read<T>(work: (unwritten: (accountId: string) => Map<string, number>) => Promise<T>): Promise<T> {
    while (this.#flushing) await this.#flushing;
    this.#readers++;
    try {
      return await work((accountId) => {
        const days = new Map<string, number>();
        for (const [key, calls] of this.#days) {
          const [account, day] = key.split('|') as [string, string];
          if (account === accountId) days.set(day, calls);
        }
        return days;
      });
    } finally {
      this.#readers--;
      if (this.#readers === 0) this.#readersDone?.();
    }
  }

  /** Writes what was counted and gives back idle leases; at close, every lease. */
  flush(options: { all?: boolean } = {}): Promise<void> {
    if (this.#flushing) {
      // One flush at a time; a final one (all) runs after the one under way.
      return options.all ? this.#flushing.then(() => this.flush(options)) : this.#flushing;
    }
    this.#flushing = this.#write(options.all ?? false).finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await Promise.allSettled(this.#taking.values());
    await this.flush({ all: true });
  }

  #count(accountId: string, now: Date): void {
    const day = dayOf(now);
    const key = `${accountId}|${day}`;
    this.#days.set(key, (this.#days.get(key) ?? 0) + 1);
    const month = this.#months.get(`${accountId}|${usagePeriod(now)}`);
    if (month) month.calls++;
  }

  /**
   * The month's calls of an account (this call included when it was admitted): this process's at
   * once, the others' as of a read at most about a second old.
   */
  async monthCalls(accountId: string, now: Date): Promise<number> {
    const period = usagePeriod(now);
    const key = `${accountId}|${period}`;
    let month = this.#months.get(key);
    if (!month) {
      if (this.#months.size >= 100_000) this.#months.clear();
      month = { calls: 0, readAt: 0, reading: null };
      this.#months.set(key, month);
      await this.#readMonth(accountId, period, month);
    } else if (month.reading) {
      if (month.readAt === 0) await month.reading;
    } else if (Date.now() - month.readAt >= MONTH_READ_MS) {
      // Served as it stands while the other processes' calls are read again.
      void this.#readMonth(accountId, period, month).catch(this.#onError);
    }
    return month.calls;
  }

  #readMonth(
    accountId: string,
    period: string,
    month: { calls: number; readAt: number; reading: Promise<void> | null },
  ): Promise<void> {
    month.reading = this.read(async (unwritten) => {
      const { rows } = await this.#sql.query<{ calls: number }>(
        'SELECT calls FROM api_usage_monthly WHERE account_id = $1 AND period = $2',
        [accountId, period],
        { prepared: 'usage_month_calls' },
      );
      // No flush ran since the read began (read holds them back): written plus unwritten is every
      // call this process counted, and those of the others as written.
      let calls = rows[0]?.calls ?? 0;
      for (const [day, more] of unwritten(accountId)) if (day.startsWith(period)) calls += more;
      month.calls = calls;
      month.readAt = Date.now();
    }).finally(() => {
      month.reading = null;
    });
    return month.reading;
  }

  // A lease leaving use: the calls it admitted since the last flush and its unused rest leave
  // `leased` at the next flush (the admitted ones become `calls` then, through #days).
  #retire(key: string, lease: Lease): void {
    this.#leases.delete(key);
    this.#releaseLater(key, lease.usedSinceFlush + lease.left);
  }

  #releaseLater(key: string, calls: number): void {
    if (calls > 0) this.#release.set(key, (this.#release.get(key) ?? 0) + calls);
  }

  /** Takes a lease; false when the month's quota has nothing left. */
  async #take(accountId: string, period: string, limit: number): Promise<boolean> {
    // A single statement: the block is computed from the row as it is when locked, and kept in
    // last_grant so that the answer says how much was granted.
    const { rows } = await this.#sql.query<{ calls: number; leased: number; last_grant: number }>(
      `INSERT INTO api_usage_monthly AS m (account_id, period, calls, leased, last_grant)
       SELECT $1, $2, 0, g, g FROM (SELECT LEAST($3::bigint, GREATEST(1, $4::bigint / $5)) AS g) x
        WHERE $4::bigint > 0
       ON CONFLICT (account_id, period) DO UPDATE
         SET leased = m.leased + LEAST($3::bigint, GREATEST(1, ($4::bigint - m.calls - m.leased) / $5)),
             last_grant = LEAST($3::bigint, GREATEST(1, ($4::bigint - m.calls - m.leased) / $5))
         WHERE m.calls + m.leased < $4::bigint
       RETURNING calls, leased, last_grant`,
      [accountId, period, MAX_BLOCK, limit, BLOCK_DIVISOR],
      { prepared: 'usage_lease' },
    );
    const row = rows[0];
    if (!row) return false;
    this.#leases.set(`${accountId}|${period}`, {
      limit,
      left: row.last_grant,
      total: row.calls + row.leased,
      usedSinceFlush: 0,
    });
    return true;
  }

  async #write(all: boolean): Promise<void> {
    while (this.#readers > 0) {
      await new Promise<void>((resolve) => {
        this.#readersDone = resolve;
      });
    }
    this.#readersDone = null;
    for (const [key, lease] of this.#leases) {
      if (all || lease.usedSinceFlush === 0) this.#retire(key, lease);
      else {
        this.#releaseLater(key, lease.usedSinceFlush);
        lease.usedSinceFlush = 0;
      }
    }
    const batch: Unwritten = { days: this.#days, release: this.#release };
    if (batch.days.size === 0 && batch.release.size === 0) return;
    this.#days = new Map();
    this.#release = new Map();
    try {
      await writeUsage(this.#sql, batch);
    } catch (err) {
      // Kept for the next flush: nothing counted is lost while the database is away.
      for (const [key, calls] of batch.days) this.#days.set(key, (this.#days.get(key) ?? 0) + calls);
      for (const [key, calls] of batch.release) this.#releaseLater(key, calls);
      throw err;
    }
  }
}

/**
 * One statement for a batch: months first, then days (day rows wait on month rows), each in account
 * order, so two processes' batches never wait on each other in a cycle.
 */
async function writeUsage(sql: Sql, batch: Unwritten): Promise<void> {
  const months = new Map<string, { account_id: string; period: string; calls: number; release: number }>();
  const monthOf = (account: string, period: string) => {
    const key = `${account}|${period}`;
    let row = months.get(key);
    if (!row) {
      row = { account_id: account, period, calls: 0, release: 0 };
      months.set(key, row);
    }
    return row;
  };
  const days: { account_id: string; day: string; calls: number }[] = [];
  for (const [key, calls] of batch.days) {
    const [account, day] = key.split('|') as [string, string];
    monthOf(account, day.slice(0, 7)).calls += calls;
    days.push({ account_id: account, day, calls });
  }
  for (const [key, calls] of batch.release) {
    const [account, period] = key.split('|') as [string, string];
    monthOf(account, period).release += calls;
  }
  // A batch's `release` rides in last_grant (a lease's row always exists before its release).
  await sql.query(
    `WITH month AS (
       INSERT INTO api_usage_monthly AS m (account_id, period, calls, leased, last_grant)
       SELECT u.account_id, u.period, u.calls, 0, u.release
         FROM jsonb_to_recordset($1::jsonb) AS u (account_id text, period text, calls bigint, release bigint)
        ORDER BY u.account_id, u.period
       ON CONFLICT (account_id, period) DO UPDATE
         SET calls = m.calls + EXCLUDED.calls,
             leased = GREATEST(0, m.leased - EXCLUDED.last_grant),
             last_grant = m.last_grant
       RETURNING 1
     )
     INSERT INTO api_usage_daily AS d (account_id, day, calls)
     SELECT u.account_id, u.day, u.calls
       FROM jsonb_to_recordset($2::jsonb) AS u (account_id text, day date, calls bigint)
      WHERE (SELECT count(*) FROM month) >= 0
      ORDER BY u.account_id, u.day
     ON CONFLICT (account_id, day) DO UPDATE SET calls = d.calls + EXCLUDED.calls`,
    [JSON.stringify([...months.values()]), JSON.stringify(days)],
  );
}
