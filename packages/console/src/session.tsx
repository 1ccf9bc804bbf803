// Who is signed in. The cookie itself is HttpOnly: the page learns of its session by asking
// GET /console/session, and keeps the CSRF token it answers in memory (api.ts).
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import {
  type ConsoleUser,
  consoleApi,
  isUnauthenticated,
  onSessionLost,
  type SessionAnswer,
  type ShownError,
  setCsrfToken,
  shownError,
} from './api.ts';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out'; bootstrapped: boolean; expired?: boolean }
  | { status: 'signed-in'; user: ConsoleUser }
  | { status: 'failed'; error: ShownError };

interface SessionApi {
  state: SessionState;
  /** After a sign-in, a first run or an accepted invitation: the answer's user and CSRF token. */
  signedIn: (answer: SessionAnswer) => void;
  signOut: (everywhere: boolean) => Promise<void>;
  reload: () => void;
}

const SessionContext = createContext<SessionApi | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` is the reload trigger
  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const answer = await consoleApi.session();
        setCsrfToken(answer.csrfToken);
        if (live) setState({ status: 'signed-in', user: answer.user });
      } catch (err) {
        if (!isUnauthenticated(err)) {
          if (live) setState({ status: 'failed', error: shownError(err) });
          return;
        }
        setCsrfToken(null);
        try {
          const { bootstrapped } = await consoleApi.setup();
          if (live) setState({ status: 'signed-out', bootstrapped });
        } catch (err2) {
          if (live) setState({ status: 'failed', error: shownError(err2) });
        }
      }
    })();
    return () => {
      live = false;
    };
  }, [attempt]);

  const signedIn = useCallback((answer: SessionAnswer) => {
    setCsrfToken(answer.csrfToken);
    setState({ status: 'signed-in', user: answer.user });
  }, []);

  const signOut = useCallback(async (everywhere: boolean) => {
    // An error here reaches the caller, which shows it: the session may still be open.
    if (everywhere) await consoleApi.signOutEverywhere();
    else await consoleApi.signOut();
    setCsrfToken(null);
    setState({ status: 'signed-out', bootstrapped: true });
  }, []);

  // A session that ends under the page (idle expiry, sign-out everywhere elsewhere) leads to the
  // sign-in page, saying why.
  useEffect(
    () =>
      onSessionLost(() => {
        setCsrfToken(null);
        setState({ status: 'signed-out', bootstrapped: true, expired: true });
      }),
    [],
  );

  const reload = useCallback(() => {
    setState({ status: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  const api = useMemo(() => ({ state, signedIn, signOut, reload }), [state, signedIn, signOut, reload]);
  return <SessionContext.Provider value={api}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const api = useContext(SessionContext);
  if (!api) throw new Error('useSession outside SessionProvider');
  return api;
}
