// Idempotency-Key on authenticated POSTs, as a client retrying requests sees it: the first answer
// replayed (with `idempotent-replayed: true`) and no second effect; another request under the same
// key refused (422); a key whose first request is still running refused (409); keys per account
// (per partner on partner routes); bad keys refused; requests that fail validation or with a 5xx
// not using the key up; keys forgotten after 24 hours; and the OpenAPI document saying all this.
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { pruneIdempotencyKeys } from '../../src/kernel/http/idempotency.ts';
import { call, otherPartner, type Reply, tenant } from '../helpers/client.ts';
import { createTestApp, FakeClock } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

// Test-only account routes: one that waits until the test lets it answer, one that fails with a
// 500 on the first call for a given name.
let slowCalls = 0;
let slowEntered = deferred();
let slowRelease = deferred();
const flakyCalls = new Map<string, number>();

const env = useTestApp({
  workers: true,
  beforeReady: (a) => {
    // Routes that read a body say so with a body schema (one sent elsewhere is refused).
    const schema = { body: Type.Object({}, { additionalProperties: true }) };
    a.post('/api/v1/public/test/slow', { config: { access: 'account' }, schema }, async (request, reply) => {
      slowCalls++;
      slowEntered.resolve();
      await slowRelease.promise;
      reply.status(201);
      return { call: slowCalls, body: request.body };
    });
    a.post('/api/v1/public/test/flaky', { config: { access: 'account' }, schema }, async (request, reply) => {
      const name = (request.body as { name: string }).name;
      const n = (flakyCalls.get(name) ?? 0) + 1;
      flakyCalls.set(name, n);
      if (n === 1) throw new Error('the database went away');
      reply.status(201);
      return { name, call: n };
    });
  },
});

const phone = (n: number) => `+1201555${String(n).padStart(4, '0')}`;

interface Tenant {
  accountId: string;
  apiKey: string;
}

const newTenant = (): Promise<Tenant> => tenant(env.app, env.partner.partnerKey);

function createContact(app: App, t: Tenant, body: unknown, key?: string): Promise<Reply> {
  return call(app, 'POST', '/contacts', {
    key: t.apiKey,
    body,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

async function contactCount(t: Tenant): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM contacts WHERE account_id = $1',
    [t.accountId],
  );
  return rows[0]!.n;
}

async function eventCount(t: Tenant, type: string): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events WHERE account_id = $1 AND type = $2',
    [t.accountId, type],
  );
  return rows[0]!.n;
}

/** A replay: the first answer's status and body, marked as replayed. */
function expectReplay(res: Reply, first: Reply): void {
  expect(res.status, JSON.stringify(res.body)).toBe(first.status);
  expect(res.headers['idempotent-replayed']).toBe('true');
  expect(res.body).toEqual(first.body);
  expect(res.headers['content-type']).toBe(first.headers['content-type']);
}

function expectFresh(res: Reply, status: number): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers['idempotent-replayed']).toBeUndefined();
}

describe('on POST /contacts', () => {
  it('replays the first answer for the same key and body, with no second contact or event', async () => {
    const t = await newTenant();
    const body = { phone: phone(1), name: 'Ada', tags: ['vip'], attributes: { plan: 'gold', seats: 3 } };
    const first = await createContact(env.app, t, body, 'create-ada');
    expectFresh(first, 201);
    for (let i = 0; i < 3; i++) expectReplay(await createContact(env.app, t, body, 'create-ada'), first);
    // The same body with its keys in another order is the same request.
    const reordered = { attributes: { seats: 3, plan: 'gold' }, tags: ['vip'], name: 'Ada', phone: phone(1) };
    expectReplay(await createContact(env.app, t, reordered, 'create-ada'), first);
    expect(await contactCount(t)).toBe(1);
    expect(await eventCount(t, 'contact.created')).toBe(1);
    // Without a key, the same body is a new request (and here a duplicate phone).
    expectError(await createContact(env.app, t, body), 409, 'CONFLICT');
  });

  it('refuses the key with another body or on another path (422), changing nothing', async () => {
    const t = await newTenant();
    const first = await createContact(env.app, t, { phone: phone(2), name: 'Bea' }, 'key-2');
    expectFresh(first, 201);
    const otherBody = await createContact(env.app, t, { phone: phone(2), name: 'Bee' }, 'key-2');
    expectError(otherBody, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(otherBody.headers['idempotent-replayed']).toBeUndefined();
    const otherPath = await call(env.app, 'POST', '/bulk/contacts', {
      key: t.apiKey,
      body: { contacts: [{ phone: phone(3) }] },
      headers: { 'idempotency-key': 'key-2' },
    });
    expectError(otherPath, 422, 'IDEMPOTENCY_KEY_REUSED');
    const stored = await call(env.app, 'GET', `/contacts/${first.body.id}`, { key: t.apiKey });
    expect(stored.body.name).toBe('Bea');
    await sleep(300);
    expect(await contactCount(t)).toBe(1);
    // The key still replays its own request.
    expectReplay(await createContact(env.app, t, { phone: phone(2), name: 'Bea' }, 'key-2'), first);
  });

  it("replays the handler's own 4xx (409 duplicate phone), even once the duplicate is gone", async () => {
    const t = await newTenant();
    const existing = await createContact(env.app, t, { phone: phone(4) });
    const first = await createContact(env.app, t, { phone: phone(4), name: 'Dup' }, 'dup-key');
    expectError(first, 409, 'CONFLICT');
    const again = await createContact(env.app, t, { phone: phone(4), name: 'Dup' }, 'dup-key');
    expectReplay(again, first);
    expect(again.body.error.details).toEqual([
      { field: 'phone', issue: expect.any(String), contactId: existing.body.id },
    ]);
    expect((await call(env.app, 'DELETE', `/contacts/${existing.body.id}`, { key: t.apiKey })).status).toBe(
      204,
    );
    // Still the first answer: the request is not run again.
    expectReplay(await createContact(env.app, t, { phone: phone(4), name: 'Dup' }, 'dup-key'), first);
    expect(await contactCount(t)).toBe(0);
    // A new key runs it.
    expectFresh(await createContact(env.app, t, { phone: phone(4), name: 'Dup' }, 'dup-key-2'), 201);
  });

  it('does not use the key up on a request that fails validation', async () => {
    const t = await newTenant();
    const invalid = await createContact(env.app, t, { phone: 12345, nickname: 'x' }, 'fix-and-retry');
    expectError(invalid, 400, 'INVALID_REQUEST');
    const unparsable = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: '{"phone": ',
      headers: { 'idempotency-key': 'fix-and-retry' },
    });
    expectError(unparsable, 400, 'INVALID_REQUEST');
    // The corrected request runs under the same key (neither replayed nor 422) and then replays.
    const fixed = await createContact(env.app, t, { phone: phone(5) }, 'fix-and-retry');
    expectFresh(fixed, 201);
    expectReplay(await createContact(env.app, t, { phone: phone(5) }, 'fix-and-retry'), fixed);
    // Validation comes first: an invalid request under a used key is refused for its shape, and
    // the key keeps replaying its own request.
    expectError(await createContact(env.app, t, { phone: 12345 }, 'fix-and-retry'), 400, 'INVALID_REQUEST');
    expectReplay(await createContact(env.app, t, { phone: phone(5) }, 'fix-and-retry'), fixed);
    expect(await contactCount(t)).toBe(1);
  });

  it('refuses a malformed key with 400, doing nothing', async () => {
    const t = await newTenant();
    for (const bad of ['has space', 'x'.repeat(256), 'tab\there']) {
      const res = await createContact(env.app, t, { phone: phone(6) }, bad);
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details).toEqual([
        { field: expect.stringMatching(/^idempotency-key$/i), issue: expect.any(String) },
      ]);
    }
    expect(await contactCount(t)).toBe(0);
    const longest = 'k'.repeat(255);
    const ok = await createContact(env.app, t, { phone: phone(6) }, longest);
    expectFresh(ok, 201);
    expectReplay(await createContact(env.app, t, { phone: phone(6) }, longest), ok);
    const printable = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
    expectFresh(await createContact(env.app, t, { phone: phone(7) }, printable), 201);
    expect(await contactCount(t)).toBe(2);
  });

  it('scopes keys to the account: the same key in two accounts is two requests', async () => {
    const a = await newTenant();
    const b = await newTenant();
    const body = { phone: phone(8), name: 'Same' };
    const inA = await createContact(env.app, a, body, 'shared-key');
    const inB = await createContact(env.app, b, body, 'shared-key');
    expectFresh(inA, 201);
    expectFresh(inB, 201);
    expect(inB.body.id).not.toBe(inA.body.id);
    // A different body under the same key in a third account is not "reused" either.
    const c = await newTenant();
    expectFresh(await createContact(env.app, c, { phone: phone(9) }, 'shared-key'), 201);
    expect([await contactCount(a), await contactCount(b), await contactCount(c)]).toEqual([1, 1, 1]);
    // The partner key acting on account A shares A's keys.
    const viaPartner = await call(env.app, 'POST', '/contacts', {
      key: env.partner.partnerKey,
      accountId: a.accountId,
      body,
      headers: { 'idempotency-key': 'shared-key' },
    });
    expectReplay(viaPartner, inA);
    expect(await contactCount(a)).toBe(1);
  });

  it('gives concurrent requests with one key a single effect: the other is replayed or told 409', async () => {
    const t = await newTenant();
    for (let round = 0; round < 5; round++) {
      const body = { phone: phone(100 + round), name: `Round ${round}` };
      const key = `concurrent-${round}`;
      const replies = await Promise.all([
        createContact(env.app, t, body, key),
        createContact(env.app, t, body, key),
      ]);
      const fresh = replies.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
      expect(fresh, JSON.stringify(replies.map((r) => [r.status, r.body]))).toHaveLength(1);
      const other = replies.find((r) => r !== fresh[0])!;
      if (other.status === 409) expectError(other, 409, 'IDEMPOTENCY_IN_PROGRESS');
      else expectReplay(other, fresh[0]!);
      expectReplay(await createContact(env.app, t, body, key), fresh[0]!);
    }
    expect(await contactCount(t)).toBe(5);
    expect(await eventCount(t, 'contact.created')).toBe(5);
  });

  it('gives concurrent bulk imports with one key a single job', async () => {
    const t = await newTenant();
    const contacts = Array.from({ length: 1000 }, (_, i) => ({ phone: phone(i), name: `n${i}` }));
    const send = () =>
      call(env.app, 'POST', '/bulk/contacts', {
        key: t.apiKey,
        body: { contacts },
        headers: { 'idempotency-key': 'bulk-once' },
      });
    const replies = await Promise.all([send(), send(), send()]);
    const fresh = replies.filter((r) => r.status === 202 && r.headers['idempotent-replayed'] === undefined);
    expect(fresh, JSON.stringify(replies.map((r) => r.status))).toHaveLength(1);
    for (const other of replies.filter((r) => r !== fresh[0])) {
      if (other.status === 409) expectError(other, 409, 'IDEMPOTENCY_IN_PROGRESS');
      else expectReplay(other, fresh[0]!);
    }
    const jobId = fresh[0]!.body.jobId;
    const deadline = Date.now() + 90_000;
    let job: Reply;
    do {
      await sleep(100);
      job = await call(env.app, 'GET', `/bulk/contacts/${jobId}`, { key: t.apiKey });
    } while (job.body.status !== 'completed' && job.body.status !== 'failed' && Date.now() < deadline);
    expect(job.body).toMatchObject({ status: 'completed', succeeded: 1000 });
    const { rows } = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM bulk_jobs WHERE account_id = $1',
      [t.accountId],
    );
    expect(rows[0]!.n).toBe(1);
    expect(await contactCount(t)).toBe(1000);
    expect(await eventCount(t, 'contact.created')).toBe(1000);
  }, 120_000);
});

describe('requests in flight and failures', () => {
  it('answers 409 IDEMPOTENCY_IN_PROGRESS while the first request runs, then replays it', async () => {
    const t = await newTenant();
    slowCalls = 0;
    slowEntered = deferred();
    slowRelease = deferred();
    const request = () =>
      call(env.app, 'POST', '/test/slow', {
        key: t.apiKey,
        body: { n: 1 },
        headers: { 'idempotency-key': 'slow-key' },
      });
    const first = request();
    await slowEntered.promise;
    const during = await request();
    expectError(during, 409, 'IDEMPOTENCY_IN_PROGRESS');
    // Another body under that key is still "reused", in flight or not.
    const otherBody = await call(env.app, 'POST', '/test/slow', {
      key: t.apiKey,
      body: { n: 2 },
      headers: { 'idempotency-key': 'slow-key' },
    });
    expectError(otherBody, 422, 'IDEMPOTENCY_KEY_REUSED');
    slowRelease.resolve();
    const done = await first;
    expectFresh(done, 201);
    expect(done.body).toEqual({ call: 1, body: { n: 1 } });
    expectReplay(await request(), done);
    expect(slowCalls).toBe(1);
  });

  it('releases the key after a 5xx, so that a retry with it runs', async () => {
    const t = await newTenant();
    const request = () =>
      call(env.app, 'POST', '/test/flaky', {
        key: t.apiKey,
        body: { name: 'retry-me' },
        headers: { 'idempotency-key': 'flaky-key' },
      });
    expectError(await request(), 500, 'INTERNAL_ERROR');
    const retried = await request();
    expectFresh(retried, 201);
    expect(retried.body).toEqual({ name: 'retry-me', call: 2 });
    expectReplay(await request(), retried);
    expect(flakyCalls.get('retry-me')).toBe(2);
  });
});

describe('on a partner route (POST /partner/accounts)', () => {
  const account = (ref: string) => ({
    accountName: 'Idempotent Ltd',
    countryCode: 'US',
    planCode: 'business',
    externalRef: ref,
  });

  async function accountsWithRef(ref: string): Promise<number> {
    const { rows } = await env.tdb.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM accounts WHERE external_ref = $1',
      [ref],
    );
    return rows[0]!.n;
  }

  it('replays the created account, refuses another body, and scopes the key to the partner', async () => {
    const create = (partnerKey: string, body: unknown, key: string) =>
      call(env.app, 'POST', '/partner/accounts', {
        key: partnerKey,
        body,
        headers: { 'idempotency-key': key },
      });
    const first = await create(env.partner.partnerKey, account('idem-1'), 'acct-key');
    expectFresh(first, 201);
    expect(first.body.accountId).toMatch(/^acc_/);
    const again = await create(env.partner.partnerKey, account('idem-1'), 'acct-key');
    expectReplay(again, first);
    expect(await accountsWithRef('idem-1')).toBe(1);
    expectError(
      await create(env.partner.partnerKey, account('idem-2'), 'acct-key'),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await accountsWithRef('idem-2')).toBe(0);

    // Another partner's key space is its own.
    const other = await otherPartner(env.tdb.db);
    const theirs = await create(other.partnerKey, account('idem-1'), 'acct-key');
    expectFresh(theirs, 201);
    expect(theirs.body.accountId).not.toBe(first.body.accountId);
    expect(await accountsWithRef('idem-1')).toBe(2);

    // An account's keys are not the partner's: the same key on an account route is a new request.
    const t = await tenant(env.app, env.partner.partnerKey);
    expectFresh(await createContact(env.app, t, { phone: phone(1) }, 'acct-key'), 201);
  });

  it('replays a partner-route 4xx (duplicate externalRef) and lets validation failures go', async () => {
    const create = (body: unknown, key: string) =>
      call(env.app, 'POST', '/partner/accounts', {
        key: env.partner.partnerKey,
        body,
        headers: { 'idempotency-key': key },
      });
    expectFresh(await create(account('idem-dup'), 'dup-a'), 201);
    const conflict = await create(account('idem-dup'), 'dup-b');
    expectError(conflict, 409, 'CONFLICT');
    expectReplay(await create(account('idem-dup'), 'dup-b'), conflict);
    const invalid = await create({ ...account('idem-v'), planCode: 'no-such-plan' }, 'valid-later');
    expectError(invalid, 400, 'INVALID_REQUEST');
    expectFresh(await create(account('idem-v'), 'valid-later'), 201);
    expect(await accountsWithRef('idem-dup')).toBe(1);
    expect(await accountsWithRef('idem-v')).toBe(1);
  });
});

describe('after 24 hours', () => {
  const clock = new FakeClock(Date.parse('2026-11-22T10:00:00.000Z'));
  let app: App;
  beforeAll(async () => {
    app = await createTestApp(env.tdb.db, { now: clock.now });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('replays within the window and forgets the key after it', async () => {
    const t = await tenant(app, env.partner.partnerKey);
    const first = await createContact(app, t, { phone: phone(1), name: 'Day one' }, 'daily');
    expectFresh(first, 201);
    clock.advance(24 * 3600_000 - 60_000);
    expectReplay(await createContact(app, t, { phone: phone(1), name: 'Day one' }, 'daily'), first);
    expectError(await createContact(app, t, { phone: phone(2) }, 'daily'), 422, 'IDEMPOTENCY_KEY_REUSED');
    clock.advance(2 * 60_000);
    // The same request runs again (its phone is now taken: 409, not a replay of the 201)...
    const rerun = await createContact(app, t, { phone: phone(1), name: 'Day one' }, 'daily');
    expectError(rerun, 409, 'CONFLICT');
    expect(rerun.headers['idempotent-replayed']).toBeUndefined();
    // ...and that answer is what the key now replays.
    expectReplay(await createContact(app, t, { phone: phone(1), name: 'Day one' }, 'daily'), rerun);
    clock.advance(24 * 3600_000 + 1000);
    // Past the window again, another request may take the key.
    expectFresh(await createContact(app, t, { phone: phone(2), name: 'Day three' }, 'daily'), 201);
    expect(await contactCount(t)).toBe(2);
  });
});

describe('pruning', () => {
  it('deletes the keys past the 24-hour window and keeps the others', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    expectFresh(await createContact(env.app, t, { phone: phone(40) }, 'old-key'), 201);
    expectFresh(await createContact(env.app, t, { phone: phone(41) }, 'new-key'), 201);
    // The first key is made to look two days old.
    await env.tdb.db.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '2 days' WHERE owner_id = $1 AND key = 'old-key'`,
      [t.accountId],
    );
    expect(await pruneIdempotencyKeys(env.tdb.db, new Date())).toBeGreaterThanOrEqual(1);
    const { rows } = await env.tdb.db.query<{ key: string }>(
      'SELECT key FROM idempotency_keys WHERE owner_id = $1 ORDER BY key',
      [t.accountId],
    );
    expect(rows.map((r) => r.key)).toEqual(['new-key']);
  });
});

describe('the OpenAPI document', () => {
  it('lists the idempotency-key header and the 409 and 422 answers on POST /contacts', async () => {
    const res = await call(env.app, 'GET', '/api/v1/public/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    for (const [path, method] of [
      ['/contacts', 'post'],
      ['/bulk/contacts', 'post'],
      ['/partner/accounts', 'post'],
    ] as const) {
      const op = doc.paths[`/api/v1/public${path}`][method];
      const header = (op.parameters ?? []).find(
        (p: any) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
      );
      expect(header, `${method} ${path}`).toMatchObject({ in: 'header', required: false });
      expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['409', '422']));
    }
    const post = doc.paths['/api/v1/public/contacts'].post;
    const text = JSON.stringify(post.responses);
    for (const code of ['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'CONFLICT']) {
      expect(text, code).toContain(code);
    }
    // GET is not idempotency-keyed.
    const list = doc.paths['/api/v1/public/contacts'].get;
    expect((list.parameters ?? []).some((p: any) => p.name.toLowerCase() === 'idempotency-key')).toBe(false);
  });
});
