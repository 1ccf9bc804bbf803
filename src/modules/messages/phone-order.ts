// Messages to one number go out one at a time, in the order they were accepted (message ids are
// time-ordered), also when several dispatch loops of a process hold them in different batches: a
// customer who is sent a text and then a document gets them in that order. Within a process only:
// two processes each holding a message to one number hand them over independently.
//
// Three rules make it hold between the loops of a process:
// - the claim does not take a message while an older one to its number, accepted lately, is not
//   claimed yet (dispatch.ts: it comes back a moment later), so an older message is either held
//   by some batch or taken in the same claim;
// - a batch registers all its messages as soon as its claim returns, and hands none over before
//   every claim begun earlier in the process has registered its own (`beginClaim`): a claim that
//   began first may return last, with an older message to the same number;
// - each message then waits until no hand-over to its number is in flight and it is the oldest
//   registered. Waiting for its turn holds nothing another number needs (the batch's pool of
//   hand-overs is entered inside the turn), so two batches never wait on each other.

interface Queue {
  /** Registered ids, oldest first. */
  ids: string[];
  busy: boolean;
  wake: Map<string, () => void>;
}

export class PhoneOrder {
  readonly #queues = new Map<string, Queue>();
  /** Settles once every claim begun so far has registered its messages (or failed). */
  #claimsHeld: Promise<void> = Promise.resolve();

  /**
   * Called as a batch begins its claim. `held()` is called once the batch has registered what it
   * claimed (or its claim failed); `earlier` settles once every claim begun before it has too.
   */
  beginClaim(): { held: () => void; earlier: Promise<void> } {
    const earlier = this.#claimsHeld;
    let held!: () => void;
    const own = new Promise<void>((resolve) => {
      held = resolve;
    });
    this.#claimsHeld = Promise.all([earlier, own]).then(() => undefined);
    return { held, earlier };
  }

  /** Registers a batch's messages to one number (account and phone), as it starts on them. */
  hold(key: string, ids: string[]): void {
    const q: Queue = this.#queues.get(key) ?? { ids: [], busy: false, wake: new Map() };
    q.ids.push(...ids);
    q.ids.sort();
    this.#queues.set(key, q);
  }

  /** Takes back registered messages that will not go now (given back for a later try). */
  drop(key: string, ids: string[]): void {
    const q = this.#queues.get(key);
    if (!q) return;
    const wasFirst = q.ids[0];
    q.ids = q.ids.filter((id) => !ids.includes(id));
    if (q.ids.length === 0 && !q.busy) this.#queues.delete(key);
    else if (!q.busy && q.ids[0] !== wasFirst) {
      const next = q.ids[0]!;
      const wake = q.wake.get(next);
      q.wake.delete(next);
      wake?.();
    }
  }

  /**
   * Runs the hand-over of a registered message in its turn, then lets the next one go. `work` is
   * told whether the message waited for its turn (behind a hand-over that may have taken long).
   */
  async inTurn<T>(key: string, id: string, work: (waited: boolean) => Promise<T>): Promise<T> {
    const q = this.#queues.get(key)!;
    const waited = q.busy || q.ids[0] !== id;
    if (waited) await new Promise<void>((resolve) => q.wake.set(id, resolve));
    q.busy = true;
    try {
      return await work(waited);
    } finally {
      q.busy = false;
      q.ids.splice(q.ids.indexOf(id), 1);
      if (q.ids.length === 0) this.#queues.delete(key);
      else {
        const next = q.ids[0]!;
        const wake = q.wake.get(next);
        q.wake.delete(next);
        wake?.();
      }
    }
  }
}
