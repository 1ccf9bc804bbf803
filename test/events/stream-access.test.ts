// An open GET /events/stream ends within a second of its caller losing access (docs/history/issue-43.md,
// events): a key revoked, a console session signed out, expired or of a member removed,
// an account suspended, whether the change is made through the stream's own app or through another
// one on the same database (another process, on PostgreSQL), and it sends nothing created after the
// change. Heartbeats are a minute apart in the first app, so nothing here waits for one. A console
// (cookie) stream stays open past many heartbeats of the second app (whose are 100 ms apart).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX, type App } from '../../src/app.ts';
import { call, createAccountKey, tenant } from '../helpers/client.ts';
import { memberSession, partnerAdminSession, type Session } from '../helpers/console.ts';
import { createTestApp, FakeClock } from '../helpers/harness.ts';
import { useTestApp } from '../helpers/setup.ts';
import { SseClient } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

const clock = new FakeClock();
const env = useTestApp({
  now: clock.now,
  config: { eventStreamPollMs: 50, eventStreamHeartbeatMs: 60_000 },
});
/** Another app on the same database: another process on PostgreSQL. Its heartbeats are 100 ms apart. */
let other: App;
const bases: Record<'own' | 'other', string> = { own: '', other: '' };
const clients: SseClient[] = [];

async function listen(app: App): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${address.port}${API_PREFIX}`;
}

beforeAll(async () => {
  other = await createTestApp(env.tdb.db, {
    now: clock.now,
    config: { eventStreamPollMs: 50, eventStreamHeartbeatMs: 100 },
  });
  bases.own = await listen(env.app);
  bases.other = await listen(other);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await other?.close();
});

async function open(headers: Record<string, string>, on: 'own' | 'other' = 'own'): Promise<SseClient> {
  const client = await SseClient.open(`${bases[on]}/events/stream`, headers);
  clients.push(client);
  expect(client.status).toBe(200);
  return client;
}

const cookieOf = (s: Session) => ({ cookie: `tidings_session=${s.cookie}` });

let phones = 5000;
/**
 * A contact made with the partner's key (the stream's own key may be gone): its id. Of a suspended
 * account, `null`: the app refuses it (403) once its one-second account cache has seen the
 * suspension, which another app made.
 */
async function contact(accountId: string, suspended = false): Promise<string | null> {
  const res = await call(env.app, 'POST', '/contacts', {
    key: env.partner.partnerKey,
    accountId,
    body: { phone: `+1415555${phones++}` },
  });
  if (suspended && res.status === 403 && res.body.error.code === 'ACCOUNT_SUSPENDED') return null;
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** The stream is live: a contact made now reaches it. */
async function live(stream: SseClient, accountId: string): Promise<void> {
  const id = await contact(accountId);
  await until(
    () => stream.messages.some((m) => m.json.data.id === id),
    10_000,
    () => `the stream never sent ${id}; ended: ${stream.ended}`,
  );
}

/**
 * Ends the caller's access with `end`, makes contacts at once, and asserts the stream ended within
 * a second and sent none of them.
 */
async function endsWithin1s(
  stream: SseClient,
  accountId: string,
  end: () => Promise<void>,
  suspends = false,
): Promise<void> {
  await end();
  const ended = Date.now();
  const after = [await contact(accountId, suspends), await contact(accountId, suspends)];
  await until(
    () => stream.ended,
    1000 - (Date.now() - ended),
    () => 'the stream is still open a second after its access ended',
  );
  const sent = stream.messages.map((m) => m.json.data.id);
  expect(sent.filter((id) => after.includes(id))).toEqual([]);
}

describe('an open stream whose caller loses access', () => {
  it('ends within 1 s of its key’s revocation, through its own app or another, and sends nothing after', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const second = await createAccountKey(env.app, env.partner.partnerKey, t.accountId);
    const viaPartner = await open({ 'x-api-key': env.partner.partnerKey, 'x-account-id': t.accountId });
    const byOwnApp = await open({ 'x-api-key': t.apiKey });
    const byOtherApp = await open({ 'x-api-key': second.apiKey });
    await live(byOwnApp, t.accountId);
    await until(
      () => byOtherApp.messages.length === 1,
      10_000,
      () => 'the second stream is not live',
    );
    const revoke = (app: App, keyId: string) => async () => {
      const res = await call(app, 'DELETE', `/partner/accounts/${t.accountId}/keys/${keyId}`, {
        key: env.partner.partnerKey,
      });
      expect(res.status).toBe(204);
    };
    await endsWithin1s(byOwnApp, t.accountId, revoke(env.app, t.keyId));
    await endsWithin1s(byOtherApp, t.accountId, revoke(other, second.id));
    // Another caller's stream of the same account goes on; the revoked key's reconnection is refused.
    expect(viaPartner.ended).toBe(false);
    const again = await fetch(`${bases.own}/events/stream`, { headers: { 'x-api-key': t.apiKey } });
    expect(again.status).toBe(401);
    // The account suspended (through the other app) ends the partner's stream too.
    await endsWithin1s(
      viaPartner,
      t.accountId,
      async () => {
        const res = await call(other, 'POST', `/partner/accounts/${t.accountId}/suspend`, {
          key: env.partner.partnerKey,
        });
        expect(res.status).toBe(200);
      },
      true,
    );
    await call(env.app, 'POST', `/partner/accounts/${t.accountId}/reactivate`, {
      key: env.partner.partnerKey,
    });
  });

  it('ends within 1 s of its console session ending: signed out (here or elsewhere), member removed, expired', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const admin = await memberSession(env.app, t.apiKey, 'admin');
    const removed = await memberSession(env.app, t.apiKey, 'agent');
    const partnerAdmin = await partnerAdminSession(env.app, env.partner.partnerKey);
    const streams = {
      agent: await open(cookieOf(agent)),
      admin: await open(cookieOf(admin)),
      removed: await open(cookieOf(removed)),
      partnerAdmin: await open({ ...cookieOf(partnerAdmin), 'x-account-id': t.accountId }),
    };
    await live(streams.agent, t.accountId);
    for (const s of Object.values(streams))
      await until(
        () => s.messages.length === 1,
        10_000,
        () => 'not live',
      );

    const signOut = (app: App, s: Session) => async () => {
      const res = await call(app, 'DELETE', '/console/session', { cookie: s.cookie, csrf: s.csrf });
      expect(res.status).toBe(204);
    };
    await endsWithin1s(streams.agent, t.accountId, signOut(env.app, agent));
    await endsWithin1s(streams.admin, t.accountId, signOut(other, admin));
    await endsWithin1s(streams.removed, t.accountId, async () => {
      const res = await call(other, 'DELETE', `/team/members/${removed.memberId}`, { key: t.apiKey });
      expect(res.status).toBe(204);
    });
    // Past the session's lifetime (and its idle limit): no request ended it, its time did.
    await endsWithin1s(streams.partnerAdmin, t.accountId, async () => {
      clock.advance(env.app.ctx.config.consoleSessionHours * 3_600_000 + 1000);
    });
  });
});

describe('a console (cookie) stream', () => {
  it('stays open past its heartbeats, sending what happens, until its session ends', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const agent = await memberSession(env.app, t.apiKey, 'agent');
    const stream = await open(cookieOf(agent), 'other');
    await until(
      () => stream.comments.filter((c) => c === 'keep-alive').length >= 5 || stream.ended,
      10_000,
      () => `keep-alives: ${stream.comments.length}`,
    );
    expect(stream.ended).toBe(false);
    await live(stream, t.accountId);
    await endsWithin1s(stream, t.accountId, async () => {
      const res = await call(env.app, 'DELETE', '/console/session', {
        cookie: agent.cookie,
        csrf: agent.csrf,
      });
      expect(res.status).toBe(204);
    });
  });
});
