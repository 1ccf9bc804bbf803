// Loading a page's data: the answer, or the API's error to show (never swallowed), and reload()
// after a change. A late answer for an older request (deps changed meanwhile) is dropped.
import { useCallback, useEffect, useState } from 'react';
import { type ShownError, shownError } from '../api.ts';

export interface Loaded<T> {
  data: T | null;
  error: ShownError | null;
  loading: boolean;
  reload: () => void;
  /** Replaces the data in place (an answer that already holds the new state). */
  setData: (data: T) => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's deps and the reload trigger
  useEffect(() => {
    let live = true;
    setLoading(true);
    load()
      .then((answer) => {
        if (!live) return;
        setData(answer);
        setError(null);
      })
      .catch((err) => live && setError(shownError(err)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [...deps, attempt]);

  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { data, error, loading, reload, setData };
}
