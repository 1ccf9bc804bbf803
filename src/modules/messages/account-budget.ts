// How many of one account's messages a process hands to providers at once: at most `cap`
// (TIDINGS_DISPATCH_ACCOUNT_CONCURRENCY). Without it, one account whose provider hangs on every call
// takes every slot of the process, and every other account's sends wait for its timeouts.
//
// A message waits for one of its account's places for a bounded time only: a healthy provider
// frees places within milliseconds, so a burst just queues; a hung one does not, and a message that
// waited that long is given back (the dispatcher undoes its claim and tries it again later),
// because a claimed message's in-doubt wait runs from its claim and it must not sit in memory for
// long after it.

interface Waiter {
  resolve: (got: boolean) => void;
  timer: NodeJS.Timeout;
}

export class AccountBudget {
  readonly #held = new Map<string, number>();
  readonly #waiting = new Map<string, Waiter[]>();
  readonly cap: number;

  constructor(cap: number) {
    this.cap = cap;
  }

  /** One of the account's places, within `waitMs`; false when none came free in time. */
  acquire(accountId: string, waitMs: number): Promise<boolean> {
    const held = this.#held.get(accountId) ?? 0;
    if (held < this.cap) {
      this.#held.set(accountId, held + 1);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const queue = this.#waiting.get(accountId) ?? [];
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          if (queue.length === 0) this.#waiting.delete(accountId);
          resolve(false);
        }, waitMs),
      };
      queue.push(waiter);
      this.#waiting.set(accountId, queue);
    });
  }

  /** Gives a place back: it passes straight to the account's next waiter, if any. */
  release(accountId: string): void {
    const queue = this.#waiting.get(accountId);
    const next = queue?.shift();
    if (next) {
      if (queue!.length === 0) this.#waiting.delete(accountId);
      clearTimeout(next.timer);
      next.resolve(true);
      return;
    }
    const held = (this.#held.get(accountId) ?? 0) - 1;
    if (held > 0) this.#held.set(accountId, held);
    else this.#held.delete(accountId);
  }
}
