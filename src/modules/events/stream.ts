// One open GET /events/stream: polls the account's events and writes each as a server-sent event.
//
// Out-of-order commits. Ids sort by creation time, but transactions commit in any order: an event
// created at t may become visible after one created at t+1 was already sent, so "id > last sent"
// alone would skip it for good. Two measures (docs/decisions.md § Issue 25, events):
// - settle delay: an event is sent only once it is SETTLE_MS old, so an event committing up to
//   that late still goes out in id order, and a client resuming from its Last-Event-ID misses
//   nothing;
// - look-back window: every poll re-reads the ids of the last WINDOW_MS (from the index alone) and
//   sends those it has not sent, so an event committing later still reaches this connection. Such
//   a straggler goes out with the stream's position as its SSE `id` (the highest id passed so far),
//   not its own, so that Last-Event-ID never moves backwards and a resume does not repeat events.
// A resume never looks behind the id it resumes from (the client has what came before).
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../kernel/db.ts';
import { idAt } from '../../kernel/ids.ts';
import { subscribes } from '../webhooks/outbox.ts';
import { eventIdsFrom, eventsByIds } from './repo.ts';

/** Events younger than this wait for the next poll (a transaction that late still goes in order). */
export const SETTLE_MS = 1000;
/** How far behind its position a stream looks for events that committed late. */
export const WINDOW_MS = 30_000;
const PAGE = 500;
/** Pages one poll reads at most: a long replay goes on at the next poll, after a drain. */
const PAGES_PER_POLL = 4;

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
  readonly #target: StreamTarget;
  readonly #settings: Required<StreamSettings>;
  readonly #log: FastifyBaseLogger;
  readonly #floor: string;
  /** Ids at or above the current window's start that were looked at (sent or filtered out). */
  readonly #seen = new Set<string>();
  #position: string | null;
  #running = true;
  #wake: (() => void) | null = null;
  readonly #stillAllowed: () => Promise<boolean>;
  readonly done: Promise<void>;

  constructor(options: {
    db: Database;
    accountId: string;
    filters: string[] | null;
    start: StreamStart;
    target: StreamTarget;
    settings: StreamSettings;
    log: FastifyBaseLogger;
    /** Send what is there now and end (an injected request, which cannot stream). */
    once?: boolean;
    /**
     * Asked at every heartbeat: false (the key was revoked, the account suspended) ends the
     * stream, and the client's reconnection gets the refusal.
     */
    stillAllowed?: () => Promise<boolean>;
  }) {
    this.#db = options.db;
    this.#accountId = options.accountId;
    this.#filters = options.filters;
    this.#target = options.target;
    this.#settings = { settleMs: SETTLE_MS, windowMs: WINDOW_MS, ...options.settings };
    this.#log = options.log;
    this.#floor = options.start.floor;
    this.#position = options.start.after;
    this.#stillAllowed = options.stillAllowed ?? (async () => true);
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
        let full = false;
        try {
          full = await this.#poll(true);
          if (Date.now() >= nextBeat) {
            nextBeat = Date.now() + this.#settings.heartbeatMs;
            if (!(await this.#stillAllowed())) break;
            this.#target.write(': keep-alive\n\n');
          }
        } catch (err) {
          // The database may be away for a moment: the next poll tries again.
          if (this.#running) this.#log.warn({ err }, 'event stream poll failed');
        }
        if (!this.#running) break;
        if (full) await this.#target.drained();
        else await this.#sleep(Math.max(0, Math.min(this.#settings.pollMs, nextBeat - Date.now())));
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

  /** Sends what is new; answers true when the socket's buffer is full. */
  async #poll(settle: boolean): Promise<boolean> {
    const now = Date.now();
    const upper =
      settle && this.#settings.settleMs > 0 ? idAt('event', new Date(now - this.#settings.settleMs)) : null;
    const windowStart = idAt('event', new Date(now - this.#settings.windowMs));
    // From the window's start, or the position if that is older (a replay under way), never below
    // the floor (what came before the start, or what a resuming client has).
    let from = this.#position && this.#position < windowStart ? this.#position : windowStart;
    if (from < this.#floor) from = this.#floor;
    for (const id of this.#seen) if (id < from) this.#seen.delete(id);

    for (let page = 0; page < PAGES_PER_POLL && this.#running; page++) {
      const ids = await eventIdsFrom(this.#db, this.#accountId, from, upper, PAGE);
      const fresh = ids.filter((id) => !this.#seen.has(id));
      let full = false;
      for (const row of await eventsByIds(this.#db, this.#accountId, fresh)) {
        if (!this.#running) return false;
        const straggler = this.#position !== null && row.id < this.#position;
        if (!straggler) this.#position = row.id;
        if (this.#filters && !subscribes(this.#filters, row.type)) continue;
        // The payload is one line of JSON (JSON.stringify escapes newlines): one data field.
        const message = `id: ${this.#position}\nevent: ${row.type}\ndata: ${row.payload}\n\n`;
        if (!this.#target.write(message)) full = true;
      }
      for (const id of fresh) this.#seen.add(id);
      if (full) return true;
      if (ids.length < PAGE) return false;
      from = ids.at(-1)!;
    }
    return false;
  }
}

/** The open streams of an app, ended when it closes (an open stream would hold the close forever). */
export class StreamHub {
  readonly #open = new Set<EventStream>();

  add(stream: EventStream): void {
    this.#open.add(stream);
    void stream.done.finally(() => this.#open.delete(stream));
  }

  get size(): number {
    return this.#open.size;
  }

  async closeAll(): Promise<void> {
    const streams = [...this.#open];
    for (const s of streams) s.stop();
    await Promise.allSettled(streams.map((s) => s.done));
  }
}
