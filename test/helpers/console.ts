// Console sessions for tests: logins made through the API (invitation, acceptance) and the cookie
// and CSRF token to call with.
import type { App } from '../../src/app.ts';
import { call, type Reply } from './client.ts';

export interface Session {
  /** The `tidings_session` cookie's value. */
  cookie: string;
  csrf: string;
  userId: string;
  sessionId: string;
}

export const PASSWORD = 'correct horse battery';

/** The session a sign-in answer opened (its cookie and CSRF token). */
export function sessionOf(res: Reply): Session {
  if (res.status !== 201) throw new Error(`no session: ${res.status} ${JSON.stringify(res.body)}`);
  const cookie = res.raw.cookies.find((c) => c.name === 'tidings_session');
  if (!cookie) throw new Error('no tidings_session cookie');
  return { cookie: cookie.value, csrf: res.body.csrfToken, userId: res.body.user.id, sessionId: res.body.id };
}

let counter = 0;

/** A team member of the account, with a login, signed in (made with `key`, a live or partner key). */
export async function memberSession(
  app: App,
  key: string,
  role: 'admin' | 'agent',
  options: { accountId?: string; email?: string } = {},
): Promise<Session & { memberId: string; email: string }> {
  const email = options.email ?? `${role}-${process.pid}-${counter++}@example.com`;
  const member = await call(app, 'POST', '/team/members', {
    key,
    accountId: options.accountId,
    body: { name: `A ${role}`, email, role },
  });
  if (member.status !== 201) throw new Error(`member: ${member.status} ${JSON.stringify(member.body)}`);
  const invitation = await call(app, 'POST', `/team/members/${member.body.id}/invitation`, {
    key,
    accountId: options.accountId,
  });
  if (invitation.status !== 201)
    throw new Error(`invitation: ${invitation.status} ${JSON.stringify(invitation.body)}`);
  const accepted = await call(app, 'POST', '/console/invitations/accept', {
    body: { token: invitation.body.token, password: PASSWORD },
  });
  return { ...sessionOf(accepted), memberId: member.body.id, email };
}

/** A partner admin of the partner whose key this is, signed in. */
export async function partnerAdminSession(
  app: App,
  partnerKey: string,
): Promise<Session & { email: string }> {
  const email = `partner-admin-${process.pid}-${counter++}@example.com`;
  const invitation = await call(app, 'POST', '/partner/console-invitations', {
    key: partnerKey,
    body: { email, name: 'Pat' },
  });
  if (invitation.status !== 201)
    throw new Error(`invitation: ${invitation.status} ${JSON.stringify(invitation.body)}`);
  const accepted = await call(app, 'POST', '/console/invitations/accept', {
    body: { token: invitation.body.token, password: PASSWORD },
  });
  return { ...sessionOf(accepted), email };
}
