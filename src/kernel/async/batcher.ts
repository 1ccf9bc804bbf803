// Gathers work that arrives together and runs it together: an item submitted while nothing runs
// starts a batch on the next turn of the event loop (so what arrives in the same turn joins it);
// an item submitted while a batch runs waits and goes in the next one. Under load a batch's few
// statements and one commit serve many requests instead of each paying its own; a request that
// arrives alone goes at once, as a batch of one. One queue, not several: contacts measured a
// second queue halving the batches and costing more than it overlapped (docs/history/issue-27.md).
// (POST /messages has its own, with wallet-aware lanes: messages/accept-queue.ts.)

interface Pending<Q, R> {
  item: Q;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class Batcher<Q, R> {
  readonly #pending: Pending<Q, R>[] = [];
  #running = false;
  readonly #run: (items: Q[]) => Promise<R[]>;
  readonly #limit: number;

  /** `run` answers one result per item, in order; a throw fails the whole batch of at most `limit`. */
  constructor(run: (items: Q[]) => Promise<R[]>, options: { limit: number }) {
    this.#run = run;
    this.#limit = options.limit;
  }

  submit(item: Q): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.#limit);
      try {
        const results = await this.#run(batch.map((p) => p.item));
        for (const [i, p] of batch.entries()) p.resolve(results[i]!);
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.#running = false;
  }
}
