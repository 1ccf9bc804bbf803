// The console's sign-in through the API: first-run bootstrap (shared with POST /partner/bootstrap),
// sessions and their cookie, idle and absolute expiry, sign-out (everywhere), CSRF and Origin
// checks, sign-in rate limits, invitations, and what each role may do (docs/console.md).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, otherPartner, provision } from '../helpers/client.ts';
import { memberSession, PASSWORD, type Session, sessionOf } from '../helpers/console.ts';
import { changedTables, DatabaseSnapshots } from '../helpers/db-snapshot.ts';
import { BOOTSTRAP_TOKEN } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

let clock = new Date('2026-11-26T10:00:00Z');
const env = useTestApp({ bootstrap: false, now: () => clock });
const advance = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};
const MINUTE = 60_000;

const ADMIN = { email: 'Owner@Example.com', password: 'a long enough password', name: 'Olive' };
let admin: Session;
let partnerKey: string;
let accountId: string;
let liveKey: string;

const as = (s: Session, extra: Record<string, unknown> = {}) => ({
  cookie: s.cookie,
  csrf: s.csrf,
  ...extra,
});

async function signIn(email: string, password: string, remoteAddress = '127.0.0.1') {
  const raw = await env.app.inject({
    method: 'POST',
    url: '/api/v1/public/console/sessions',
    remoteAddress,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email, password }),
  });
  return { status: raw.statusCode, body: raw.json(), headers: raw.headers, raw };
}

describe('first run', () => {
  it('is not bootstrapped yet; a wrong token, a short password or a foreign Origin is refused', async () => {
    expect((await call(env.app, 'GET', '/console/setup')).body).toEqual({ bootstrapped: false });
    expectError(
      await call(env.app, 'POST', '/console/bootstrap', { body: { ...ADMIN, token: 'wrong' } }),
      401,
      'INVALID_BOOTSTRAP_TOKEN',
    );
    expectError(
      await call(env.app, 'POST', '/console/bootstrap', {
        body: { ...ADMIN, password: 'short', token: BOOTSTRAP_TOKEN },
      }),
      400,
      'INVALID_REQUEST',
    );
    expectError(
      await call(env.app, 'POST', '/console/bootstrap', {
        body: { ...ADMIN, token: BOOTSTRAP_TOKEN },
        headers: { origin: 'https://evil.example' },
      }),
      403,
      'FORBIDDEN',
    );
    expect((await call(env.app, 'GET', '/console/setup')).body).toEqual({ bootstrapped: false });
  });

  it('bootstraps with the token: the partner and its first admin, signed in; the API bootstrap is then refused', async () => {
    const res = await call(env.app, 'POST', '/console/bootstrap', {
      body: { ...ADMIN, token: BOOTSTRAP_TOKEN },
      headers: { origin: 'http://tidings.test' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.user).toMatchObject({
      email: 'owner@example.com',
      name: 'Olive',
      role: 'partner_admin',
      accountId: null,
    });
    expect(res.body.user.id).toMatch(/^lgn_/);
    expect(res.body.id).toMatch(/^ses_/);
    const cookie = res.raw.cookies.find((c) => c.name === 'tidings_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie.secure).toBeFalsy();
    expect(String(res.headers['set-cookie'])).not.toMatch(/Secure/i);
    admin = sessionOf(res);

    // Only the token's SHA-256 is stored, and the password as an argon2id hash.
    const sha = createHash('sha256').update(admin.cookie).digest('hex');
    const { rows } = await env.tdb.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM console_sessions',
    );
    expect(rows.map((r) => r.token_hash)).toEqual([sha]);
    const dump = JSON.stringify((await env.tdb.db.query('SELECT * FROM console_sessions')).rows);
    expect(dump).not.toContain(admin.cookie);
    const users = await env.tdb.db.query<{ password_hash: string }>(
      'SELECT password_hash FROM console_users',
    );
    expect(users.rows[0]!.password_hash).toMatch(/^\$argon2id\$/);

    expect((await call(env.app, 'GET', '/console/setup')).body).toEqual({ bootstrapped: true });
    expectError(
      await call(env.app, 'POST', '/partner/bootstrap', {
        headers: { authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
      }),
      409,
      'ALREADY_BOOTSTRAPPED',
    );
    expectError(
      await call(env.app, 'POST', '/console/bootstrap', { body: { ...ADMIN, token: BOOTSTRAP_TOKEN } }),
      409,
      'ALREADY_BOOTSTRAPPED',
    );
  });

  it('reads the session back; the partner admin acts as a partner key', async () => {
    const me = await call(env.app, 'GET', '/console/session', as(admin));
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: admin.sessionId,
      csrfToken: admin.csrf,
      user: { role: 'partner_admin', memberId: null },
    });

    const key = await call(env.app, 'POST', '/partner/keys', {
      ...as(admin),
      body: { name: 'from the console' },
    });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    partnerKey = key.body.apiKey;
    const account = await call(env.app, 'POST', '/partner/accounts', {
      ...as(admin),
      body: { accountName: 'Shop', countryCode: 'US', planCode: 'scale' },
    });
    expect(account.status, JSON.stringify(account.body)).toBe(201);
    accountId = account.body.accountId;
    const live = await call(env.app, 'POST', `/partner/accounts/${accountId}/keys`, {
      ...as(admin),
      body: { name: 'live' },
    });
    liveKey = live.body.apiKey;

    // Account routes: the account is named, as with a partner key.
    expectError(await call(env.app, 'GET', '/account', as(admin)), 400, 'INVALID_REQUEST');
    const acc = await call(env.app, 'GET', '/account', as(admin, { accountId }));
    expect(acc.status).toBe(200);
    expect(acc.body.keyScope).toBe('partner');
    // Another partner's account is invisible.
    const other = await otherPartner(env.tdb.db);
    const foreign = await provision(env.app, other.partnerKey);
    expectError(
      await call(env.app, 'GET', '/account', as(admin, { accountId: foreign.accountId })),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'GET', `/partner/accounts/${foreign.accountId}`, as(admin)),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});

describe('CSRF and Origin', () => {
  it('refuses a change without the CSRF token, with a wrong one, or from another Origin, and changes nothing', async () => {
    const snapshots = new DatabaseSnapshots(env.tdb.db);
    const before = await snapshots.take();
    const body = { name: 'csrf' };
    const cases = [
      { cookie: admin.cookie },
      { cookie: admin.cookie, csrf: 'wrong' },
      { cookie: admin.cookie, csrf: `${admin.csrf}x` },
      { ...as(admin), headers: { origin: 'https://evil.example' } },
      { ...as(admin), headers: { origin: 'null' } },
    ];
    for (const c of cases)
      expectError(await call(env.app, 'POST', '/partner/keys', { ...c, body }), 403, 'FORBIDDEN');
    expectError(
      await call(env.app, 'DELETE', '/console/session', { cookie: admin.cookie }),
      403,
      'FORBIDDEN',
    );
    expect(changedTables(before, await snapshots.take())).toEqual([]);
    // Reads need no token; this server's own Origin and PUBLIC_BASE_URL's pass.
    expect((await call(env.app, 'GET', '/partner/keys', { cookie: admin.cookie })).status).toBe(200);
    for (const origin of ['http://tidings.test', 'http://localhost:80']) {
      const res = await call(env.app, 'POST', '/partner/keys', { ...as(admin), body, headers: { origin } });
      expect(res.status, origin).toBe(201);
    }
  });

  it('an API key wins over a cookie (no CSRF needed with a key)', async () => {
    const res = await call(env.app, 'POST', '/partner/keys', {
      key: partnerKey,
      cookie: 'not-a-session',
      body: { name: 'key wins' },
    });
    expect(res.status).toBe(201);
  });

  it('an unknown cookie is a 401 INVALID_SESSION', async () => {
    expectError(await call(env.app, 'GET', '/partner/keys', { cookie: 'nope' }), 401, 'INVALID_SESSION');
    expectError(await call(env.app, 'GET', '/console/session'), 401, 'INVALID_SESSION');
  });
});

describe('signing in and out', () => {
  it('signs in; one answer for an unknown email and a wrong password', async () => {
    const wrong = await signIn(ADMIN.email, 'not the password at all');
    expectError(wrong as never, 401, 'INVALID_CREDENTIALS');
    const unknown = await signIn('nobody@example.com', ADMIN.password);
    expectError(unknown as never, 401, 'INVALID_CREDENTIALS');
    expect(unknown.body.error.message).toBe(wrong.body.error.message);
    const ok = await signIn(ADMIN.email, ADMIN.password);
    expect(ok.status).toBe(201);
    expect(ok.body.user.email).toBe('owner@example.com');
  });

  it('sign-out ends the session and clears the cookie', async () => {
    const s = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
    const out = await call(env.app, 'DELETE', '/console/session', as(s));
    expect(out.status).toBe(204);
    const cleared = out.raw.cookies.find((c) => c.name === 'tidings_session')!;
    expect(cleared.value).toBe('');
    expectError(await call(env.app, 'GET', '/console/session', as(s)), 401, 'INVALID_SESSION');
    expectError(await call(env.app, 'GET', '/partner/keys', as(s)), 401, 'INVALID_SESSION');
    // Others are untouched.
    expect((await call(env.app, 'GET', '/console/session', as(admin))).status).toBe(200);
  });

  it('sign-out everywhere ends every session of the login at once', async () => {
    const a = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
    const b = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
    expect((await call(env.app, 'GET', '/console/session', as(b))).status).toBe(200);
    const res = await call(env.app, 'POST', '/console/session/sign-out-everywhere', as(a));
    expect(res.status).toBe(200);
    expect(res.body.ended).toBeGreaterThanOrEqual(3);
    for (const s of [a, b, admin])
      expectError(await call(env.app, 'GET', '/console/session', as(s)), 401, 'INVALID_SESSION');
    admin = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
  });

  it('writes a session’s last use at most once a minute', async () => {
    const s = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
    const lastSeen = async () =>
      (
        await env.tdb.db.query<{ last_seen_at: Date }>(
          'SELECT last_seen_at FROM console_sessions WHERE id = $1',
          [s.sessionId],
        )
      ).rows[0]!.last_seen_at.getTime();
    const signedInAt = await lastSeen();
    for (let i = 0; i < 3; i++) {
      advance(15_000);
      expect((await call(env.app, 'GET', '/console/session', as(s))).status).toBe(200);
    }
    expect(await lastSeen()).toBe(signedInAt);
    advance(20_000);
    expect((await call(env.app, 'GET', '/console/session', as(s))).status).toBe(200);
    expect(await lastSeen()).toBe(clock.getTime());
  });

  it('ends a session idle for TIDINGS_CONSOLE_IDLE_MINUTES, and any after TIDINGS_CONSOLE_SESSION_HOURS', async () => {
    const idle = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
    advance(59 * MINUTE);
    expect((await call(env.app, 'GET', '/console/session', as(idle))).status).toBe(200);
    // Used at 59 minutes: alive until 119.
    advance(59 * MINUTE);
    expect((await call(env.app, 'GET', '/console/session', as(idle))).status).toBe(200);
    advance(61 * MINUTE);
    expectError(await call(env.app, 'GET', '/console/session', as(idle)), 401, 'INVALID_SESSION');

    const busy = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
    for (let i = 0; i < 14; i++) {
      advance(50 * MINUTE);
      expect(
        (await call(env.app, 'GET', '/console/session', as(busy))).status,
        `after ${(i + 1) * 50} min`,
      ).toBe(200);
    }
    advance(50 * MINUTE); // 750 minutes: past 12 hours, however active
    expectError(await call(env.app, 'GET', '/console/session', as(busy)), 401, 'INVALID_SESSION');
    admin = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
  });
});

describe('sign-in rate limits', () => {
  it('after 5 failures for one email: 429 with Retry-After, even with the right password', async () => {
    const member = await memberSession(env.app, liveKey, 'agent');
    for (let i = 0; i < 5; i++)
      expect((await signIn(member.email, 'wrong password!', `198.51.100.${i}`)).status).toBe(401);
    const limited = await signIn(member.email, PASSWORD, '198.51.100.9');
    expectError(limited as never, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('after 10 failures from one address: 429 for any email from it, not from another address', async () => {
    const member = await memberSession(env.app, liveKey, 'admin');
    for (let i = 0; i < 10; i++)
      expect((await signIn(`stranger${i}@example.com`, 'wrong password!', '203.0.113.7')).status).toBe(401);
    const limited = await signIn(member.email, PASSWORD, '203.0.113.7');
    expectError(limited as never, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await signIn(member.email, PASSWORD, '203.0.113.8')).status).toBe(201);
  });
});

describe('invitations', () => {
  it('a member’s invitation is shown once, accepted once; a used, unknown or expired one is refused', async () => {
    const member = await call(env.app, 'POST', '/team/members', {
      key: liveKey,
      body: { name: 'Ina', email: 'Ina@Example.com', role: 'admin' },
    });
    const invitation = await call(
      env.app,
      'POST',
      `/team/members/${member.body.id}/invitation`,
      as(admin, { accountId }),
    );
    expect(invitation.status, JSON.stringify(invitation.body)).toBe(201);
    expect(invitation.body).toMatchObject({
      email: 'ina@example.com',
      kind: 'member',
      memberId: member.body.id,
    });
    expect(invitation.body.id).toMatch(/^inv_/);
    expect(invitation.body.url).toBe(`http://tidings.test/console/invite#${invitation.body.token}`);
    const stored = JSON.stringify((await env.tdb.db.query('SELECT * FROM console_invitations')).rows);
    expect(stored).not.toContain(invitation.body.token);

    expectError(
      await call(env.app, 'POST', '/console/invitations/accept', {
        body: { token: invitation.body.token, password: 'short' },
      }),
      400,
      'INVALID_REQUEST',
    );
    const accepted = await call(env.app, 'POST', '/console/invitations/accept', {
      body: { token: invitation.body.token, password: PASSWORD },
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.user).toMatchObject({ role: 'account_admin', accountId, email: 'ina@example.com' });
    const again = await call(env.app, 'POST', '/console/invitations/accept', {
      body: { token: invitation.body.token, password: PASSWORD },
    });
    expectError(again, 404, 'RESOURCE_NOT_FOUND');
    expectError(
      await call(env.app, 'POST', '/console/invitations/accept', {
        body: { token: 'made-up', password: PASSWORD },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    // A second invitation for a member with a login: the email has one.
    expectError(
      await call(env.app, 'POST', `/team/members/${member.body.id}/invitation`, { key: liveKey }),
      409,
      'CONFLICT',
    );

    const late = await call(env.app, 'POST', '/team/members', {
      key: liveKey,
      body: { name: 'Late', email: 'late@example.com', role: 'agent' },
    });
    const lateInvitation = await call(env.app, 'POST', `/team/members/${late.body.id}/invitation`, {
      key: liveKey,
    });
    advance(7 * 24 * 60 * MINUTE + 1);
    expectError(
      await call(env.app, 'POST', '/console/invitations/accept', {
        body: { token: lateInvitation.body.token, password: PASSWORD },
      }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    admin = sessionOf((await signIn(ADMIN.email, ADMIN.password)) as never);
  });

  it('a sandbox key may not invite; another account’s member is not found', async () => {
    const sandbox = await call(env.app, 'POST', '/keys', {
      key: liveKey,
      body: { name: 'sb', scope: 'sandbox' },
    });
    const member = await call(env.app, 'POST', '/team/members', {
      key: liveKey,
      body: { name: 'Sam', email: 'sam@example.com', role: 'agent' },
    });
    expectError(
      await call(env.app, 'POST', `/team/members/${member.body.id}/invitation`, { key: sandbox.body.apiKey }),
      403,
      'FORBIDDEN',
    );
    const other = await call(env.app, 'POST', '/partner/accounts', {
      key: partnerKey,
      body: { accountName: 'Other', countryCode: 'US', planCode: 'scale' },
    });
    expectError(
      await call(
        env.app,
        'POST',
        `/team/members/${member.body.id}/invitation`,
        as(admin, { accountId: other.body.accountId }),
      ),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });

  it('a partner admin invites another partner admin', async () => {
    const invitation = await call(env.app, 'POST', '/partner/console-invitations', {
      ...as(admin),
      body: { email: 'second@example.com', name: 'Second' },
    });
    expect(invitation.status).toBe(201);
    expect(invitation.body.kind).toBe('partner_admin');
    const accepted = await call(env.app, 'POST', '/console/invitations/accept', {
      body: { token: invitation.body.token, password: PASSWORD },
    });
    expect(accepted.body.user).toMatchObject({ role: 'partner_admin', email: 'second@example.com' });
    expectError(
      await call(env.app, 'POST', '/partner/console-invitations', {
        ...as(admin),
        body: { email: 'SECOND@example.com', name: 'Again' },
      }),
      409,
      'CONFLICT',
    );
  });

  it('deleting the member deletes the login and ends its sessions', async () => {
    const agent = await memberSession(env.app, liveKey, 'agent');
    expect((await call(env.app, 'GET', '/conversations', as(agent))).status).toBe(200);
    expect((await call(env.app, 'DELETE', `/team/members/${agent.memberId}`, { key: liveKey })).status).toBe(
      204,
    );
    expectError(await call(env.app, 'GET', '/conversations', as(agent)), 401, 'INVALID_SESSION');
    expectError((await signIn(agent.email, PASSWORD)) as never, 401, 'INVALID_CREDENTIALS');
    const { rows } = await env.tdb.db.query('SELECT id FROM console_users WHERE id = $1', [agent.userId]);
    expect(rows).toEqual([]);
  });
});

describe('roles', () => {
  it('an agent reaches the inbox only: 403 on keys, webhooks, the wallet and partner routes', async () => {
    const agent = await memberSession(env.app, liveKey, 'agent');
    // The login's team member, for the inbox's "mine".
    expect((await call(env.app, 'GET', '/console/session', as(agent))).body.user).toMatchObject({
      role: 'agent',
      memberId: agent.memberId,
    });
    for (const path of [
      '/conversations',
      '/contacts',
      '/account',
      '/messages',
      '/templates',
      '/events',
      '/team/members',
    ])
      expect((await call(env.app, 'GET', path, as(agent))).status, path).toBe(200);
    const contact = await call(env.app, 'POST', '/contacts', {
      ...as(agent),
      body: { phone: '+14155550142' },
    });
    expect(contact.status).toBe(201);
    for (const path of [
      '/keys',
      '/webhooks',
      '/account/wallet',
      '/partner/accounts',
      '/rules',
      '/account/usage',
    ]) {
      const res = await call(env.app, 'GET', path, as(agent));
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.error.message).toMatch(/agent/i);
    }
    expectError(
      await call(env.app, 'POST', '/keys', { ...as(agent), body: { name: 'x' } }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call(env.app, 'POST', '/team/members', {
        ...as(agent),
        body: { name: 'x', email: 'x@example.com', role: 'admin' },
      }),
      403,
      'FORBIDDEN',
    );
  });

  it('an account admin acts as a live key of its account: 403 on partner routes and on other accounts', async () => {
    const accountAdmin = await memberSession(env.app, liveKey, 'admin');
    const acc = await call(env.app, 'GET', '/account', as(accountAdmin));
    expect(acc.status).toBe(200);
    expect(acc.body).toMatchObject({ accountId, keyScope: 'live' });
    expect(acc.headers['x-ratelimit-limit']).toBeDefined();
    expectError(await call(env.app, 'GET', '/partner/accounts', as(accountAdmin)), 403, 'FORBIDDEN');
    expectError(await call(env.app, 'GET', '/partner/keys', as(accountAdmin)), 403, 'FORBIDDEN');
    expectError(
      await call(env.app, 'POST', '/partner/console-invitations', {
        ...as(accountAdmin),
        body: { email: 'p@example.com', name: 'P' },
      }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await call(env.app, 'GET', '/account', as(accountAdmin, { accountId: 'acc_other' })),
      403,
      'FORBIDDEN',
    );
    expect((await call(env.app, 'GET', '/webhooks', as(accountAdmin))).status).toBe(200);
  });

  it('session calls count in the account’s monthly usage like key calls', async () => {
    const accountAdmin = await memberSession(env.app, liveKey, 'admin');
    const first = (await call(env.app, 'GET', '/account', as(accountAdmin))).body.usage.calls;
    await call(env.app, 'GET', '/contacts', as(accountAdmin));
    const second = (await call(env.app, 'GET', '/account', as(accountAdmin))).body.usage.calls;
    expect(second).toBe(first + 2);
  });
});

describe('the account’s own keys', () => {
  it('an account admin creates, lists and revokes keys; a sandbox key and an agent may not', async () => {
    const accountAdmin = await memberSession(env.app, liveKey, 'admin');
    const created = await call(env.app, 'POST', '/keys', {
      ...as(accountAdmin),
      body: { name: 'ci', scope: 'sandbox' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.apiKey).toMatch(/^tdg_sandbox_/);
    const list = await call(env.app, 'GET', '/keys', as(accountAdmin));
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(created.body.apiKey);
    // The sandbox key it made may not manage keys.
    for (const [method, path] of [
      ['GET', '/keys'],
      ['POST', '/keys'],
      ['DELETE', `/keys/${created.body.id}`],
    ] as const) {
      expectError(
        await call(env.app, method, path, {
          key: created.body.apiKey,
          body: method === 'POST' ? { name: 'x' } : undefined,
        }),
        403,
        'FORBIDDEN',
      );
    }
    expect((await call(env.app, 'DELETE', `/keys/${created.body.id}`, as(accountAdmin))).status).toBe(204);
    expectError(await call(env.app, 'GET', '/account', { key: created.body.apiKey }), 401, 'INVALID_API_KEY');
    // The live key works too; another account's key id is not found.
    expect((await call(env.app, 'GET', '/keys', { key: liveKey })).status).toBe(200);
    const other = await call(env.app, 'POST', '/partner/accounts', {
      key: partnerKey,
      body: { accountName: 'Other', countryCode: 'US', planCode: 'scale' },
    });
    const otherKey = await call(env.app, 'POST', `/partner/accounts/${other.body.accountId}/keys`, {
      key: partnerKey,
      body: { name: 'theirs' },
    });
    expectError(
      await call(env.app, 'DELETE', `/keys/${otherKey.body.id}`, as(accountAdmin)),
      404,
      'RESOURCE_NOT_FOUND',
    );
  });
});
