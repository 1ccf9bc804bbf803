// A background loop that runs rounds while there is work and otherwise sleeps until its poll
// interval passes or it is woken (something became due in this process). Each round answers how
// much it did; a round that did something, or was woken meanwhile, is followed by another at once.
// A failed round is logged and the loop goes on. stop() waits for the round under way.
import type { FastifyBaseLogger } from 'fastify';

export class PollingLoop {
  readonly #round: () => Promise<number>;
  readonly #pollMs: () => number;
  readonly #log: FastifyBaseLogger;
  readonly #failure: string;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  #alarm: (() => void) | null = null;
  #woken = 0;

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
    this.#alarm?.();
    await this.#loop;
  }

  /** Something is due now: look at once. */
  wake(): void {
    this.#woken++;
    this.#alarm?.();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const seen = this.#woken;
      let worked = 0;
      try {
        worked = await this.#round();
      } catch (err) {
        this.#log.error({ err }, this.#failure);
      }
      if (!this.#running) break;
      if (worked > 0 || seen !== this.#woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#pollMs());
        this.#alarm = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#alarm = null;
    }
  }
}
