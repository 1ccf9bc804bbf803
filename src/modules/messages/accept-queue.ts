// POST /messages gathers the sends that arrive together and accepts them together: in two
// statements without a transaction when nothing moved between them (acceptBatchOptimistically),
// else in one locked transaction (acceptBatch). Under load, a batch's few statements serve dozens
// of messages instead of each paying its own round trips and commit. A send that arrives alone goes
// at once, as a batch of one.
//
// Accounts are spread over a few lanes by a hash of their id; a lane runs one batch at a time and
// gathers what arrives meanwhile into the next. Sends of one account share a lane (they would
// queue on the account's wallet lock anyway), and lanes never wait on each other's wallets.
// PostgreSQL gets several lanes, PGlite (one connection) one.
import { createHash } from 'node:crypto';
import { type Database, sqlState } from '../../kernel/db.ts';
import type { AcceptServices } from './accept.ts';
import {
  acceptBatch,
  acceptBatchOptimistically,
  type SendRequest,
  type SendResult,
  SplitBatch,
} from './accept-batch.ts';

/** PostgreSQL's deadlock_detected. */
const DEADLOCK = '40P01';

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

  async #drain(): Promise<void> {
    this.#running = true;
    // Let the sends that arrived in the same turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, BATCH_LIMIT);
      try {
        const results = await this.#run(batch.map((p) => p.request));
        for (const [i, p] of batch.entries()) p.resolve(results[i]!);
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.#running = false;
  }
}

export class AcceptQueue {
  readonly #lanes: Lane[];

  constructor(s: AcceptServices, lanes: number) {
    const attempt = async (requests: SendRequest[]) =>
      (await acceptBatchOptimistically(s, requests)) ??
      (await s.db.transaction((tx) => acceptBatch(s, tx, requests)));
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
    const lane =
      createHash('sha1').update(request.sender.account.id).digest().readUInt32BE(0) % this.#lanes.length;
    return this.#lanes[lane]!.submit(request);
  }
}

/** Lanes for a database: PGlite has one connection; PostgreSQL shares its pool with everything else. */
export function lanesFor(db: Database, poolSize: number): number {
  return db.kind === 'pglite' ? 1 : Math.max(1, Math.floor(poolSize / 2));
}
