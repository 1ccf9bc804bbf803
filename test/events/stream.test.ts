// GET /events/stream over a real port (app.inject cannot stream): a sandbox message's events
// arrive as server-sent events; a client that reconnects with Last-Event-ID gets exactly what it
// missed, then the live ones; `types` filters; another tenant's events never appear; an event whose
// transaction commits late is still sent; an event written by another app (process) reaches the
// stream; a revoked key or suspended account ends it; and closing the server ends open streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX, type App } from '../../src/app.ts';
import { newId } from '../../src/kernel/values/ids.ts';
import { call, tenant } from '../helpers/client.ts';
import { createTestApp, onPostgres } from '../helpers/harness.ts';
import { customerWrote, sandboxTenant, useMessagingApp } from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';
import { SseClient } from '../helpers/sse.ts';
import { until } from '../helpers/wait.ts';

const env = useMessagingApp({ config: { eventStreamPollMs: 50, eventStreamHeartbeatMs: 300 } });
let base: string;
const clients: SseClient[] = [];

beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  const address = env.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  base = `http://127.0.0.1:${address.port}${API_PREFIX}`;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

async function open(
  headers: Record<string, string>,
  query: Record<string, string> = {},
  url = base,
): Promise<SseClient> {
  const qs = new URLSearchParams(query).toString();
  const client = await SseClient.open(`${url}/events/stream${qs ? `?${qs}` : ''}`, headers);
  clients.push(client);
  expect(client.status).toBe(200);
  return client;
}

/** Writes n contact.updated events of the account directly, as the outbox would; answers their ids. */
async function insertEvents(accountId: string, n: number): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => {
    const id = newId('event');
    const envelope = {
      id,
      type: 'contact.updated',
      createdAt: new Date().toISOString(),
      accountId,
      data: { id: `c${i}` },
    };
    return { id, payload: JSON.stringify(envelope) };
  });
  await env.tdb.db.query(
    `INSERT INTO events (id, account_id, type, payload, created_at)
     SELECT e.id, $1, 'contact.updated', e.payload, now() FROM jsonb_to_recordset($2::jsonb) AS e (id text, payload text)`,
    [accountId, JSON.stringify(rows)],
  );
  return rows.map((r) => r.id);
}

let phones = 2000;
/** Creates a contact (one contact.created event); answers its id. */
async function contact(key: string): Promise<string> {
  const res = await call(env.app, 'POST', '/contacts', { key, body: { phone: `+1415555${phones++}` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** The contact ids that a stream's contact events are about, in the order they arrived. */
const contactsIn = (client: SseClient) => client.messages.map((m) => m.json.data.id as string);

describe('GET /events/stream', () => {
  it('sends a sandbox message’s events as server-sent events, each the envelope webhooks get', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const stream = await open({ 'x-api-key': t.apiKey });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('x-request-id')).toMatch(/^req_/);

    const phone = '+14155552000';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'text', text: 'hello' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await until(
      () => stream.messages.some((m) => m.event === 'message.delivered'),
      10_000,
      () => `events so far: ${stream.messages.map((m) => m.event)}`,
    );
    const types = stream.messages.map((m) => m.event);
    expect(types).toContain('message.sent');
    for (const m of stream.messages) {
      expect(m.event).toBe(m.json.type);
      expect(m.id).toBe(m.json.id);
      expect(m.json.accountId).toBe(t.accountId);
      if (m.event?.startsWith('message.')) expect(m.json.data.id).toBe(sent.body.id);
      // The same envelope GET /events/{id} shows.
      const stored = await call(env.app, 'GET', `/events/${m.id}`, { key: t.apiKey });
      expect(stored.body).toEqual(m.json);
    }
    // In id order, once each.
    const ids = stream.messages.map((m) => m.id!);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('starts now without Last-Event-ID: events from before are not replayed', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    await contact(t.apiKey);
    const stream = await open({ 'x-api-key': t.apiKey });
    const after = await contact(t.apiKey);
    await stream.waitFor(1);
    expect(contactsIn(stream)).toEqual([after]);
  });

  it('resumes after Last-Event-ID with exactly the missed events, then live ones', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const first = await open({ 'x-api-key': t.apiKey });
    const before = [await contact(t.apiKey), await contact(t.apiKey), await contact(t.apiKey)];
    await first.waitFor(3);
    expect(contactsIn(first)).toEqual(before);
    const lastId = first.lastEventId!;
    await first.close();

    const missed: string[] = [];
    for (let i = 0; i < 4; i++) missed.push(await contact(t.apiKey));

    const second = await open({ 'x-api-key': t.apiKey, 'last-event-id': lastId });
    await second.waitFor(4);
    const live = [await contact(t.apiKey), await contact(t.apiKey)];
    await second.waitFor(6);
    // A repeat or a gap would show here: the first six are exactly the missed then the live ones.
    expect(contactsIn(second)).toEqual([...missed, ...live]);
    expect(second.messages.every((m) => m.id! > lastId)).toBe(true);

    // ?since=<event id> is the same as the header; ?since=<date-time> replays from that time.
    const bySince = await open({ 'x-api-key': t.apiKey }, { since: lastId });
    await bySince.waitFor(6);
    expect(contactsIn(bySince)).toEqual([...missed, ...live]);
    const all = await open({ 'x-api-key': t.apiKey }, { since: '2000-01-01T00:00:00Z' });
    await all.waitFor(9);
    expect(contactsIn(all)).toEqual([...before, ...missed, ...live]);
  });

  it('replays a long backlog (many pages) in id order, each event once', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const n = 2600;
    const ids = await insertEvents(t.accountId, n);
    const rows = ids.map((id) => ({ id }));
    const stream = await open({ 'x-api-key': t.apiKey }, { since: rows[0]!.id });
    await stream.waitFor(n - 1, 20_000);
    const live = await contact(t.apiKey);
    await stream.waitFor(n);
    expect(stream.messages.map((m) => m.json.id)).toEqual([
      ...rows.slice(1).map((r) => r.id),
      stream.messages.at(-1)!.json.id,
    ]);
    expect(stream.messages.at(-1)!.json.data.id).toBe(live);
  });

  it('sends only the types asked for', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const stream = await open({ 'x-api-key': t.apiKey }, { types: 'contact.deleted, conversation.*' });
    const id = await contact(t.apiKey);
    const deleted = await call(env.app, 'DELETE', `/contacts/${id}`, { key: t.apiKey });
    expect(deleted.status).toBe(204);
    const [m] = await stream.waitFor(1);
    expect(m!.event).toBe('contact.deleted');
    expect(m!.json.data.id).toBe(id);
    // The contact.created before it was passed over, not held back: a later event comes next.
    const other = await contact(t.apiKey);
    await call(env.app, 'DELETE', `/contacts/${other}`, { key: t.apiKey });
    await stream.waitFor(2);
    expect(stream.messages.map((x) => x.event)).toEqual(['contact.deleted', 'contact.deleted']);
  });

  it('never shows another tenant’s events; a partner key streams the account it names', async () => {
    const a = await tenant(env.app, env.partner.partnerKey);
    const b = await tenant(env.app, env.partner.partnerKey);
    const ofA = await open({ 'x-api-key': a.apiKey }, { since: '2000-01-01T00:00:00Z' });
    const viaPartner = await open(
      { 'x-api-key': env.partner.partnerKey, 'x-account-id': a.accountId },
      { since: '2000-01-01T00:00:00Z' },
    );
    await contact(b.apiKey);
    await contact(b.apiKey);
    const mine = await contact(a.apiKey);
    await ofA.waitFor(1);
    await viaPartner.waitFor(1);
    await contact(a.apiKey);
    await ofA.waitFor(2);
    expect(contactsIn(ofA)[0]).toBe(mine);
    for (const m of [...ofA.messages, ...viaPartner.messages]) expect(m.json.accountId).toBe(a.accountId);
    // B's last event id as Last-Event-ID on A's stream shows A's events after it, never B's.
    const ofB = await open({ 'x-api-key': b.apiKey }, { since: '2000-01-01T00:00:00Z' });
    await ofB.waitFor(2);
    for (const m of ofB.messages) expect(m.json.accountId).toBe(b.accountId);
  });

  it('sends a comment line while there is nothing to send', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const stream = await open({ 'x-api-key': t.apiKey });
    await until(
      () => stream.comments.includes('keep-alive'),
      5000,
      () => `comments: ${stream.comments}`,
    );
    expect(stream.messages).toEqual([]);
  });

  it('ends when its key is revoked or its account suspended', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const revoked = await open({ 'x-api-key': t.apiKey });
    const viaPartner = await open({ 'x-api-key': env.partner.partnerKey, 'x-account-id': t.accountId });
    const res = await call(env.app, 'DELETE', `/partner/accounts/${t.accountId}/keys/${t.keyId}`, {
      key: env.partner.partnerKey,
    });
    expect(res.status).toBe(204);
    await revoked.finished();
    expect(revoked.ended).toBe(true);
    expect(viaPartner.ended).toBe(false);
    const again = await fetch(`${base}/events/stream`, {
      headers: { 'x-api-key': t.apiKey, 'last-event-id': 'evt_01jv0000000000000000000000' },
    });
    expect(again.status).toBe(401);
    const suspended = await call(env.app, 'POST', `/partner/accounts/${t.accountId}/suspend`, {
      key: env.partner.partnerKey,
    });
    expect(suspended.status).toBe(200);
    await viaPartner.finished();
    expect(viaPartner.ended).toBe(true);
  });

  it.skipIf(!onPostgres)(
    'sends an event whose transaction commits after a later event was sent, without moving Last-Event-ID back',
    async () => {
      const t = await tenant(env.app, env.partner.partnerKey);
      const stream = await open({ 'x-api-key': t.apiKey });
      // More events before the late one than a look-back page holds: it must still be found.
      const before = await insertEvents(t.accountId, 1200);
      await stream.waitFor(1200);
      let lateId = '';
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The late event's id is made now, its transaction commits after the other event was sent.
      const late = env.tdb.db.transaction(async (tx) => {
        const e = await env.app.ctx.events.emit(tx, {
          type: 'contact.updated',
          accountId: t.accountId,
          data: { id: 'late' },
        });
        lateId = e.id;
        await held;
      });
      await until(
        () => lateId !== '',
        5000,
        () => 'the late event was not emitted',
      );
      const early = await contact(t.apiKey);
      await stream.waitFor(1201);
      expect(contactsIn(stream).at(-1)).toBe(early);
      release();
      await late;
      await stream.waitFor(1202);
      const last = stream.messages[1201]!;
      expect(last.json.id).toBe(lateId);
      expect(lateId > before.at(-1)! && lateId < stream.messages[1200]!.id!).toBe(true);
      // Sent with the stream's position as its id: a resume from it repeats nothing.
      expect(last.id).toBe(stream.messages[1200]!.id);
      expect(new Set(stream.messages.map((m) => m.json.id)).size).toBe(1202);
    },
  );

  it('refuses bad filters and starts naming the field, and needs a key', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const badType = await call(env.app, 'GET', '/events/stream', {
      key: t.apiKey,
      query: { types: 'message.nope' },
    });
    expectError(badType, 400, 'INVALID_REQUEST');
    expect(JSON.stringify(badType.body.error.details)).toContain('types');
    const badSince = await call(env.app, 'GET', '/events/stream', {
      key: t.apiKey,
      query: { since: 'yesterday' },
    });
    expectError(badSince, 400, 'INVALID_REQUEST');
    expect(JSON.stringify(badSince.body.error.details)).toContain('since');
    const badHeader = await call(env.app, 'GET', '/events/stream', {
      key: t.apiKey,
      headers: { 'last-event-id': 'nope' },
    });
    expectError(badHeader, 400, 'INVALID_REQUEST');
    expect(JSON.stringify(badHeader.body.error.details)).toContain('Last-Event-ID');
    const anonymous = await fetch(`${base}/events/stream`);
    expect(anonymous.status).toBe(401);
  });

  it('answers an injected request (which cannot stream) with what is there, then ends', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const id = await contact(t.apiKey);
    const res = await call(env.app, 'GET', '/events/stream', {
      key: t.apiKey,
      query: { since: '2000-01-01T00:00:00Z' },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.body).toContain('event: contact.created');
    expect(res.body).toContain(`"id":"${id}"`);
  });
});

describe('another app on the same database', () => {
  let other: App | null = null;
  afterAll(async () => {
    await other?.close();
  });

  it('streams what the first app writes, and its close ends open streams instead of waiting for them', async () => {
    other = await createTestApp(env.tdb.db, { config: { eventStreamPollMs: 50 } });
    await other.listen({ port: 0, host: '127.0.0.1' });
    const address = other.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    const t = await tenant(env.app, env.partner.partnerKey);
    const stream = await open({ 'x-api-key': t.apiKey }, {}, `http://127.0.0.1:${address.port}${API_PREFIX}`);
    // An event written through the first app (another process, on PostgreSQL) reaches the stream.
    const id = await contact(t.apiKey);
    await stream.waitFor(1);
    expect(contactsIn(stream)).toEqual([id]);
    const started = Date.now();
    const closing = other.close();
    other = null;
    await closing;
    await stream.finished();
    expect(stream.ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
