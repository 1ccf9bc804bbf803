// The console's one client: the SDK in cookie mode (the HttpOnly session cookie, never readable
// here, goes with every call; unsafe calls carry the session's CSRF token, kept in memory only).
import { type AnswerOf, Tidings, TidingsConnectionError, TidingsError } from '@tidings/sdk';

/** A session as the API answers it (sign in, first run, invitation, GET /console/session). */
export type SessionAnswer = AnswerOf<'get', '/api/v1/public/console/session'>;
export type ConsoleUser = SessionAnswer['user'];
export type Role = ConsoleUser['role'];

let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

const sessionLost = new Set<() => void>();

/** Called when a call made while signed in answers 401: the session expired or was ended elsewhere. */
export function onSessionLost(listener: () => void): () => void {
  sessionLost.add(listener);
  return () => sessionLost.delete(listener);
}

async function watchedFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  // Signed out, a 401 is a wrong password or token, shown where it happened; signed in, it means
  // the session is gone, whichever page asked.
  if (response.status === 401 && csrfToken !== null) for (const listener of sessionLost) listener();
  return response;
}

export const client = new Tidings({
  cookie: { csrfToken: () => csrfToken },
  fetch: watchedFetch,
  maxRetries: 1,
});

/** The client acting on one account: a partner admin's choice (X-Account-Id); others act on their own. */
export function accountClient(accountId: string | null): Tidings {
  return accountId ? client.forAccount(accountId) : client;
}

/** What an error says to the person using the console: the API's own message, and its code. */
export interface ShownError {
  message: string;
  code?: string;
  status?: number;
  details?: unknown;
  requestId?: string | null;
}

export function shownError(err: unknown): ShownError {
  if (err instanceof TidingsConnectionError) {
    return { message: `The server could not be reached: ${err.message}`, code: err.code };
  }
  if (err instanceof TidingsError) {
    return {
      message: err.message,
      code: err.code,
      status: err.status,
      details: err.details,
      requestId: err.requestId,
    };
  }
  return { message: err instanceof Error ? err.message : String(err) };
}

export function isUnauthenticated(err: unknown): boolean {
  return err instanceof TidingsError && err.status === 401;
}

// The console's own routes (first run, sessions, invitations), typed by the SDK.
export const consoleApi = client.console;
