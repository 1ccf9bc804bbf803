// A background loop that runs rounds while there is work and otherwise sleeps until its poll
// interval passes or it is woken (something became due in this process). Each round answers how
// much it did; a round that did something, or was woken meanwhile, is followed by another at once.
// A failed round is logged and the loop goes on. stop() waits for the round under way.
import type { FastifyBaseLogger } from 'fastify';
import { WakeSignal } from './wake-signal.ts';

export class PollingLoop {
  readonly #round: () => Promise<number>;
  readonly #pollMs: () => number;
  readonly #log: FastifyBaseLogger;
  readonly #failure: string;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  readonly #signal = new WakeSignal();

  constructor(options: {
    round: () => Promise<number>;
    pollMs: () => number;
    log: FastifyBaseLogger;
    /** What the log says when a round fails. */
    failure: string;
  }) {
    this.#round = options.round;
    this.#pollMs = options.pollMs;
    this.#log = options.log;
    this.#failure = options.failure;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#signal.wake();
    await this.#loop;
  }

  /** Something is due now: look at once. */
  wake(): void {
    this.#signal.wake();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const mark = this.#signal.mark;
      let worked = 0;
      try {
        worked = await this.#round();
      } catch (err) {
        this.#log.error({ err }, this.#failure);
      }
      if (!this.#running) break;
      if (worked > 0 || this.#signal.wokenSince(mark)) continue;
      await this.#signal.sleep(this.#pollMs());
    }
  }
}
