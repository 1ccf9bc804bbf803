// How many of one account's messages a process holds for hand-over at once: claimed, waiting for
// their number's turn or a slot, or with the provider. At most `cap` (TIDINGS_DISPATCH_ACCOUNT_
// CONCURRENCY); a batch leaves the rest unclaimed for a later try. Without it, one account whose
// provider hangs on every call takes every slot of the process, and every other account's sends
// wait for its timeouts. Bounding what is held (not only what is in flight) also bounds how long a
// claimed message can wait before it goes: a claim's time is when its in-doubt wait starts.

export class AccountBudget {
  readonly #held = new Map<string, number>();
  readonly cap: number;

  constructor(cap: number) {
    this.cap = cap;
  }

  /** Takes up to `want` of the account's places; answers how many it got. */
  take(accountId: string, want: number): number {
    const held = this.#held.get(accountId) ?? 0;
    const got = Math.max(0, Math.min(want, this.cap - held));
    if (got > 0) this.#held.set(accountId, held + got);
    return got;
  }

  /** Gives one place back: the message's hand-over is over (recorded, or given up). */
  give(accountId: string): void {
    const held = (this.#held.get(accountId) ?? 0) - 1;
    if (held > 0) this.#held.set(accountId, held);
    else this.#held.delete(accountId);
  }
}
