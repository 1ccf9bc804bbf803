// One open GET /events/stream: polls the account's events and writes each as a server-sent event.
//
// Out-of-order commits. Ids sort by creation time, but transactions commit in any order: an event
// created at t may become visible after one created at t+1 was already sent, so "id > last sent"
// alone would skip it for good. Two measures (docs/history/issue-25.md, events):
// - settle delay: an event is sent only once it is SETTLE_MS old, so an event committing up to
//   that late still goes out in id order, and a client resuming from its Last-Event-ID misses
//   nothing;
// - look-back window: every poll also reads a page of the ids of the last WINDOW_MS (from the index
//   alone; a cursor goes round the window over successive polls, so the cost of a poll stays
//   bounded however busy the account) and sends those it has not sent, so an event committing
//   later still reaches this connection. Such
//   a straggler goes out with the stream's position as its SSE `id` (the highest id passed so far),
//   not its own, so that Last-Event-ID never moves backwards and a resume does not repeat events.
// A resume never looks behind the id it resumes from (the client has what came before).
// What is sent is what the caller may see (visibility.ts) and its `types` take, both conditions of
// the statement that reads payloads; nothing created after the caller was last found allowed is
// sent (hub.ts checks it).
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../kernel/database/db.ts';
import { idAt } from '../../kernel/values/ids.ts';
import type { Verified } from './hub.ts';
import { eventIdsFrom, eventsByIds } from './repo.ts';
import type { Visible } from './visibility.ts';

/** Events younger than this wait for the next poll (a transaction that late still goes in order). */
export const SETTLE_MS = 1000;
/** How far behind its position a stream looks for events that committed late. */
export const WINDOW_MS = 30_000;
const PAGE = 500;
/** Pages one poll reads at most: a long replay goes on at the next poll, after a drain. */
const PAGES_PER_POLL = 4;

/** After a poll: all sent, more to read at once (a long replay), or the socket's buffer is full. */
type PollResult = 'caught-up' | 'more' | 'full';

export interface StreamSettings {
  pollMs: number;
  heartbeatMs: number;
  settleMs?: number;
  windowMs?: number;
}

export interface StreamTarget {
  /** Writes a chunk; false when the socket's buffer is full (wait for `drained`). */
  write(chunk: string): boolean;
  drained(): Promise<void>;
  end(): void;
}

export interface StreamStart {
  /** The lowest id the stream may send (inclusive). */
  floor: string;
  /** An event id the client already has (Last-Event-ID): not sent again. */
  after: string | null;
}

export class EventStream {
  readonly #db: Database;
  readonly #accountId: string;
  readonly #filters: string[] | null;
  readonly #visible: Visible;
  readonly #verified: Verified | null;
  readonly #target: StreamTarget;
  readonly #settings: Required<StreamSettings>;
  readonly #log: FastifyBaseLogger;
  readonly #floor: string;
  /** Ids at or above the current window's start that were looked at (sent or filtered out). */
  readonly #seen = new Set<string>();
  #position: string | null;
  /** Where the next look-back page starts (null: at the window's start). */
  #lookBack: string | null = null;
  #running = true;
  #wake: (() => void) | null = null;
  readonly done: Promise<void>;

  constructor(options: {
    db: Database;
    accountId: string;
    filters: string[] | null;
    /** What the caller may see (visibility.ts). */
    visible: Visible;
    start: StreamStart;
    target: StreamTarget;
    settings: StreamSettings;
    log: FastifyBaseLogger;
    /** Send what is there now and end (an injected request, which cannot stream). */
    once?: boolean;
    /**
     * When the caller was last found allowed (the hub checks it, and stops the stream when it is
     * not): nothing created after that time is sent.
     */
    verified?: Verified;
  }) {
    this.#db = options.db;
    this.#accountId = options.accountId;
    this.#filters = options.filters;
    this.#visible = options.visible;
    this.#verified = options.verified ?? null;
    this.#target = options.target;
    this.#settings = { settleMs: SETTLE_MS, windowMs: WINDOW_MS, ...options.settings };
    this.#log = options.log;
    this.#floor = options.start.floor;
    this.#position = options.start.after;
    if (options.start.after) this.#seen.add(options.start.after);
    this.done = options.once ? this.#once() : this.#run();
  }

  /** Ends the stream (client gone, server closing); `done` resolves once the last poll finished. */
  stop(): void {
    this.#running = false;
    this.#wake?.();
  }

  async #once(): Promise<void> {
    try {
      await this.#poll(false);
    } finally {
      this.#running = false;
      this.#target.end();
    }
  }

  async #run(): Promise<void> {
    let nextBeat = Date.now() + this.#settings.heartbeatMs;
    try {
      while (this.#running) {
        let read: PollResult = 'caught-up';
        try {
          read = await this.#poll(true);
          if (Date.now() >= nextBeat && this.#running) {
            nextBeat = Date.now() + this.#settings.heartbeatMs;
            this.#target.write(': keep-alive\n\n');
          }
        } catch (err) {
          // The database may be away for a moment: the next poll tries again.
          if (this.#running) this.#log.warn({ err }, 'event stream poll failed');
        }
        if (!this.#running) break;
        if (read === 'full') await this.#target.drained();
        else if (read === 'caught-up')
          await this.#sleep(Math.max(0, Math.min(this.#settings.pollMs, nextBeat - Date.now())));
      }
    } finally {
      this.#running = false;
      this.#target.end();
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  /**
   * Sends what is new: a few pages onward from the position, then one page of the look-back window
   * (its own cursor goes round the window over successive polls, so a window holding more events
   * than a page is still searched in full, at a bounded cost per poll).
   */
  async #poll(settle: boolean): Promise<PollResult> {
    const now = Date.now();
    const upper = this.#upper(settle, now);
    // The look-back window never reaches below the floor (what came before the start, or what a
    // resuming client has).
    let windowStart = idAt('event', new Date(now - this.#settings.windowMs));
    if (windowStart < this.#floor) windowStart = this.#floor;
    const keepFrom = this.#position && this.#position < windowStart ? this.#position : windowStart;
    for (const id of this.#seen) if (id < keepFrom) this.#seen.delete(id);

    let result: PollResult = 'more';
    let from = this.#position ?? this.#floor;
    for (let page = 0; page < PAGES_PER_POLL && this.#running; page++) {
      const ids = await eventIdsFrom(this.#db, this.#accountId, from, upper, PAGE);
      if (await this.#send(ids)) return 'full';
      const last = ids.at(-1);
      if (last && (!this.#position || last > this.#position)) this.#position = last;
      if (ids.length < PAGE) {
        result = 'caught-up';
        break;
      }
      from = last!;
    }

    if (this.#position && windowStart < this.#position && this.#running) {
      const lookFrom = this.#lookBack && this.#lookBack > windowStart ? this.#lookBack : windowStart;
      const ids = await eventIdsFrom(this.#db, this.#accountId, lookFrom, this.#position, PAGE);
      this.#lookBack = ids.length < PAGE ? null : ids.at(-1)!;
      if (await this.#send(ids)) return 'full';
    }
    return result;
  }

  /**
   * The id below which events may be sent now: those old enough to be settled, and created before
   * the caller was last found allowed. Null: no bound.
   */
  #upper(settle: boolean, now: number): string | null {
    let until = settle && this.#settings.settleMs > 0 ? now - this.#settings.settleMs : null;
    if (this.#verified && (until === null || this.#verified.at < until)) until = this.#verified.at;
    return until === null ? null : idAt('event', new Date(until));
  }

  /** Sends the events of these ids not sent yet; answers true when the socket's buffer is full. */
  async #send(ids: string[]): Promise<boolean> {
    const fresh = ids.filter((id) => !this.#seen.has(id));
    let full = false;
    // Those the caller may not see, or that its filters leave out, are not read (only marked seen).
    for (const row of await eventsByIds(this.#db, this.#accountId, fresh, this.#visible, this.#filters)) {
      if (!this.#running) break;
      // An event below the position committed late: it goes out with the position as its id.
      if (!this.#position || row.id > this.#position) this.#position = row.id;
      // The payload is one line of JSON (JSON.stringify escapes newlines): one data field.
      const message = `id: ${this.#position}\nevent: ${row.type}\ndata: ${row.payload}\n\n`;
      if (!this.#target.write(message)) full = true;
    }
    for (const id of fresh) this.#seen.add(id);
    return full;
  }
}
