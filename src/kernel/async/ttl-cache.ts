// A small in-process cache with a time to live, for values read on every request (keys, accounts,
// approved templates) that other processes may change.
import type { Maybe } from './maybe.ts';

/**
 * A cache whose entries live `ttlMs`. An entry used in the last fifth of its life is read again in
 * the background, so a key in steady use never makes a request wait for the database, and no
 * value is ever served past its time.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number; refreshing: boolean }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #keep: (value: V) => boolean;
  // Bumped by every delete and clear: a read begun before one must not store what it read.
  #generation = 0;

  /** `keep`: which values are cached (the others are read again each time). */
  constructor(ttlMs: number, options: { maxEntries?: number; keep?: (value: V) => boolean } = {}) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = options.maxEntries ?? 50_000;
    this.#keep = options.keep ?? (() => true);
  }

  /**
   * The value, at once when cached (no promise: the request path reads keys and accounts on every
   * call, and each await costs a turn of the microtask queue), else once `load` has read it.
   */
  get(key: string, load: () => Promise<V>): Maybe<V> {
    const hit = this.#entries.get(key);
    const now = Date.now();
    if (hit && hit.expiresAt > now) {
      if (!hit.refreshing && hit.expiresAt - now < this.#ttlMs / 5) {
        hit.refreshing = true;
        this.#load(key, load).catch(() => {
          hit.refreshing = false;
        });
      }
      return hit.value;
    }
    return this.#load(key, load);
  }

  async #load(key: string, load: () => Promise<V>): Promise<V> {
    // The entry's age counts from before the read: a read that saw the state just before a change
    // committed must not outlive the change by more than the TTL.
    const readAt = Date.now();
    const generation = this.#generation;
    const value = await load();
    if (generation !== this.#generation) return value;
    if (!this.#keep(value)) {
      this.#entries.delete(key);
      return value;
    }
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(key, { value, expiresAt: readAt + this.#ttlMs, refreshing: false });
    return value;
  }

  /** Whether `key` has a value that has not run out. */
  has(key: string): boolean {
    const hit = this.#entries.get(key);
    return hit !== undefined && hit.expiresAt > Date.now();
  }

  delete(key: string): void {
    this.#generation++;
    this.#entries.delete(key);
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }
}
