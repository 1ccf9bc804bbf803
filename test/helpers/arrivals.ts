// A list that things arrive in (requests a fake server got, messages it took), with a way to wait
// until a number of them have arrived.
export class Arrivals<T> {
  readonly items: T[] = [];
  #waiters: { count: number; resolve: () => void }[] = [];
  readonly #what: string;

  /** `what` names the items in the timeout error ("requests", "sends"). */
  constructor(what: string) {
    this.#what = what;
  }

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => {
      if (this.items.length >= w.count) w.resolve();
      return this.items.length < w.count;
    });
  }

  /** Resolves with the first `count` once they have arrived; rejects after timeoutMs. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<T[]> {
    if (this.items.length < count) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`${this.items.length} of ${count} ${this.#what} arrived in ${timeoutMs} ms`)),
          timeoutMs,
        );
        this.#waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    }
    return this.items.slice(0, count);
  }
}
