// A counting semaphore: at most `size` pieces of work at once, the rest waiting their turn in the
// order they asked. Shared by every caller that draws on one limit (a process's provider calls).

export class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Runs `work` once a slot is free, and frees it when the work is done (or has thrown). */
  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, if any.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
