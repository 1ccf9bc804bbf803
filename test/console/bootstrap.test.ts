// The console's first run against an installation bootstrapped through the API (the reverse of
// test/console/auth.test.ts), the invitation link and the Secure cookie by PUBLIC_BASE_URL, and sign-in
// limits shared by processes through Redis.
import { describe, expect, it } from 'vitest';
import { makeConfig } from '../../src/config.ts';
import { SESSION_CACHE_MS } from '../../src/kernel/access/console-principal.ts';
import { call } from '../helpers/client.ts';
import { PASSWORD, partnerAdminSession } from '../helpers/console.ts';
import { BOOTSTRAP_TOKEN, connectRedis, createTestApp, redisUrl } from '../helpers/harness.ts';
import { useTestApp } from '../helpers/setup.ts';
import { sleep } from '../helpers/wait.ts';

// PUBLIC_BASE_URL unset: the config holds http://localhost:PORT.
const env = useTestApp({ config: { publicBaseUrl: `http://localhost:${makeConfig().port}` } });

describe('first run after the API bootstrap', () => {
  it('the token is used up: the console bootstrap answers 409', async () => {
    expect((await call(env.app, 'GET', '/console/setup')).body).toEqual({ bootstrapped: true });
    const res = await call(env.app, 'POST', '/console/bootstrap', {
      body: { token: BOOTSTRAP_TOKEN, email: 'late@example.com', password: PASSWORD, name: 'Late' },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('ALREADY_BOOTSTRAPPED');
    const { rows } = await env.tdb.db.query('SELECT id FROM console_users');
    expect(rows).toEqual([]);
  });
});

describe('links and cookies by PUBLIC_BASE_URL', () => {
  it('without PUBLIC_BASE_URL, the invitation link is on the address the request reached', async () => {
    const res = await call(env.app, 'POST', '/partner/console-invitations', {
      key: env.partner.partnerKey,
      body: { email: 'linked@example.com', name: 'Lin' },
      headers: { host: 'console.example:8080' },
    });
    expect(res.status).toBe(201);
    expect(res.body.url).toBe(`http://console.example:8080/console/invite#${res.body.token}`);
  });

  it('with an https PUBLIC_BASE_URL, the cookie is Secure and that origin passes the Origin check', async () => {
    const app = await createTestApp(env.tdb.db, { config: { publicBaseUrl: 'https://console.example' } });
    try {
      const invitation = await call(app, 'POST', '/partner/console-invitations', {
        key: env.partner.partnerKey,
        body: { email: 'secure@example.com', name: 'Sec' },
      });
      expect(invitation.body.url).toBe(`https://console.example/console/invite#${invitation.body.token}`);
      const accepted = await call(app, 'POST', '/console/invitations/accept', {
        body: { token: invitation.body.token, password: PASSWORD },
        headers: { origin: 'https://console.example' },
      });
      expect(accepted.status).toBe(201);
      const cookie = accepted.raw.cookies.find((c) => c.name === 'tidings_session')!;
      expect(cookie).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(String(accepted.headers['set-cookie'])).toContain('Secure');
    } finally {
      await app.close();
    }
  });
});

describe('sign-out in another process', () => {
  it('is in force within a second where the session was cached', async () => {
    const other = await createTestApp(env.tdb.db);
    try {
      const admin = await partnerAdminSession(env.app, env.partner.partnerKey);
      const me = { cookie: admin.cookie, csrf: admin.csrf };
      expect((await call(other, 'GET', '/partner/keys', me)).status).toBe(200);
      expect((await call(env.app, 'DELETE', '/console/session', me)).status).toBe(204);
      await sleep(SESSION_CACHE_MS + 100);
      const res = await call(other, 'GET', '/partner/keys', me);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('INVALID_SESSION');
    } finally {
      await other.close();
    }
  });
});

describe.skipIf(!redisUrl)('sign-in limits shared through Redis', () => {
  it('failures counted by one process refuse the sign-in in another', async () => {
    const redis = connectRedis();
    const apps = await Promise.all([0, 1].map(() => createTestApp(env.tdb.db, { redis })));
    try {
      const admin = await partnerAdminSession(env.app, env.partner.partnerKey);
      const signIn = (i: number, password: string) =>
        apps[i % 2]!.inject({
          method: 'POST',
          url: '/api/v1/public/console/sessions',
          remoteAddress: `198.18.0.${i}`,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ email: admin.email, password }),
        });
      for (let i = 0; i < 5; i++) expect((await signIn(i, 'wrong password!')).statusCode).toBe(401);
      const limited = await signIn(5, PASSWORD);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.code).toBe('RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
      redis.disconnect();
    }
  });
});
