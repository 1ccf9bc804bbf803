// POST /messages gathers the sends that arrive together and accepts them together: in one or two
// statements without a transaction when nothing moved meanwhile (acceptBatchOptimistically; one
// when the process already knows the wallets and contacts, accept-cache.ts), else in one locked
// transaction (acceptBatch). Under load, a batch's few statements serve dozens
// of messages instead of each paying its own round trips and commit. A send that arrives alone goes
// at once, as a batch of one.
//
// Lanes: a lane runs one batch at a time and gathers what arrives meanwhile into the next. A send
// joins the first lane that is idle or whose running batch began less than SPILL_AFTER_MS ago, so
// at ordinary load nearly every send goes through the first lane, in batches of a few: every batch
// costs the database its round trips and a commit (a disk flush) whatever its size, so the fewer
// batches, the less CPU and disk a send costs. A batch that takes long (its wallet row held by
// another transaction, or a slow disk) lets the sends that arrive after it spill over into the next
// lane instead of waiting behind it. An account's sends stay in the lane that holds its earlier
// sends, waiting or running: two lanes never write one wallet at once, so they never deadlock
// with each other, and the unlocked path's read is never overtaken by the same process.
// PostgreSQL gets several lanes, PGlite (one connection) one.
import { type Database, DEADLOCK, sqlState } from '../../kernel/database/db.ts';
import type { AcceptServices } from './accept.ts';
import {
  ACCEPT_TRANSACTION,
  acceptBatch,
  acceptBatchOptimistically,
  type SendRequest,
  type SendResult,
  SplitBatch,
  wakeDispatchers,
} from './accept-batch.ts';
import { AcceptCache } from './accept-cache.ts';

/** A batch running longer than this makes the sends that arrive after it go to the next lane. */
const SPILL_AFTER_MS = 10;

/** The most sends one batch takes. */
const BATCH_LIMIT = 100;

interface Pending {
  request: SendRequest;
  resolve: (result: SendResult) => void;
  reject: (err: unknown) => void;
}

class Lane {
  readonly #pending: Pending[] = [];
  #running = false;
  /** When the running batch began (performance.now()), or null between batches. */
  #batchStartedAt: number | null = null;
  readonly #run: (requests: SendRequest[]) => Promise<SendResult[]>;

  constructor(run: (requests: SendRequest[]) => Promise<SendResult[]>) {
    this.#run = run;
  }

  submit(request: SendRequest): Promise<SendResult> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ request, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  /** Whether a send joining now would go in its next batch soon: idle, or its batch is young. */
  gathering(now: number): boolean {
    return this.#batchStartedAt === null || now - this.#batchStartedAt < SPILL_AFTER_MS;
  }

  get waiting(): number {
    return this.#pending.length;
  }

  async #drain(): Promise<void> {
    this.#running = true;
    // Let the sends that arrived in the same turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, BATCH_LIMIT);
      this.#batchStartedAt = performance.now();
      try {
        const results = await this.#run(batch.map((p) => p.request));
        for (const [i, p] of batch.entries()) p.resolve(results[i]!);
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
      this.#batchStartedAt = null;
    }
    this.#running = false;
  }
}

export class AcceptQueue {
  readonly #lanes: Lane[];
  /** The lane of each account with sends waiting or running, and how many. */
  readonly #homes = new Map<string, { lane: Lane; sends: number }>();
  /** The wallets and contacts this process last read or wrote (see accept-cache.ts). */
  readonly #cache = new AcceptCache();

  constructor(s: AcceptServices, lanes: number) {
    const attempt = async (requests: SendRequest[]) => {
      const results =
        (await acceptBatchOptimistically(s, requests, this.#cache)) ??
        (await s.db.transaction((tx) => acceptBatch(s, tx, requests, this.#cache), ACCEPT_TRANSACTION));
      wakeDispatchers(s, results);
      return results;
    };
    // A deadlock (with another process's batch, or a refund, taking the same wallets in another
    // order) aborted the statement or transaction: nothing was written, so it runs again.
    const once = async (requests: SendRequest[]) => {
      for (let tries = 1; ; tries++) {
        try {
          return await attempt(requests);
        } catch (err) {
          if (sqlState(err) !== DEADLOCK || tries >= 3) throw err;
        }
      }
    };
    const run = async (requests: SendRequest[]): Promise<SendResult[]> => {
      try {
        return await once(requests);
      } catch (err) {
        // A message of the batch existed already (an Idempotency-Key's earlier run): one at a time.
        if (!(err instanceof SplitBatch)) throw err;
        const results: SendResult[] = [];
        for (const request of requests) results.push(...(await once([request])));
        return results;
      }
    };
    this.#lanes = Array.from({ length: Math.max(1, lanes) }, () => new Lane(run));
  }

  /** Accepts one send with whatever else arrives meanwhile; resolves with its own result. */
  submit(request: SendRequest): Promise<SendResult> {
    const accountId = request.sender.account.id;
    const home = this.#homes.get(accountId) ?? { lane: this.#openLane(), sends: 0 };
    this.#homes.set(accountId, home);
    home.sends++;
    return home.lane.submit(request).finally(() => {
      if (--home.sends === 0) this.#homes.delete(accountId);
    });
  }

  /** The lane for an account with nothing under way: the first that is gathering. */
  #openLane(): Lane {
    const now = performance.now();
    return (
      this.#lanes.find((l) => l.gathering(now)) ??
      // Every lane is slow (the disk, most likely): the shortest queue.
      this.#lanes.reduce((a, b) => (b.waiting < a.waiting ? b : a))
    );
  }
}

/** Lanes for a database: PGlite has one connection; PostgreSQL shares its pool with everything else. */
export function lanesFor(db: Database, poolSize: number): number {
  return db.kind === 'pglite' ? 1 : Math.max(1, Math.floor(poolSize / 2));
}
