// The per-second limit as a sliding log: a request at time t is admitted when fewer than `limit`
// requests were admitted in (t - 1 s, t]. Then no span [s, s + 1 s) ever holds more than `limit`
// admitted requests, wherever it starts (a fixed window lets up to twice the limit through across
// its boundary), and the next free place is known exactly: when the oldest admission in the log
// turns a second old. Only admissions are logged, so a key's log never holds more than `limit`
// times, and the log is a queue: times come in at the back and leave at the front, each once.
// MemoryLog serves one process; REDIS_LOG is the same algorithm for processes sharing Redis.

/** The span the limit applies to, in milliseconds. */
export const SPAN_MS = 1000;

export interface LogDecision {
  allowed: boolean;
  /** Admissions in the last second, this one included. */
  count: number;
  /** Milliseconds until the oldest of them leaves the last second (SPAN_MS when there is none). */
  freeInMs: number;
}

/** One key's admission times, oldest first, in a ring that grows (up to the limit) as needed. */
interface Ring {
  times: Float64Array;
  head: number;
  count: number;
}

const FIRST_CAPACITY = 8;

/**
 * Sliding logs in this process. O(1) amortised per call, no allocation once a key's ring is as
 * large as its busiest second needed; logs of keys idle for a second are dropped in a sweep that
 * runs after as many calls as there are keys (so it too costs O(1) a call) and at most once a second.
 */
export class MemoryLog {
  readonly #rings = new Map<string, Ring>();
  #callsSinceSweep = 0;
  #lastSweep = Number.NEGATIVE_INFINITY;

  /** Admits a request of `key` at `now` (ms, never decreasing) if its last second has room. */
  take(key: string, limit: number, now: number): LogDecision {
    this.#maybeSweep(now);
    let ring = this.#rings.get(key);
    if (!ring) {
      if (limit <= 0) return { allowed: false, count: 0, freeInMs: SPAN_MS };
      ring = { times: new Float64Array(Math.min(limit, FIRST_CAPACITY)), head: 0, count: 0 };
      this.#rings.set(key, ring);
    }
    const edge = now - SPAN_MS;
    const { times } = ring;
    while (ring.count > 0 && times[ring.head]! <= edge) {
      ring.head = ring.head + 1 === times.length ? 0 : ring.head + 1;
      ring.count--;
    }
    // A key's limit can change (a plan change): the ring may hold more than a new, lower limit,
    // which then refuses until enough times have left the last second.
    const allowed = ring.count < limit;
    if (allowed) {
      if (ring.count === ring.times.length) grow(ring, limit);
      const at = ring.head + ring.count;
      ring.times[at < ring.times.length ? at : at - ring.times.length] = now;
      ring.count++;
    }
    const freeInMs = ring.count > 0 ? ring.times[ring.head]! + SPAN_MS - now : SPAN_MS;
    return { allowed, count: ring.count, freeInMs };
  }

  /** How many keys have a log (for tests of the sweep). */
  get keys(): number {
    return this.#rings.size;
  }

  #maybeSweep(now: number): void {
    if (++this.#callsSinceSweep < this.#rings.size || now - this.#lastSweep < SPAN_MS) return;
    this.#callsSinceSweep = 0;
    this.#lastSweep = now;
    const edge = now - SPAN_MS;
    for (const [key, ring] of this.#rings) {
      const newest = ring.count === 0 ? edge : ring.times[(ring.head + ring.count - 1) % ring.times.length]!;
      if (newest <= edge) this.#rings.delete(key);
    }
  }
}

/** Doubles a full ring's capacity (at most to `limit`), its times moved to the front in order. */
function grow(ring: Ring, limit: number): void {
  const old = ring.times;
  const times = new Float64Array(Math.max(old.length + 1, Math.min(limit, old.length * 2)));
  for (let i = 0; i < ring.count; i++) times[i] = old[(ring.head + i) % old.length]!;
  ring.times = times;
  ring.head = 0;
}

/**
 * The same log in Redis, one list per key, in one atomic script. KEYS[1]: the log; ARGV[1]: the
 * limit; ARGV[2]: now in whole milliseconds, or empty for Redis' own clock (the default: one clock
 * for every process, so a clock skew between servers cannot let more through). Times are pushed in
 * the order the script runs, so the list stays oldest-first; if a clock ever stepped back, older
 * entries would only be counted longer (refusing more, never admitting more). The key expires a
 * second after its newest admission, when every time in it has left the last second anyway (a
 * minute when the caller's clock is used: tests move it faster than Redis' own).
 * Answers {admitted (1/0), admissions in the last second, ms until the oldest leaves it}.
 */
export const REDIS_LOG = `
local now = tonumber(ARGV[2])
local ttl = 60000
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  ttl = ${SPAN_MS}
end
local limit = tonumber(ARGV[1])
local edge = now - ${SPAN_MS}
while true do
  local oldest = redis.call('LINDEX', KEYS[1], 0)
  if not oldest or tonumber(oldest) > edge then break end
  redis.call('LPOP', KEYS[1])
end
local count = redis.call('LLEN', KEYS[1])
local admitted = 0
if count < limit then
  redis.call('RPUSH', KEYS[1], now)
  redis.call('PEXPIRE', KEYS[1], ttl)
  count = count + 1
  admitted = 1
end
local oldest = redis.call('LINDEX', KEYS[1], 0)
if not oldest then return {admitted, count, ${SPAN_MS}} end
return {admitted, count, tonumber(oldest) + ${SPAN_MS} - now}
`;
