// The console's sign-in limits against attempts sent at once (docs/console.md § Sign-in limits): each
// attempt is counted before its password is checked, so a burst gets no more guesses than the same
// attempts one after another. With TEST_REDIS_URL the burst is split between two apps sharing Redis
// (two processes); emails and addresses are random, as Redis keeps its windows between runs.
import { randomInt, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { hashPassword } from '../../src/modules/console-auth/passwords.ts';
import { tenant } from '../helpers/client.ts';
import { memberSession, PASSWORD } from '../helpers/console.ts';
import { connectRedis, createTestApp, redisUrl } from '../helpers/harness.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp();
let apps: App[] = [];
let redis: Redis | null = null;
let liveKey: string;

beforeAll(async () => {
  // Without Redis each process keeps its own windows: one app then.
  redis = redisUrl ? connectRedis() : null;
  apps = redis ? await Promise.all([0, 1].map(() => createTestApp(env.tdb.db, { redis }))) : [env.app];
  ({ apiKey: liveKey } = await tenant(env.app, env.partner.partnerKey));
});

afterAll(async () => {
  if (redis) await Promise.all(apps.map((a) => a.close()));
  redis?.disconnect();
});

/** An address of its own for each test run (198.18.0.0/15 is for benchmarks: nobody's). */
const someAddress = () => `198.${18 + randomInt(2)}.${randomInt(256)}.${randomInt(256)}`;

function signIn(i: number, email: string, password: string, remoteAddress: string) {
  return apps[i % apps.length]!.inject({
    method: 'POST',
    url: '/api/v1/public/console/sessions',
    remoteAddress,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email, password }),
  });
}

const statuses = (answers: { statusCode: number }[]) => {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.statusCode] = (counts[a.statusCode] ?? 0) + 1;
  return counts;
};

describe('a burst of sign-ins', () => {
  it('60 wrong passwords for one email at once: 5 checked, the rest and the right password 429', {
    timeout: 60_000,
  }, async () => {
    const { email } = await memberSession(env.app, liveKey, 'agent', {
      email: `burst-${randomUUID()}@example.com`,
    });
    const wrong = Array.from({ length: 60 }, (_, i) => signIn(i, email, 'wrong password!', someAddress()));
    // Sent after the 60 in the same turn: it reaches the limit when they have all been counted.
    const right = signIn(60, email, PASSWORD, someAddress());
    const answers = await Promise.all(wrong);
    expect(statuses(answers)).toEqual({ 401: 5, 429: 55 });
    const refused = await right;
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    for (const a of [...answers.filter((a) => a.statusCode === 429), refused])
      expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
    expect((await signIn(0, email, PASSWORD, someAddress())).statusCode).toBe(429);
  });

  it('30 guesses from one address at once, each at another email: 10 checked, 20 refused', {
    timeout: 60_000,
  }, async () => {
    const address = someAddress();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        signIn(i, `nobody-${randomUUID()}@example.com`, 'guess guess!', address),
      ),
    );
    expect(statuses(answers)).toEqual({ 401: 10, 429: 20 });
  });

  it('a success gives its attempt back: an address signing in often keeps its 10 failures', {
    timeout: 60_000,
  }, async () => {
    const { email } = await memberSession(env.app, liveKey, 'admin', {
      email: `often-${randomUUID()}@example.com`,
    });
    const address = someAddress();
    for (let i = 0; i < 12; i++) expect((await signIn(i, email, PASSWORD, address)).statusCode).toBe(201);
    const guesses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        signIn(i, `nobody-${randomUUID()}@example.com`, 'guess guess!', address),
      ),
    );
    expect(statuses(guesses)).toEqual({ 401: 10, 429: 2 });
  });
});

// Sign-in is limited; first run and accepting an invitation are not (their tokens are 32 random
// bytes), so they must not hash the new password before the token is known good: a wrong token
// would otherwise buy an argon2 hash (19 MiB, tens of ms of CPU) for nothing, as often as sent.
describe('a burst of wrong tokens', () => {
  const BURST = 16;
  const cpuOf = async (work: () => Promise<unknown>) => {
    const before = process.cpuUsage();
    await work();
    const used = process.cpuUsage(before);
    return used.user + used.system;
  };

  it('first run and invitations refuse them without hashing the password', { timeout: 60_000 }, async () => {
    const burst = (path: string, fields: Record<string, string> = {}) =>
      Promise.all(
        Array.from({ length: BURST }, () =>
          env.app.inject({
            method: 'POST',
            url: `/api/v1/public/console/${path}`,
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify({ token: randomUUID(), password: PASSWORD, ...fields }),
          }),
        ),
      );
    // Once each first, so that what is measured is neither compiling nor starting argon2's threads.
    await Promise.all([
      burst('bootstrap', { email: 'x@example.com', name: 'X' }),
      burst('invitations/accept'),
    ]);
    await hashPassword(PASSWORD);
    const hashes = await cpuOf(() =>
      Promise.all(Array.from({ length: BURST }, () => hashPassword(PASSWORD))),
    );
    let answers: { statusCode: number }[] = [];
    const bootstraps = await cpuOf(async () => {
      answers = await burst('bootstrap', { email: 'x@example.com', name: 'X' });
    });
    expect(statuses(answers)).toEqual({ 401: BURST });
    const accepts = await cpuOf(async () => {
      answers = await burst('invitations/accept');
    });
    expect(statuses(answers)).toEqual({ 404: BURST });
    // Hashing first costs about as much as the hashes (1.1x measured); without it 5-15 %, and up to
    // about 30 % on a machine loaded four times over: half is far from both.
    expect(bootstraps, `${BURST} wrong bootstrap tokens against ${BURST} hashes`).toBeLessThan(hashes / 2);
    expect(accepts, `${BURST} wrong invitation tokens against ${BURST} hashes`).toBeLessThan(hashes / 2);
  });
});
