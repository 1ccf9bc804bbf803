// POST /bulk/contacts and GET /bulk/contacts/{jobId} as a client sees them: the 202 job, the
// per-item outcomes in item order (a bad row fails alone, with the error POST /contacts gives it),
// create and upsert modes, phones repeated inside a job, the events a job emits, the cap, replays
// with an Idempotency-Key, tenancy, the status progression, and a suspended account's job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { bootstrapPartner, call, listAll, type Reply, tenant } from '../helpers/client.ts';
import { createTestApp, createTestDatabase, type TestDatabase } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

// Chunks smaller than a job, so that jobs span many transactions.
const CHUNK = 25;
const env = useTestApp({ workers: true, config: { bulkChunkSize: CHUNK } });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A valid US number, distinct for each n below 10,000. */
const phone = (n: number) => `+1201555${String(n).padStart(4, '0')}`;

interface Tenant {
  accountId: string;
  apiKey: string;
}

async function newTenant(app: App = env.app): Promise<Tenant> {
  return tenant(app, env.partner.partnerKey);
}

async function submit(
  app: App,
  t: Tenant,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(app, 'POST', '/bulk/contacts', { key: t.apiKey, body, headers });
}

async function getJob(app: App, t: Tenant, jobId: string): Promise<Reply> {
  return call(app, 'GET', `/bulk/contacts/${jobId}`, { key: t.apiKey });
}

/** Polls the job until it has ended (completed or failed). */
async function finished(app: App, t: Tenant, jobId: string, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await getJob(app, t, jobId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Every contact of the account, through GET /contacts paging. */
function allContacts(app: App, t: Tenant): Promise<any[]> {
  return listAll(app, t.apiKey, '/contacts');
}

/** The events recorded for the account, as their envelopes, oldest first. */
async function eventsOf(t: Tenant, tdb: TestDatabase = env.tdb): Promise<any[]> {
  const { rows } = await tdb.db.query<{ payload: string }>(
    'SELECT payload FROM events WHERE account_id = $1 ORDER BY id',
    [t.accountId],
  );
  return rows.map((r) => JSON.parse(r.payload));
}

async function jobCount(t: Tenant, tdb: TestDatabase = env.tdb): Promise<number> {
  const { rows } = await tdb.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM bulk_jobs WHERE account_id = $1',
    [t.accountId],
  );
  return rows[0]!.n;
}

/** The 202 body of an accepted job. */
function expectAccepted(res: Reply, total: number, mode: 'upsert' | 'create'): void {
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body).toEqual({
    jobId: expect.stringMatching(/^job_/),
    status: 'queued',
    mode,
    total,
    processed: 0,
    succeeded: 0,
    failed: 0,
    error: null,
    createdAt: expect.stringMatching(ISO),
    startedAt: null,
    completedAt: null,
    results: [],
  });
}

describe('a 1,000-contact import with 10 bad rows', () => {
  let t: Tenant;
  let job: any;
  // Bad rows, each with the field its error must name. Their phones (9000+) are never created.
  const bad = new Map<number, { item: unknown; field: string }>([
    [0, { item: { phone: '12345', name: 'bad phone' }, field: 'phone' }],
    [7, { item: { phone: phone(9001), email: 'not-an-email' }, field: 'email' }],
    [24, { item: { phone: phone(9002), nickname: 'Bob' }, field: 'nickname' }],
    [25, { item: 'just a string', field: 'body' }],
    [99, { item: 42, field: 'body' }],
    [250, { item: { phone: phone(9003), tags: ['ok', 'bad/tag'] }, field: 'tags[1]' }],
    [499, { item: { name: 'no phone' }, field: 'phone' }],
    [500, { item: { phone: phone(9004), attributes: { '1st': 'x' } }, field: 'attributes.1st' }],
    [777, { item: null, field: 'body' }],
    [999, { item: { phone: 2015550100 }, field: 'phone' }],
  ]);
  const items = Array.from({ length: 1000 }, (_, i) =>
    bad.has(i) ? bad.get(i)!.item : { phone: phone(i), name: `Contact ${i}`, tags: ['import'] },
  );
  const goodIndexes = items.map((_, i) => i).filter((i) => !bad.has(i));

  beforeAll(async () => {
    t = await newTenant();
    const res = await submit(env.app, t, { contacts: items });
    expectAccepted(res, 1000, 'upsert');
    job = await finished(env.app, t, res.body.jobId);
  }, 120_000);

  it('completes with 990 succeeded and 10 failed, an outcome for every item in order', () => {
    expect(job).toMatchObject({
      status: 'completed',
      mode: 'upsert',
      total: 1000,
      processed: 1000,
      succeeded: 990,
      failed: 10,
      error: null,
      startedAt: expect.stringMatching(ISO),
      completedAt: expect.stringMatching(ISO),
    });
    expect(job.results.map((r: any) => r.index)).toEqual(items.map((_, i) => i));
    for (const i of goodIndexes) {
      expect(job.results[i]).toEqual({
        index: i,
        outcome: 'created',
        contactId: expect.stringMatching(/^ctc_/),
        error: null,
      });
    }
    expect(new Set(goodIndexes.map((i) => job.results[i].contactId)).size).toBe(990);
  });

  it('fails each bad row alone, naming its field, exactly as POST /contacts refuses it', async () => {
    for (const [index, { item, field }] of bad) {
      const result = job.results[index];
      expect(result, `item ${index}`).toEqual({
        index,
        outcome: 'failed',
        contactId: null,
        error: { code: 'INVALID_REQUEST', message: expect.any(String), details: expect.any(Array) },
      });
      expect(
        result.error.details.map((d: any) => d.field),
        `item ${index}: ${JSON.stringify(result.error)}`,
      ).toEqual([field]);
      const single = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: JSON.stringify(item) });
      expectError(single, 400, 'INVALID_REQUEST');
      expect(result.error, `item ${index}`).toEqual({
        code: single.body.error.code,
        message: single.body.error.message,
        details: single.body.error.details,
      });
    }
  });

  it('creates exactly the 990 good contacts, with the ids the results name', async () => {
    const contacts = await allContacts(env.app, t);
    expect(contacts).toHaveLength(990);
    const byId = new Map(contacts.map((c) => [c.id, c]));
    for (const i of goodIndexes) {
      const c = byId.get(job.results[i].contactId);
      expect(c, `item ${i}`).toMatchObject({ phone: phone(i), name: `Contact ${i}`, tags: ['import'] });
    }
    for (const n of [9001, 9002, 9003, 9004]) {
      expect(contacts.some((c) => c.phone === phone(n))).toBe(false);
    }
  });

  it('emits contact.created for each created contact and one bulk_job.completed with the counts', async () => {
    const events = await eventsOf(t);
    const created = events.filter((e) => e.type === 'contact.created');
    expect(created).toHaveLength(990);
    expect(new Set(created.map((e) => e.data.id))).toEqual(
      new Set(goodIndexes.map((i) => job.results[i].contactId)),
    );
    const completed = events.filter((e) => e.type === 'bulk_job.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'bulk_job.completed',
      createdAt: expect.stringMatching(ISO),
      accountId: t.accountId,
      data: {
        kind: 'contacts',
        jobId: job.jobId,
        status: 'completed',
        mode: 'upsert',
        total: 1000,
        processed: 1000,
        succeeded: 990,
        failed: 10,
        error: null,
        createdAt: job.createdAt,
        startedAt: job.startedAt,
        completedAt: job.completedAt,
      },
    });
    expect(events.filter((e) => !['contact.created', 'bulk_job.completed'].includes(e.type))).toEqual([]);
  });
});

describe('the request itself', () => {
  it('refuses more than 1,000 contacts and none at all, creating nothing', async () => {
    const t = await newTenant();
    const tooMany = await submit(env.app, t, {
      contacts: Array.from({ length: 1001 }, (_, i) => ({ phone: phone(i) })),
    });
    expectError(tooMany, 400, 'INVALID_REQUEST');
    expect(tooMany.body.error.details).toEqual([{ field: 'contacts', issue: expect.any(String) }]);
    const none = await submit(env.app, t, { contacts: [] });
    expectError(none, 400, 'INVALID_REQUEST');
    expect(none.body.error.details).toEqual([{ field: 'contacts', issue: expect.any(String) }]);
    const badMode = await submit(env.app, t, { contacts: [{ phone: phone(1) }], mode: 'merge' });
    expectError(badMode, 400, 'INVALID_REQUEST');
    expect(badMode.body.error.details.map((d: any) => d.field)).toEqual(['mode']);
    const missing = await submit(env.app, t, {});
    expectError(missing, 400, 'INVALID_REQUEST');
    expect(missing.body.error.details.map((d: any) => d.field)).toEqual(['contacts']);

    await sleep(300);
    expect(await jobCount(t)).toBe(0);
    expect(await allContacts(env.app, t)).toEqual([]);
  });

  it('accepts exactly 1,000 contacts', async () => {
    const t = await newTenant();
    const res = await submit(env.app, t, {
      contacts: Array.from({ length: 1000 }, (_, i) => ({ phone: phone(i) })),
      mode: 'create',
    });
    expectAccepted(res, 1000, 'create');
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', succeeded: 1000, failed: 0 });
  });

  it('replays the first answer for the same Idempotency-Key, without a second job', async () => {
    const t = await newTenant();
    const body = { contacts: [{ phone: phone(1) }, { phone: phone(2) }, { phone: phone(3) }] };
    const headers = { 'idempotency-key': 'import-2026-11-22' };
    const first = await submit(env.app, t, body, headers);
    expectAccepted(first, 3, 'upsert');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await submit(env.app, t, body, headers);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);

    const job = await finished(env.app, t, first.body.jobId);
    expect(job).toMatchObject({ status: 'completed', succeeded: 3 });
    // After the job ran, the replay is still the first answer (the queued job), not a new job.
    const later = await submit(env.app, t, body, headers);
    expect(later.status).toBe(202);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body).toEqual(first.body);
    const other = await submit(env.app, t, { contacts: [{ phone: phone(4) }] }, headers);
    expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED');

    await sleep(300);
    expect(await jobCount(t)).toBe(1);
    expect(await allContacts(env.app, t)).toHaveLength(3);
    expect((await eventsOf(t)).filter((e) => e.type === 'bulk_job.completed')).toHaveLength(1);
  });

  it("answers 404 for another tenant's job and for an unknown id", async () => {
    const owner = await newTenant();
    const stranger = await newTenant();
    const res = await submit(env.app, owner, { contacts: [{ phone: phone(1) }] });
    expect(res.status).toBe(202);
    expectError(await getJob(env.app, stranger, res.body.jobId), 404, 'RESOURCE_NOT_FOUND');
    expectError(await getJob(env.app, owner, 'job_00000000000000000000000000'), 404, 'RESOURCE_NOT_FOUND');
    expect((await finished(env.app, owner, res.body.jobId)).status).toBe('completed');
    // Still not the stranger's once it has run.
    expectError(await getJob(env.app, stranger, res.body.jobId), 404, 'RESOURCE_NOT_FOUND');
  });
});

describe('modes and phones the account already has', () => {
  it('create mode fails an existing phone with CONFLICT naming the contact, and leaves it as it was', async () => {
    const t = await newTenant();
    const existing = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: phone(10), name: 'Old', email: 'old@example.com', tags: ['a'], attributes: { x: 1 } },
    });
    expect(existing.status).toBe(201);
    const res = await submit(env.app, t, {
      mode: 'create',
      contacts: [{ phone: phone(11) }, { phone: '(201) 555-0010', name: 'New' }, { phone: phone(12) }],
    });
    expectAccepted(res, 3, 'create');
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', processed: 3, succeeded: 2, failed: 1 });
    expect(job.results.map((r: any) => r.outcome)).toEqual(['created', 'failed', 'created']);
    expect(job.results[1]).toEqual({
      index: 1,
      outcome: 'failed',
      contactId: null,
      error: {
        code: 'CONFLICT',
        message: expect.any(String),
        details: [{ field: 'phone', issue: expect.any(String), contactId: existing.body.id }],
      },
    });
    // The same error POST /contacts gives for that phone.
    const single = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body: { phone: phone(10) } });
    expectError(single, 409, 'CONFLICT');
    expect(job.results[1].error).toEqual({
      code: 'CONFLICT',
      message: single.body.error.message,
      details: single.body.error.details,
    });

    const after = await call(env.app, 'GET', `/contacts/${existing.body.id}`, { key: t.apiKey });
    expect(after.body).toEqual(existing.body);
    expect(await allContacts(env.app, t)).toHaveLength(3);
  });

  it('upsert mode updates an existing phone: fields given replace, attributes merge, the rest stays', async () => {
    const t = await newTenant();
    const existing = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: {
        phone: phone(20),
        name: 'Old',
        email: 'old@example.com',
        tags: ['a', 'b'],
        attributes: { x: 1, y: 'keep me?' },
        optedIn: true,
        marketingOptOut: true,
      },
    });
    expect(existing.status).toBe(201);
    const res = await submit(env.app, t, {
      contacts: [
        { phone: '+1 201-555-0020', name: 'New', tags: ['c'], attributes: { y: 'changed', z: true } },
        { phone: phone(21), name: 'Fresh' },
      ],
    });
    expectAccepted(res, 2, 'upsert');
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', succeeded: 2, failed: 0 });
    expect(job.results).toEqual([
      { index: 0, outcome: 'updated', contactId: existing.body.id, error: null },
      { index: 1, outcome: 'created', contactId: expect.stringMatching(/^ctc_/), error: null },
    ]);
    const after = await call(env.app, 'GET', `/contacts/${existing.body.id}`, { key: t.apiKey });
    expect(after.body).toMatchObject({
      id: existing.body.id,
      phone: phone(20),
      name: 'New',
      email: 'old@example.com',
      tags: ['c'],
      attributes: { x: 1, y: 'changed', z: true },
      optedIn: true,
      marketingOptOut: true,
      createdAt: existing.body.createdAt,
    });
    const events = await eventsOf(t);
    const updated = events.filter((e) => e.type === 'contact.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data).toEqual(after.body);
    expect(events.filter((e) => e.type === 'contact.created').map((e) => e.data.id)).toEqual([
      existing.body.id,
      job.results[1].contactId,
    ]);
    expect(events.filter((e) => e.type === 'bulk_job.completed').map((e) => e.data)).toEqual([
      expect.objectContaining({ jobId: job.jobId, status: 'completed', succeeded: 2, failed: 0 }),
    ]);
  });

  it('imports marketingOptOut: a new row sets it, an upsert row changes it, a row without it keeps it', async () => {
    const t = await newTenant();
    const made = async (body: Record<string, unknown>) => {
      const res = await call(env.app, 'POST', '/contacts', { key: t.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    const stopped = await made({ phone: phone(40), marketingOptOut: true });
    const keeps = await made({ phone: phone(41), marketingOptOut: true, optedIn: true });
    const res = await submit(env.app, t, {
      contacts: [
        { phone: phone(42), marketingOptOut: true },
        { phone: phone(43) },
        { phone: phone(40), marketingOptOut: false },
        { phone: phone(41), name: 'Kept' },
        { phone: phone(44), marketingOptOut: 'yes' },
      ],
    });
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', succeeded: 4, failed: 1 });
    expect(job.results.map((r: any) => r.outcome)).toEqual([
      'created',
      'created',
      'updated',
      'updated',
      'failed',
    ]);
    expect(job.results[4].error.details.map((d: any) => d.field)).toEqual(['marketingOptOut']);
    const byPhone = new Map((await allContacts(env.app, t)).map((c) => [c.phone, c]));
    expect(byPhone.get(phone(42))).toMatchObject({ optedIn: false, marketingOptOut: true });
    expect(byPhone.get(phone(43))).toMatchObject({ optedIn: false, marketingOptOut: false });
    expect(byPhone.get(phone(40))).toMatchObject({ id: stopped.id, marketingOptOut: false });
    expect(byPhone.get(phone(41))).toMatchObject({
      id: keeps.id,
      name: 'Kept',
      optedIn: true,
      marketingOptOut: true,
    });
    expect(byPhone.has(phone(44))).toBe(false);
    // The events show the contacts as the API does.
    const events = await eventsOf(t);
    const created = events.find((e) => e.type === 'contact.created' && e.data.phone === phone(42));
    expect(created.data).toEqual(byPhone.get(phone(42)));
    const updated = events.find((e) => e.type === 'contact.updated' && e.data.id === stopped.id);
    expect(updated.data).toEqual(byPhone.get(phone(40)));
  });

  it('upsert mode fails a row whose merged attributes would exceed 50, as PATCH does, leaving the contact', async () => {
    const t = await newTenant();
    const forty = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`a${i}`, i]));
    const existing = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: phone(30), attributes: forty },
    });
    expect(existing.status).toBe(201);
    const more = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`b${i}`, i]));
    const patch = await call(env.app, 'PATCH', `/contacts/${existing.body.id}`, {
      key: t.apiKey,
      body: { attributes: more },
    });
    expectError(patch, 400, 'INVALID_REQUEST');
    const res = await submit(env.app, t, { contacts: [{ phone: phone(30), attributes: more }] });
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', succeeded: 0, failed: 1 });
    expect(job.results[0]).toEqual({
      index: 0,
      outcome: 'failed',
      contactId: null,
      error: {
        code: 'INVALID_REQUEST',
        message: patch.body.error.message,
        details: patch.body.error.details,
      },
    });
    const after = await call(env.app, 'GET', `/contacts/${existing.body.id}`, { key: t.apiKey });
    expect(after.body).toEqual(existing.body);
  });

  it('upsert mode applies a phone repeated within the job after its first row', async () => {
    const t = await newTenant();
    // The repeats straddle chunk boundaries as well as sitting inside one.
    const contacts: unknown[] = Array.from({ length: 60 }, (_, i) => ({ phone: phone(100 + i) }));
    contacts[0] = { phone: phone(30), name: 'first', tags: ['a'], attributes: { n: 1 } };
    contacts[1] = { phone: '2015550030', name: 'second', attributes: { m: 2 } };
    contacts[CHUNK - 1] = { phone: phone(31), name: 'one' };
    contacts[CHUNK] = { phone: phone(31), name: 'two' };
    contacts[CHUNK + 1] = { phone: phone(31), email: 'three@example.com' };
    const res = await submit(env.app, t, { contacts });
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', processed: 60, succeeded: 60, failed: 0 });
    expect(job.results.map((r: any) => r.index)).toEqual(contacts.map((_, i) => i));
    expect(job.results[0].outcome).toBe('created');
    expect(job.results[1]).toEqual({
      index: 1,
      outcome: 'updated',
      contactId: job.results[0].contactId,
      error: null,
    });
    expect(job.results[CHUNK - 1].outcome).toBe('created');
    for (const i of [CHUNK, CHUNK + 1]) {
      expect(job.results[i]).toEqual({
        index: i,
        outcome: 'updated',
        contactId: job.results[CHUNK - 1].contactId,
        error: null,
      });
    }
    const contactsNow = await allContacts(env.app, t);
    expect(contactsNow).toHaveLength(57);
    expect(contactsNow.find((c) => c.phone === phone(30))).toMatchObject({
      name: 'second',
      tags: ['a'],
      attributes: { n: 1, m: 2 },
    });
    expect(contactsNow.find((c) => c.phone === phone(31))).toMatchObject({
      name: 'two',
      email: 'three@example.com',
    });
    const events = await eventsOf(t);
    expect(events.filter((e) => e.type === 'contact.created')).toHaveLength(57);
    expect(events.filter((e) => e.type === 'contact.updated')).toHaveLength(3);
  });

  it('create mode fails a phone repeated within the job with CONFLICT naming the first row', async () => {
    const t = await newTenant();
    const res = await submit(env.app, t, {
      mode: 'create',
      contacts: [
        { phone: phone(40), name: 'first' },
        { phone: phone(41) },
        { phone: phone(40), name: 'second' },
      ],
    });
    const job = await finished(env.app, t, res.body.jobId);
    expect(job).toMatchObject({ status: 'completed', succeeded: 2, failed: 1 });
    expect(job.results[2]).toEqual({
      index: 2,
      outcome: 'failed',
      contactId: null,
      error: {
        code: 'CONFLICT',
        message: expect.any(String),
        details: [{ field: 'phone', issue: expect.any(String), contactId: job.results[0].contactId }],
      },
    });
    const first = await call(env.app, 'GET', `/contacts/${job.results[0].contactId}`, { key: t.apiKey });
    expect(first.body).toMatchObject({ phone: phone(40), name: 'first' });
    expect(await allContacts(env.app, t)).toHaveLength(2);
  });
});

// Its own database, so that no worker runs until the test starts one.
describe('before and while workers run', () => {
  let tdb: TestDatabase;
  let accepting: App;
  let working: App | null = null;
  let partnerKey: string;
  let queuedTenant: Tenant;
  let suspendedTenant: Tenant;
  let queuedJobId: string;
  let suspendedJobId: string;
  const items = Array.from({ length: 1000 }, (_, i) => ({ phone: phone(i) }));

  beforeAll(async () => {
    tdb = await createTestDatabase();
    // On PGlite, an app without workers that starts on a database whose queues it created itself
    // cannot enqueue (pg-boss looks the queue up outside the transaction, on the one connection, and
    // waits forever). An app started once before creates them, so the accepting app finds them.
    await (await createTestApp(tdb.db, {})).close();
    accepting = await createTestApp(tdb.db, {});
    partnerKey = (await bootstrapPartner(accepting)).partnerKey;
    queuedTenant = await tenant(accepting, partnerKey);
    suspendedTenant = await tenant(accepting, partnerKey);
  });
  afterAll(async () => {
    await working?.close();
    await accepting?.close();
    await tdb?.drop();
  });

  it('keeps an accepted job queued, with nothing processed, until a worker runs', async () => {
    const res = await submit(accepting, queuedTenant, { contacts: items });
    expectAccepted(res, 1000, 'upsert');
    queuedJobId = res.body.jobId;
    await sleep(1000);
    const still = await getJob(accepting, queuedTenant, queuedJobId);
    expect(still.status).toBe(200);
    expect(still.body).toEqual(res.body);
    expect(await allContacts(accepting, queuedTenant)).toEqual([]);
  });

  it('accepts a job for an account that is then suspended', async () => {
    const res = await submit(accepting, suspendedTenant, { contacts: items.slice(0, 50) });
    expectAccepted(res, 50, 'upsert');
    suspendedJobId = res.body.jobId;
    const suspend = await call(accepting, 'POST', `/partner/accounts/${suspendedTenant.accountId}/suspend`, {
      key: partnerKey,
    });
    expect(suspend.status, JSON.stringify(suspend.body)).toBe(200);
    expect(suspend.body.status).toBe('SUSPENDED');
    expectError(await getJob(accepting, suspendedTenant, suspendedJobId), 403, 'ACCOUNT_SUSPENDED');
  });

  it('then moves queued → processing → completed, the results growing in item order', async () => {
    working = await createTestApp(tdb.db, { workers: true, config: { bulkChunkSize: 10 } });
    const seen: any[] = [];
    const deadline = Date.now() + 90_000;
    for (;;) {
      const res = await getJob(accepting, queuedTenant, queuedJobId);
      expect(res.status).toBe(200);
      seen.push(res.body);
      if (res.body.status === 'completed' || res.body.status === 'failed' || Date.now() > deadline) break;
      await sleep(10);
    }
    const order = ['queued', 'processing', 'completed'];
    for (let i = 1; i < seen.length; i++) {
      expect(order.indexOf(seen[i].status)).toBeGreaterThanOrEqual(order.indexOf(seen[i - 1].status));
      expect(seen[i].processed).toBeGreaterThanOrEqual(seen[i - 1].processed);
    }
    for (const s of seen) {
      expect(s.results.map((r: any) => r.index)).toEqual(Array.from({ length: s.processed }, (_, i) => i));
      expect(s.succeeded + s.failed).toBe(s.processed);
      if (s.status === 'queued') expect(s).toMatchObject({ processed: 0, startedAt: null });
      if (s.status === 'processing') {
        expect(s.startedAt).toMatch(ISO);
        expect(s.completedAt).toBeNull();
      }
    }
    const during = seen.filter((s) => s.status === 'processing' && s.processed > 0 && s.processed < 1000);
    expect(during.length, `statuses seen: ${[...new Set(seen.map((s) => s.status))]}`).toBeGreaterThan(0);
    expect(during.every((s) => s.processed % 10 === 0)).toBe(true);
    expect(seen.at(-1)).toMatchObject({ status: 'completed', processed: 1000, succeeded: 1000, failed: 0 });
    expect(await allContacts(accepting, queuedTenant)).toHaveLength(1000);
  }, 120_000);

  it("ends a suspended account's job as failed with ACCOUNT_SUSPENDED, importing nothing", async () => {
    // The suspended key cannot read the job; the bulk_job.completed event tells when it ended.
    const deadline = Date.now() + 60_000;
    let ended: any[] = [];
    while (ended.length === 0 && Date.now() < deadline) {
      ended = (await eventsOf(suspendedTenant, tdb)).filter((e) => e.type === 'bulk_job.completed');
      if (ended.length === 0) await sleep(100);
    }
    expect(ended).toHaveLength(1);
    expect(ended[0].data).toMatchObject({
      kind: 'contacts',
      jobId: suspendedJobId,
      status: 'failed',
      processed: 0,
      succeeded: 0,
      failed: 0,
      error: { code: 'ACCOUNT_SUSPENDED', message: expect.any(String) },
    });
    const reactivate = await call(
      accepting,
      'POST',
      `/partner/accounts/${suspendedTenant.accountId}/reactivate`,
      { key: partnerKey },
    );
    expect(reactivate.status).toBe(200);
    const job = await getJob(accepting, suspendedTenant, suspendedJobId);
    expect(job.body).toEqual({
      jobId: suspendedJobId,
      status: 'failed',
      mode: 'upsert',
      total: 50,
      processed: 0,
      succeeded: 0,
      failed: 0,
      error: { code: 'ACCOUNT_SUSPENDED', message: expect.any(String) },
      createdAt: expect.stringMatching(ISO),
      startedAt: expect.stringMatching(ISO),
      completedAt: expect.stringMatching(ISO),
      results: [],
    });
    // Reactivating does not resume it.
    await sleep(500);
    expect((await getJob(accepting, suspendedTenant, suspendedJobId)).body.status).toBe('failed');
    expect(await allContacts(accepting, suspendedTenant)).toEqual([]);
    expect((await eventsOf(suspendedTenant, tdb)).filter((e) => e.type.startsWith('contact.'))).toEqual([]);
  }, 90_000);
});
