// The console's one client: the SDK in cookie mode (the HttpOnly session cookie, never readable
// here, goes with every call; unsafe calls carry the session's CSRF token, kept in memory only).
import { Tidings, TidingsConnectionError, TidingsError } from '@tidings/sdk';

export type Role = 'partner_admin' | 'account_admin' | 'agent';

export interface ConsoleUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  accountId?: string | null;
  partnerId?: string | null;
}

export interface SessionAnswer {
  user: ConsoleUser;
  csrfToken: string;
}

let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export const client = new Tidings({ cookie: { csrfToken: () => csrfToken }, maxRetries: 1 });

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

// The console's own routes (sessions, first run, invitations).
const CONSOLE = '/api/v1/public/console';
type Call = (method: string, path: string, init?: { body?: unknown }) => Promise<unknown>;
const call = client.request.bind(client) as unknown as Call;

export const consoleApi = {
  setup: () => call('get', `${CONSOLE}/setup`) as Promise<{ bootstrapped: boolean }>,
  bootstrap: (body: { token: string; email: string; password: string; name: string }) =>
    call('post', `${CONSOLE}/bootstrap`, { body }) as Promise<SessionAnswer>,
  signIn: (body: { email: string; password: string }) =>
    call('post', `${CONSOLE}/sessions`, { body }) as Promise<SessionAnswer>,
  session: () => call('get', `${CONSOLE}/session`) as Promise<SessionAnswer>,
  signOut: () => call('delete', `${CONSOLE}/session`),
  signOutEverywhere: () => call('post', `${CONSOLE}/session/sign-out-everywhere`),
  acceptInvitation: (body: { token: string; password: string }) =>
    call('post', `${CONSOLE}/invitations/accept`, { body }) as Promise<SessionAnswer>,
};
