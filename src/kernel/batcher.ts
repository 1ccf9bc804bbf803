// Gathers work that arrives together and runs it together: a submission joins an idle lane, whose
// batch starts on the next turn of the event loop (so what arrives in the same turn joins it), or
// else waits in the lane with the fewest waiting and goes in its next batch. Under load a batch's
// few statements and one commit serve many requests instead of each paying its own; a request that
// arrives alone goes at once, as a batch of one. (POST /messages has its own, with wallet-aware
// lanes: messages/accept-queue.ts.)

interface Pending<Q, R> {
  item: Q;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

class Lane<Q, R> {
  readonly pending: Pending<Q, R>[] = [];
  running = false;

  readonly #run: (items: Q[]) => Promise<R[]>;
  readonly #limit: number;

  constructor(run: (items: Q[]) => Promise<R[]>, limit: number) {
    this.#run = run;
    this.#limit = limit;
  }

  async drain(): Promise<void> {
    this.running = true;
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.#limit);
      try {
        const results = await this.#run(batch.map((p) => p.item));
        for (const [i, p] of batch.entries()) p.resolve(results[i]!);
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.running = false;
  }
}

export class Batcher<Q, R> {
  readonly #lanes: Lane<Q, R>[];

  /** `run` answers one result per item, in order; a throw fails the whole batch. */
  constructor(run: (items: Q[]) => Promise<R[]>, options: { lanes: number; limit: number }) {
    this.#lanes = Array.from({ length: options.lanes }, () => new Lane(run, options.limit));
  }

  submit(item: Q): Promise<R> {
    const lane =
      this.#lanes.find((l) => !l.running) ??
      this.#lanes.reduce((a, b) => (b.pending.length < a.pending.length ? b : a));
    return new Promise((resolve, reject) => {
      lane.pending.push({ item, resolve, reject });
      if (!lane.running) void lane.drain();
    });
  }
}
