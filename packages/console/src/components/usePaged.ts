// A list read one page at a time (the API's cursor pages): the items so far, the error the API
// gave (shown, never swallowed), and "load more" while there is a next page.
import type { PageIterator } from '@tidings/sdk';
import { useCallback, useEffect, useRef, useState } from 'react';
import { type ShownError, shownError } from '../api.ts';

interface PageOf<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Paged<T> {
  items: T[] | null;
  error: ShownError | null;
  /** The first page, or the next one, is on its way (not a reload of what is shown). */
  loading: boolean;
  hasMore: boolean;
  more: () => void;
  reload: () => void;
  /** Replaces an item in place (a change the page made or an event told of). */
  setItems: (update: (items: T[]) => T[]) => void;
}

/** A number that moves when any of `deps` changes (compared as React compares effect deps). */
export function useVersion(deps: unknown[]): number {
  const ref = useRef({ deps, n: 0 });
  const old = ref.current.deps;
  if (deps.length !== old.length || deps.some((d, i) => !Object.is(d, old[i]))) {
    ref.current = { deps, n: ref.current.n + 1 };
  }
  return ref.current.n;
}

/**
 * `open(cursor)` gives the list at a cursor (undefined: the first page); `deps` restart it (a new
 * filter, another account). A reload keeps the items shown until the new page arrives.
 */
export function usePaged<T>(open: (cursor?: string) => PageIterator<T> | null, deps: unknown[]): Paged<T> {
  const [items, setItemsState] = useState<T[] | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [loading, setLoading] = useState(true);
  const [next, setNext] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const generation = useRef(0);
  const openRef = useRef(open);
  openRef.current = open;

  const load = useCallback(async (cursor: string | undefined, append: boolean, quiet = false) => {
    const mine = ++generation.current;
    const iterator = openRef.current(cursor);
    if (!iterator) {
      setItemsState([]);
      setLoading(false);
      return;
    }
    // A reload keeps the rows shown and says nothing (the inbox reloads on every event).
    if (!quiet) setLoading(true);
    try {
      const page = (await iterator.page()) as PageOf<T>;
      if (mine !== generation.current) return;
      setItemsState((old) => (append && old ? [...old, ...page.data] : page.data));
      setNext(page.nextCursor);
      setError(null);
    } catch (err) {
      if (mine === generation.current) setError(shownError(err));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  const version = useVersion(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` stands for the caller's deps
  useEffect(() => {
    setItemsState(null);
    void load(undefined, false);
  }, [version, load]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is the reload trigger
  useEffect(() => {
    if (attempt > 0) void load(undefined, false, true);
  }, [attempt]);

  return {
    items,
    error,
    loading,
    hasMore: next !== null,
    more: () => {
      if (next) void load(next, true);
    },
    reload: () => setAttempt((n) => n + 1),
    setItems: (update) => setItemsState((old) => (old ? update(old) : old)),
  };
}

/** One resource read by id, with its error; `reload` reads it again. */
export function useOne<T>(read: () => Promise<T> | null, deps: unknown[]) {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [attempt, setAttempt] = useState(0);
  const readRef = useRef(read);
  readRef.current = read;
  const version = useVersion(deps);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `version` (the caller's deps) and `attempt` (reload)
  useEffect(() => {
    let live = true;
    const promise = readRef.current();
    if (!promise) return;
    promise.then(
      (v) => {
        if (!live) return;
        setValue(v);
        setError(null);
      },
      (err) => live && setError(shownError(err)),
    );
    return () => {
      live = false;
    };
  }, [version, attempt]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new resource clears the old one
  useEffect(() => setValue(null), [version]);
  return { value, setValue, error, reload: () => setAttempt((n) => n + 1) };
}
