import { type Body, type CallOptions, Resource } from './base.ts';

const P = '/api/v1/public/console';

/**
 * The console's sign-in (docs/console.md): first run, sessions and invitations. A session lives in
 * the `tidings_session` cookie, so these calls are for a browser (or a client keeping cookies);
 * every change made with a session needs its `csrfToken` in X-CSRF-Token.
 */
export class Console extends Resource {
  /** Whether the installation is bootstrapped (no credentials needed). */
  setup(opts?: CallOptions) {
    return this.t.request('get', `${P}/setup`, { ...opts });
  }
  /** First run: the partner and its first admin, with the bootstrap token; signed in. */
  bootstrap(body: Body<'post', '/api/v1/public/console/bootstrap'>, opts?: CallOptions) {
    return this.t.request('post', `${P}/bootstrap`, { body, ...opts });
  }
  signIn(body: Body<'post', '/api/v1/public/console/sessions'>, opts?: CallOptions) {
    return this.t.request('post', `${P}/sessions`, { body, ...opts });
  }
  /** The current session: the user, its role and the CSRF token. */
  session(opts?: CallOptions) {
    return this.t.request('get', `${P}/session`, { ...opts });
  }
  signOut(opts?: CallOptions) {
    return this.t.request('delete', `${P}/session`, { ...opts });
  }
  /** Ends every session of this login, this one included. */
  signOutEverywhere(opts?: CallOptions) {
    return this.t.request('post', `${P}/session/sign-out-everywhere`, { ...opts });
  }
  /** Accepts an invitation's one-time token with a password; signed in. */
  acceptInvitation(body: Body<'post', '/api/v1/public/console/invitations/accept'>, opts?: CallOptions) {
    return this.t.request('post', `${P}/invitations/accept`, { body, ...opts });
  }
}
