// Events as a webhook subscriber sees them: which events a subscription gets, what the envelope
// holds, how it is signed (checked with the `standardwebhooks` package, never with our own signing
// code), secret rotation, the outbox's transactional guarantee, and who may see which deliveries.
// Everything goes over real HTTP to receivers on loopback.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { changeBalance } from '../../src/modules/billing/wallet.ts';
import { call, otherPartner, provision, type Reply, tenant } from '../helpers/client.ts';
import { createTestApp, FakeClock } from '../helpers/harness.ts';
import { type Received, Receiver, verifySignature } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';
import { eventually, sleep } from '../helpers/wait.ts';

const config = { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50 };
const env = useTestApp({ config });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOUR = 3600_000;

const receivers: Receiver[] = [];
async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

beforeAll(async () => {
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

/** Long enough for a delivery that should not happen to have happened (the dispatcher polls every 50 ms). */
const settle = () => sleep(400);

/** A valid secret nobody configured. */
const strangerSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** The `v1,` signatures in a request's webhook-signature header. */
function signatures(received: Received): string[] {
  return String(received.headers['webhook-signature']).split(' ');
}

async function createWebhook(
  key: string,
  url: string,
  events?: string[],
  options: { partner?: boolean; app?: App } = {},
): Promise<{ id: string; secret: string }> {
  const res = await call(
    options.app ?? env.app,
    'POST',
    options.partner ? '/partner/webhooks' : '/webhooks',
    {
      key,
      body: events ? { url, events } : { url },
    },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.secret).toMatch(/^whsec_/);
  return res.body;
}

async function credit(accountId: string, amount: string, partnerKey = env.partner.partnerKey) {
  const res = await call(env.app, 'POST', `/partner/accounts/${accountId}/wallet/credits`, {
    key: partnerKey,
    body: { amount },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A charge as the messaging code will make it (there is no debit endpoint yet). */
async function debit(accountId: string, amountMicros: number) {
  const txn = await env.tdb.db.transaction((tx) =>
    changeBalance(tx, env.app.ctx.events, accountId, { type: 'debit', amountMicros: -amountMicros }),
  );
  expect(txn).not.toBeNull();
  return txn!;
}

async function deliveries(
  key: string,
  webhookId: string,
  query: Record<string, string> = {},
  partner = false,
): Promise<any[]> {
  const res = await call(env.app, 'GET', `${partner ? '/partner' : ''}/webhooks/${webhookId}/deliveries`, {
    key,
    query: { limit: '100', ...query },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function statusChange(accountId: string, action: 'suspend' | 'reactivate' | 'close'): Promise<Reply> {
  const res =
    action === 'close'
      ? await call(env.app, 'DELETE', `/partner/accounts/${accountId}`, { key: env.partner.partnerKey })
      : await call(env.app, 'POST', `/partner/accounts/${accountId}/${action}`, {
          key: env.partner.partnerKey,
        });
  expect(res.status, JSON.stringify(res.body)).toBe(action === 'close' ? 204 : 200);
  return res;
}

const million = 1_000_000;

describe('wallet.credited', () => {
  it('arrives as the documented envelope, signed so that standardwebhooks verifies it', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(t.apiKey, r.url(), ['wallet.*']);
    const before = Date.now();
    const txn = await credit(t.accountId, '5.00');
    const [got] = await r.waitFor(1);

    expect(got!.path).toBe('/hook');
    expect(got!.headers['content-type']).toMatch(/^application\/json/);
    expect(got!.json).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'wallet.credited',
      createdAt: expect.stringMatching(ISO),
      accountId: t.accountId,
      data: txn,
    });
    expect(Object.keys(got!.json)).toEqual(['id', 'type', 'createdAt', 'accountId', 'data']);
    expect(txn).toMatchObject({ type: 'credit', amount: { amount: '5.0000', currency: 'USD' } });
    expect(Date.parse(got!.json.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(got!.json.createdAt)).toBeLessThanOrEqual(Date.now());
    expect(got!.headers['webhook-id']).toBe(got!.json.id);
    const timestamp = Number(got!.headers['webhook-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(10);
    expect(signatures(got!)).toEqual([expect.stringMatching(/^v1,[A-Za-z0-9+/]+={0,2}$/)]);

    expect(verifySignature(hook.secret, got!)).toEqual(got!.json);
    expect(() => verifySignature(strangerSecret(), got!)).toThrow(/No matching signature/);
    // The signature covers the body and the id: a changed byte in either fails.
    const forged = { ...got!, body: got!.body.replace('5.0000', '6.0000') };
    expect(forged.body).not.toBe(got!.body);
    expect(() => verifySignature(hook.secret, forged)).toThrow(/No matching signature/);
    const otherId = { ...got!, headers: { ...got!.headers, 'webhook-id': 'evt_somethingelse' } };
    expect(() => verifySignature(hook.secret, otherId)).toThrow(/No matching signature/);

    await settle();
    expect(r.received).toHaveLength(1);
  });
});

describe('subscription filters', () => {
  it('an exact type, a family and * match; another family does not', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const exact = await createWebhook(t.apiKey, r.url('/exact'), ['wallet.credited']);
    const family = await createWebhook(t.apiKey, r.url('/family'), ['wallet.*']);
    const all = await createWebhook(t.apiKey, r.url('/all'), ['*']);
    const account = await createWebhook(t.apiKey, r.url('/account'), ['account.status_changed']);
    const counts = () => {
      const c: Record<string, Record<string, number>> = {
        '/exact': {},
        '/family': {},
        '/all': {},
        '/account': {},
      };
      for (const x of r.received) c[x.path]![x.json.type] = (c[x.path]![x.json.type] ?? 0) + 1;
      return c;
    };

    await credit(t.accountId, '1.00');
    await r.waitFor(3);
    await settle();
    expect(counts()).toEqual({
      '/exact': { 'wallet.credited': 1 },
      '/family': { 'wallet.credited': 1 },
      '/all': { 'wallet.credited': 1 },
      '/account': {},
    });
    // The deliveries are written with the event, so the log already shows what will ever be sent.
    expect(await deliveries(t.apiKey, account.id)).toEqual([]);
    const secrets = new Map([
      ['/exact', exact.secret],
      ['/family', family.secret],
      ['/all', all.secret],
      ['/account', account.secret],
    ]);
    // One event, the same id to every subscriber, each signed with its own secret.
    expect(new Set(r.received.map((x) => x.json.id)).size).toBe(1);
    for (const x of r.received) expect(verifySignature(secrets.get(x.path)!, x)).toEqual(x.json);

    // A suspended account's keys get 403, but its webhooks are still sent its events.
    await statusChange(t.accountId, 'suspend');
    await r.waitFor(5);
    await settle();
    expect(counts()).toEqual({
      '/exact': { 'wallet.credited': 1 },
      '/family': { 'wallet.credited': 1 },
      '/all': { 'wallet.credited': 1, 'account.status_changed': 1 },
      '/account': { 'account.status_changed': 1 },
    });
    for (const x of r.received) expect(verifySignature(secrets.get(x.path)!, x)).toEqual(x.json);
    expectError(await call(env.app, 'GET', '/webhooks', { key: t.apiKey }), 403, 'ACCOUNT_SUSPENDED');

    await statusChange(t.accountId, 'reactivate');
    await r.waitFor(7);
    const types = async (id: string) => (await deliveries(t.apiKey, id)).map((d) => d.eventType).sort();
    expect(await types(exact.id)).toEqual(['wallet.credited']);
    expect(await types(family.id)).toEqual(['wallet.credited']);
    expect(await types(all.id)).toEqual([
      'account.status_changed',
      'account.status_changed',
      'wallet.credited',
    ]);
    expect(await types(account.id)).toEqual(['account.status_changed', 'account.status_changed']);
    await settle();
    expect(r.received).toHaveLength(7);
  });
});

describe('account.status_changed', () => {
  it('carries the account as the partner API shows it and the status it left', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    // Made while ACTIVE: a suspended account's own key is refused.
    const hook = await createWebhook(t.apiKey, r.url(), ['account.status_changed']);

    const suspended = await statusChange(t.accountId, 'suspend');
    const [first] = await r.waitFor(1);
    expect(verifySignature(hook.secret, first!)).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'account.status_changed',
      createdAt: expect.stringMatching(ISO),
      accountId: t.accountId,
      data: { ...suspended.body, previousStatus: 'ACTIVE' },
    });
    expect(first!.json.data).toMatchObject({ accountId: t.accountId, status: 'SUSPENDED', closedAt: null });

    // Asking for the status it already has changes nothing and emits nothing.
    await statusChange(t.accountId, 'suspend');

    const reactivated = await statusChange(t.accountId, 'reactivate');
    const second = (await r.waitFor(2))[1]!;
    expect(verifySignature(hook.secret, second)).toMatchObject({
      type: 'account.status_changed',
      accountId: t.accountId,
      data: { ...reactivated.body, previousStatus: 'SUSPENDED' },
    });
    expect(second.json.data.status).toBe('ACTIVE');

    await statusChange(t.accountId, 'close');
    const third = (await r.waitFor(3))[2]!;
    const closed = await call(env.app, 'GET', `/partner/accounts/${t.accountId}`, {
      key: env.partner.partnerKey,
    });
    expect(closed.body.status).toBe('CLOSED');
    expect(verifySignature(hook.secret, third)).toMatchObject({
      type: 'account.status_changed',
      accountId: t.accountId,
      data: { ...closed.body, previousStatus: 'ACTIVE' },
    });
    expect(third.json.data.closedAt).toMatch(ISO);

    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(3);
    await settle();
    expect(r.received).toHaveLength(3);
  });
});

describe('partner webhooks', () => {
  it("get the events of all the partner's accounts, and no other partner's", async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const other = await otherPartner(env.tdb.db);
    const c = await provision(env.app, other.partnerKey);
    const mine = await receiver();
    const theirs = await receiver();
    const hook = await createWebhook(
      env.partner.partnerKey,
      mine.url(),
      ['wallet.credited', 'account.status_changed'],
      {
        partner: true,
      },
    );
    const otherHook = await createWebhook(other.partnerKey, theirs.url(), ['*'], { partner: true });

    try {
      const creditA = await credit(a.accountId, '2.00');
      const creditB = await credit(b.accountId, '3.00');
      await statusChange(b.accountId, 'suspend');
      // The other partner's own account: its webhook gets this one, ours does not.
      const creditC = await credit(c.accountId, '4.00', other.partnerKey);

      const got = await mine.waitFor(3);
      const events = got.map((x) => verifySignature(hook.secret, x) as any);
      const byAccount = (accountId: string) => events.filter((e) => e.accountId === accountId);
      expect(byAccount(a.accountId)).toEqual([
        expect.objectContaining({ type: 'wallet.credited', data: creditA }),
      ]);
      expect(
        byAccount(b.accountId)
          .map((e) => e.type)
          .sort(),
      ).toEqual(['account.status_changed', 'wallet.credited']);
      expect(byAccount(b.accountId).find((e) => e.type === 'wallet.credited').data).toEqual(creditB);

      const [theirsGot] = await theirs.waitFor(1);
      expect(verifySignature(otherHook.secret, theirsGot!)).toMatchObject({
        type: 'wallet.credited',
        accountId: c.accountId,
        data: creditC,
      });

      await settle();
      expect(mine.received).toHaveLength(3);
      expect(theirs.received).toHaveLength(1);
      expect(await deliveries(env.partner.partnerKey, hook.id, {}, true)).toHaveLength(3);
      expect(await deliveries(other.partnerKey, otherHook.id, {}, true)).toHaveLength(1);

      // A test event of a partner webhook is about no account.
      const test = await call(env.app, 'POST', `/partner/webhooks/${hook.id}/test`, {
        key: env.partner.partnerKey,
      });
      expect(test.status, JSON.stringify(test.body)).toBe(202);
      expect(test.body).toMatchObject({ webhookId: hook.id, eventType: 'webhook.test', status: 'pending' });
      const pinged = (await mine.waitFor(4))[3]!;
      expect(verifySignature(hook.secret, pinged)).toEqual({
        id: test.body.eventId,
        type: 'webhook.test',
        createdAt: expect.stringMatching(ISO),
        accountId: null,
        data: expect.objectContaining({ webhookId: hook.id }),
      });
      await settle();
      expect(mine.received).toHaveLength(4);
      expect(theirs.received).toHaveLength(1);
    } finally {
      // Leave the rest of the file's events to the webhooks its tests make.
      await call(env.app, 'DELETE', `/partner/webhooks/${hook.id}`, { key: env.partner.partnerKey });
      await call(env.app, 'DELETE', `/partner/webhooks/${otherHook.id}`, { key: other.partnerKey });
    }
  });
});

describe('wallet.low_balance', () => {
  it('is emitted when a charge crosses the threshold, once per crossing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(t.apiKey, r.url(), ['wallet.low_balance']);
    const set = await call(env.app, 'PATCH', '/account/wallet', {
      key: t.apiKey,
      body: { lowBalanceThreshold: { amount: '10.00' } },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.lowBalanceThreshold).toEqual({ amount: '10.0000', currency: 'USD' });
    const logged = async () => (await deliveries(t.apiKey, hook.id)).length;

    await credit(t.accountId, '15.00');
    await debit(t.accountId, 3 * million); // 12: still above
    expect(await logged()).toBe(0);
    const crossing = await debit(t.accountId, 3 * million); // 9: crossed
    expect(await logged()).toBe(1);
    await debit(t.accountId, 1 * million); // 8: already below
    expect(await logged()).toBe(1);

    const [first] = await r.waitFor(1);
    expect(verifySignature(hook.secret, first!)).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'wallet.low_balance',
      createdAt: expect.stringMatching(ISO),
      accountId: t.accountId,
      data: {
        accountId: t.accountId,
        balance: { amount: '9.0000', currency: 'USD' },
        lowBalanceThreshold: { amount: '10.0000', currency: 'USD' },
        transactionId: crossing.id,
      },
    });

    // Back above it, down to exactly the threshold (not below it), then one micro-unit under.
    await credit(t.accountId, '12.00'); // 20
    await debit(t.accountId, 10 * million); // 10: not below
    expect(await logged()).toBe(1);
    const again = await debit(t.accountId, 1); // 9.999999
    expect(await logged()).toBe(2);
    const second = (await r.waitFor(2))[1]!;
    expect(verifySignature(hook.secret, second)).toMatchObject({
      type: 'wallet.low_balance',
      data: {
        balance: { amount: '9.999999', currency: 'USD' },
        lowBalanceThreshold: { amount: '10.0000', currency: 'USD' },
        transactionId: again.id,
      },
    });
    expect(second.json.id).not.toBe(first!.json.id);

    // Without a threshold no charge emits it.
    const cleared = await call(env.app, 'PATCH', '/account/wallet', {
      key: t.apiKey,
      body: { lowBalanceThreshold: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.lowBalanceThreshold).toBeNull();
    await credit(t.accountId, '20.00'); // ~30
    await debit(t.accountId, 25 * million); // ~5
    expect(await logged()).toBe(2);
    await settle();
    expect(r.received).toHaveLength(2);
  });
});

describe('secret rotation', () => {
  it('signs with both secrets after a rotation', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(t.apiKey, r.url());
    const rotated = await call(env.app, 'POST', `/webhooks/${hook.id}/rotate-secret`, {
      key: t.apiKey,
      body: {},
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const graceEnds = Date.parse(rotated.body.previousSecretExpiresAt);
    expect(Math.abs(graceEnds - (Date.now() + 24 * HOUR))).toBeLessThan(10_000);

    const test = await call(env.app, 'POST', `/webhooks/${hook.id}/test`, { key: t.apiKey });
    expect(test.status).toBe(202);
    const [got] = await r.waitFor(1);
    expect(signatures(got!)).toHaveLength(2);
    // A receiver still configured with the old secret and one already on the new both accept it.
    expect(verifySignature(hook.secret, got!)).toEqual(got!.json);
    expect(verifySignature(rotated.body.secret, got!)).toEqual(got!.json);
    expect(() => verifySignature(strangerSecret(), got!)).toThrow(/No matching signature/);
  });

  it('stops signing with the old secret 24 hours after the rotation', async () => {
    // standardwebhooks refuses timestamps more than 5 minutes from the receiver's (real) clock, so
    // instead of moving a clock 24 h into the future (whose deliveries no receiver would accept), a
    // second app on the same database, with a fake clock, rotates the secret 24 h + 1 min in the
    // past: the grace period then ends one minute before real now. That app's dispatcher then
    // delivers once at 2 minutes before real now (inside the grace period) and once at real now
    // (after it); both timestamps are within the tolerance, so every check below is a full
    // standardwebhooks verification. The main app's dispatcher is stopped meanwhile so that only
    // the fake-clock dispatcher makes these attempts.
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(t.apiKey, r.url());
    const realNow = Date.now();
    const clock = new FakeClock(realNow - 24 * HOUR - 60_000);
    await env.app.ctx.dispatcher.stop();
    const past = await createTestApp(env.tdb.db, { now: clock.now, config });
    try {
      await past.ctx.dispatcher.start();
      const rotated = await call(past, 'POST', `/webhooks/${hook.id}/rotate-secret`, {
        key: t.apiKey,
        body: {},
      });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
      const newSecret: string = rotated.body.secret;
      expect(Date.parse(rotated.body.previousSecretExpiresAt)).toBe(realNow - 60_000);

      // 23 h 59 min after the rotation: both sign.
      clock.set(new Date(realNow - 120_000));
      const shown = await call(past, 'GET', `/webhooks/${hook.id}`, { key: t.apiKey });
      expect(shown.body.previousSecretExpiresAt).toBe(new Date(realNow - 60_000).toISOString());
      expect((await call(past, 'POST', `/webhooks/${hook.id}/test`, { key: t.apiKey })).status).toBe(202);
      const [inGrace] = await r.waitFor(1);
      expect(Number(inGrace!.headers['webhook-timestamp'])).toBe(Math.floor((realNow - 120_000) / 1000));
      expect(signatures(inGrace!)).toHaveLength(2);
      expect(verifySignature(hook.secret, inGrace!)).toEqual(inGrace!.json);
      expect(verifySignature(newSecret, inGrace!)).toEqual(inGrace!.json);
      // Its result must be recorded before the clock jumps: a jump longer than the claim's lease
      // would otherwise make the attempt still in flight look abandoned, and it would be sent again.
      const recorded = await eventually(
        () => call(past, 'GET', `/webhooks/${hook.id}/deliveries`, { key: t.apiKey }),
        (res) => res.body.data?.[0]?.status === 'succeeded',
      );
      expect(recorded.body.data.map((d: any) => d.status)).toEqual(['succeeded']);

      // 24 h 1 min after it: only the new secret signs.
      clock.set(new Date());
      const later = await call(past, 'GET', `/webhooks/${hook.id}`, { key: t.apiKey });
      expect(later.body.previousSecretExpiresAt).toBeNull();
      expect((await call(past, 'POST', `/webhooks/${hook.id}/test`, { key: t.apiKey })).status).toBe(202);
      const afterGrace = (await r.waitFor(2))[1]!;
      expect(afterGrace.json.id).not.toBe(inGrace!.json.id);
      expect(signatures(afterGrace)).toHaveLength(1);
      expect(verifySignature(newSecret, afterGrace)).toEqual(afterGrace.json);
      expect(() => verifySignature(hook.secret, afterGrace)).toThrow(/No matching signature/);
    } finally {
      await past.close();
      await env.app.ctx.dispatcher.start();
    }
    // The real-time app agrees: the grace period is over.
    const now = await call(env.app, 'GET', `/webhooks/${hook.id}`, { key: t.apiKey });
    expect(now.body.previousSecretExpiresAt).toBeNull();
  });
});

describe('the outbox', () => {
  it('sends nothing for a rolled-back change and the event of a committed one', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(t.apiKey, r.url());
    let rolledBackId = '';
    await expect(
      env.tdb.db.transaction(async (tx) => {
        const event = await env.app.ctx.events.emit(tx, {
          type: 'wallet.credited',
          accountId: t.accountId,
          data: { marker: 'rolled back' },
        });
        rolledBackId = event.id;
        expect(event.added.webhooks).toHaveLength(1);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(rolledBackId).toMatch(/^evt_/);
    const committed = await env.tdb.db.transaction((tx) =>
      env.app.ctx.events.emit(tx, {
        type: 'wallet.credited',
        accountId: t.accountId,
        data: { marker: 'committed' },
      }),
    );

    const [got] = await r.waitFor(1);
    expect(verifySignature(hook.secret, got!)).toEqual({
      id: committed.id,
      type: 'wallet.credited',
      createdAt: committed.createdAt,
      accountId: t.accountId,
      data: { marker: 'committed' },
    });
    await settle();
    expect(r.received).toHaveLength(1);
    const log = await deliveries(t.apiKey, hook.id);
    expect(log.map((d) => d.eventId)).toEqual([committed.id]);
    expect(log.map((d) => d.id)).toEqual(committed.added.webhooks);
  });
});

describe('webhook.test', () => {
  it('goes to that webhook only, and its delivery log shows what was sent', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    // Subscribed to something else: a test event is sent whatever the filters.
    const hook = await createWebhook(t.apiKey, r.url('/tested'), ['contact.created']);
    const sibling = await createWebhook(t.apiKey, r.url('/sibling'), ['*']);

    const res = await call(env.app, 'POST', `/webhooks/${hook.id}/test`, { key: t.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      id: expect.any(String),
      webhookId: hook.id,
      eventId: expect.stringMatching(/^evt_/),
      eventType: 'webhook.test',
      status: 'pending',
      attemptCount: 0,
    });

    const [got] = await r.waitFor(1);
    expect(got!.path).toBe('/tested');
    expect(got!.headers['webhook-id']).toBe(res.body.eventId);
    expect(verifySignature(hook.secret, got!)).toEqual({
      id: res.body.eventId,
      type: 'webhook.test',
      createdAt: expect.stringMatching(ISO),
      accountId: t.accountId,
      data: expect.objectContaining({ webhookId: hook.id }),
    });
    expect(res.body.event).toEqual(got!.json);

    const log = await eventually(
      () => deliveries(t.apiKey, hook.id),
      (rows) => rows[0]?.status === 'succeeded',
    );
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      id: res.body.id,
      eventId: got!.headers['webhook-id'],
      eventType: 'webhook.test',
      status: 'succeeded',
      attemptCount: 1,
      lastStatusCode: 204,
      attempts: [expect.objectContaining({ statusCode: 204, error: null })],
    });
    expect(log[0].event).toEqual(got!.json);

    await settle();
    expect(r.received.map((x) => x.path)).toEqual(['/tested']);
    expect(await deliveries(t.apiKey, sibling.id)).toEqual([]);
  });
});

describe('delivery isolation', () => {
  it("no other account sees or retries a webhook's deliveries", async () => {
    const owner = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(owner.apiKey, r.url());
    const sent = await call(env.app, 'POST', `/webhooks/${hook.id}/test`, { key: owner.apiKey });
    expect(sent.status).toBe(202);
    const deliveryId: string = sent.body.id;
    await r.waitFor(1);

    const sibling = await tenant(env.app, env.partner.partnerKey);
    const other = await otherPartner(env.tdb.db);
    const stranger = await tenant(env.app, other.partnerKey);
    const strangerReceiver = await receiver();
    for (const intruder of [sibling, stranger]) {
      const own = await createWebhook(intruder.apiKey, strangerReceiver.url());
      expectError(
        await call(env.app, 'GET', `/webhooks/${hook.id}/deliveries`, { key: intruder.apiKey }),
        404,
        'RESOURCE_NOT_FOUND',
      );
      expectError(
        await call(env.app, 'POST', `/webhooks/${hook.id}/deliveries/${deliveryId}/retry`, {
          key: intruder.apiKey,
        }),
        404,
        'RESOURCE_NOT_FOUND',
      );
      // Its own webhook id does not open someone else's delivery.
      expectError(
        await call(env.app, 'POST', `/webhooks/${own.id}/deliveries/${deliveryId}/retry`, {
          key: intruder.apiKey,
        }),
        404,
        'RESOURCE_NOT_FOUND',
      );
      expect(await deliveries(intruder.apiKey, own.id)).toEqual([]);
    }
    // Nor do the partner webhook routes reach an account's webhook.
    expectError(
      await call(env.app, 'GET', `/partner/webhooks/${hook.id}/deliveries`, { key: env.partner.partnerKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );

    await settle();
    expect(r.received).toHaveLength(1);
    expect(strangerReceiver.received).toHaveLength(0);
    const log = await deliveries(owner.apiKey, hook.id);
    expect(log.map((d) => [d.id, d.attemptCount])).toEqual([[deliveryId, 1]]);

    // The owner can retry it: the same event, sent again.
    const retried = await call(env.app, 'POST', `/webhooks/${hook.id}/deliveries/${deliveryId}/retry`, {
      key: owner.apiKey,
    });
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    const [first, again] = await r.waitFor(2);
    expect(again!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(verifySignature(hook.secret, again!)).toEqual(first!.json);
  });
});

describe('many events', () => {
  it('50 credits in quick succession: 50 events, each delivered once and verifiable', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const r = await receiver();
    const hook = await createWebhook(t.apiKey, r.url(), ['wallet.credited']);
    const txns = await Promise.all(Array.from({ length: 50 }, (_, i) => credit(t.accountId, `${i + 1}.00`)));

    const got = await r.waitFor(50);
    const ids = new Set(got.map((x) => String(x.headers['webhook-id'])));
    expect(ids.size).toBe(50);
    for (const x of got) {
      expect(verifySignature(hook.secret, x)).toEqual(x.json);
      expect(x.json.id).toBe(x.headers['webhook-id']);
    }
    expect(got.map((x) => x.json.data.id).sort()).toEqual(txns.map((x) => x.id).sort());
    expect(new Set(got.map((x) => x.json.data.balanceAfter.amount)).size).toBe(50);

    const log = await eventually(
      () => deliveries(t.apiKey, hook.id),
      (rows) => rows.length === 50 && rows.every((d) => d.status === 'succeeded'),
    );
    expect(log.filter((d) => d.status === 'succeeded' && d.attemptCount === 1)).toHaveLength(50);
    // A healthy receiver gets each event once (at-least-once allows more only after a failure).
    await settle();
    expect(r.received).toHaveLength(50);
  });
});
