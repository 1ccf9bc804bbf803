// How a background loop sleeps until it is woken or its poll interval passes, without missing a
// wake that came while it worked: the loop takes a mark before a round, goes round again at once
// if a wake came since (`wokenSince`), and otherwise sleeps; a wake ends every sleep under way.
// The one shape of the polling loop (polling-loop.ts), the automation worker's lanes and the
// webhook dispatcher.
export class WakeSignal {
  #wakes = 0;
  readonly #sleepers = new Set<() => void>();

  /** A mark to compare with later: whether a wake came since. */
  get mark(): number {
    return this.#wakes;
  }

  wokenSince(mark: number): boolean {
    return this.#wakes !== mark;
  }

  /** Ends every sleep under way; a loop working now sees it with `wokenSince`. */
  wake(): void {
    this.#wakes++;
    for (const wakeUp of [...this.#sleepers]) wakeUp();
  }

  /** Resolves after `ms`, or at the next wake. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wakeUp = () => {
        clearTimeout(timer);
        this.#sleepers.delete(wakeUp);
        resolve();
      };
      const timer = setTimeout(wakeUp, ms);
      this.#sleepers.add(wakeUp);
    });
  }
}
