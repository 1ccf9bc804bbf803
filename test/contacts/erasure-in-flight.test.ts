// Erasure against work in flight (docs/history/issue-43.md, "Erasure against work in flight"): work that
// read a contact before its erasure and writes after it writes nothing personal. Each case is made
// to happen, not left to timing:
//   - on both databases, the answers that work waits for across transactions are held until the
//     erasure has committed: a receiver's echo of a webhook, Meta's answer to a hand-over, the
//     customer's file being fetched; then a status callback for the erased message;
//   - on PostgreSQL, where READ COMMITTED lets transactions interleave, a writer is stopped half-way
//     on a lock a transaction of the test holds (its wallet, a key, a row), the erasure is started,
//     and the writer let go: a call status callback, a sequence step, a rule's send, a campaign
//     round, a bulk import. (PGlite runs one transaction at a time: they cannot interleave there.)
// After each, a scan of every column of every table finds neither the number nor the name.
import { createHmac } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeWhatsAppCloud, inboundMessages } from '../fakes/whatsapp-cloud.ts';
import { call, type Reply } from '../helpers/client.ts';
import { onPostgres } from '../helpers/harness.ts';
import { approvedTemplate, credit, whatsappTenant } from '../helpers/messaging.ts';
import { placesHolding } from '../helpers/personal-data.ts';
import { type Answer, type Received, Receiver } from '../helpers/receiver.ts';
import { useTestApp } from '../helpers/setup.ts';
import { postCallStatus } from '../helpers/voice.ts';
import { eventually, until } from '../helpers/wait.ts';

let fake: FakeWhatsAppCloud;
let receiver: Receiver;
/** How the receiver answers each account's deliveries (an echo of what it got, unless told). */
const answers = new Map<string, (r: Received) => Answer>();
beforeAll(async () => {
  fake = await FakeWhatsAppCloud.start({ autoApprove: true });
  receiver = await Receiver.start(
    (r) => answers.get(r.json?.accountId)?.(r) ?? { status: 200, body: r.body },
  );
});
const env = useTestApp({
  workers: true,
  config: () => ({
    whatsappGraphUrl: fake.graphUrl,
    webhookAllowedHosts: ['127.0.0.1'],
    // The sandbox plays a call's first step, then waits: the test says what the provider reports.
    voiceSandboxStepMs: 600_000,
    // A chunk per item: a bulk import can be stopped between two of them.
    bulkChunkSize: 1,
    campaignPollMs: 50,
  }),
});
beforeAll(async () => {
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await fake?.close();
  await receiver?.close();
});

interface Person {
  phone: string;
  name: string;
}
let people = 0;
/** A person of this test alone (the scans look through the whole database). */
function person(surname: string): Person {
  people++;
  return { phone: `+1415555${7900 + people}`, name: `Ysolde ${surname}` };
}

async function expectNowhere(p: Person): Promise<void> {
  for (const needle of [p.phone.slice(1), p.name]) {
    expect({ needle, places: await placesHolding(env.tdb.db, needle) }).toEqual({ needle, places: [] });
  }
}

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

async function ok(res: Promise<Reply>, status: number): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** A tenant on the fake WhatsApp Cloud API with money, a webhook to the receiver and an approved MARKETING template. */
async function business(label: string, options: { metaReportsSent?: boolean } = {}) {
  const { app } = env;
  const t = await whatsappTenant(app, env.partner.partnerKey, fake, { accountName: label }, options);
  await credit(app, env.partner.partnerKey, t.accountId, '20.00');
  const a = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) =>
    call(app, method, path, { key: t.apiKey, body });
  await ok(a('POST', '/webhooks', { url: receiver.url(), events: ['*'] }), 201);
  await approvedTemplate(app, t.apiKey, {
    name: 'in_flight_news',
    category: 'MARKETING',
    body: 'News for {{1}} today.',
    examples: ['Ann'],
  });
  const contactOf = async (p: Person) => (await ok(a('POST', '/contacts', p), 201)).id as string;
  const erase = (contactId: string) => a('DELETE', `/contacts/${contactId}?erase=true`);
  /** Meta's callback (signed with the app secret), as the fake would post it. */
  const fromMeta = async (body: object) => {
    const payload = JSON.stringify(body);
    const signature = createHmac('sha256', t.business.appSecret).update(payload).digest('hex');
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1/callbacks/whatsapp/${t.accountId}`,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${signature}` },
      payload,
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  return { t, a, contactOf, erase, fromMeta };
}

const NEWS = {
  templateName: 'in_flight_news',
  templateLanguage: 'en_US',
  parameters: ['{{ contact.name }}'],
};

describe('work waiting on an answer across the erasure', () => {
  it('keeps no receiver answer to a delivery sent before the erasure and answered after it', async () => {
    const b = await business('in flight: webhook answer');
    const p = person('Alderwick');
    const held = gate();
    answers.set(b.t.accountId, (r) => ({ status: 200, body: r.body, until: held.opened }));
    const contactId = await b.contactOf(p);
    const sent = () =>
      receiver.received.find((r) => r.json?.type === 'contact.created' && r.json.data.id === contactId);
    await until(
      () => sent() !== undefined,
      15_000,
      () => 'contact.created was not delivered',
    );

    expect((await b.erase(contactId)).status).toBe(204);
    held.open();
    await until(
      async () =>
        (
          await env.tdb.db.query(
            `SELECT 1 FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
              WHERE d.event_id = $1`,
            [sent()!.json.id],
          )
        ).rows.length > 0,
      15_000,
      () => 'the answer was not recorded',
    );
    await expectNowhere(p);
    // The event is still listed, erased; a rule cannot be tried on what it no longer says.
    const events = await ok(b.a('GET', '/events?limit=100'), 200);
    expect(events.data.find((e: any) => e.id === sent()!.json.id)).toEqual({
      ...sent()!.json,
      data: { erased: true },
    });
    const rule = await ok(
      b.a('POST', '/rules', {
        name: 'tag new contacts',
        trigger: { event: 'contact.created' },
        actions: [{ type: 'add_tag', tag: 'new' }],
      }),
      201,
    );
    expect((await b.a('POST', `/rules/${rule.id}/test`, { eventId: sent()!.json.id })).status).toBe(404);
  }, 60_000);

  it('keeps no provider id of a message handed over before the erasure, and sends none claimed behind it', async () => {
    const b = await business('in flight: hand-over', { metaReportsSent: false });
    const p = person('Birchmont');
    const held = gate();
    const toThem = (req: { method: string; body: any }) =>
      req.method === 'POST' && String(req.body?.to ?? '').replace(/\D/g, '') === p.phone.slice(1);
    fake.hold = (req) => (toThem(req) ? held.opened : undefined);
    const contactId = await b.contactOf(p);
    const send = () => ok(b.a('POST', '/messages', { ...NEWS, to: p.phone, parameters: [p.name] }), 202);
    const first = await send();
    await until(
      () => fake.requests.some(toThem),
      15_000,
      () => 'the message was not handed over',
    );
    // A second one to the number is claimed too, and waits for its turn behind the first.
    const second = await send();
    const row = async (id: string) =>
      (
        await env.tdb.db.query<{ accepted_at: Date | null; handover_started_at: Date | null }>(
          'SELECT accepted_at, handover_started_at FROM messages WHERE id = $1',
          [id],
        )
      ).rows[0]!;
    await until(
      async () => (await row(second.id)).handover_started_at !== null,
      15_000,
      () => 'the second message was not claimed',
    );

    expect((await b.erase(contactId)).status).toBe(204);
    held.open();
    fake.hold = undefined;
    await until(
      async () => (await row(first.id)).accepted_at !== null,
      15_000,
      () => "Meta's answer was not recorded",
    );
    const failed = await eventually(
      () => b.a('GET', `/messages/${second.id}`),
      (r) => r.body.status === 'failed',
      15_000,
    );
    expect(failed.body.error).toMatchObject({ code: 'CONTACT_ERASED' });
    expect(fake.requests.filter(toThem)).toHaveLength(1);
    // Meta's `sent` for the first comes next, naming the number and the wamid: nothing knows it any more.
    const wamid = fake.sent.find((s) => toThem({ method: 'POST', body: s.body }))!.wamid;
    await b.fromMeta(
      fake.statusPayload(b.t.business, { wamid, status: 'sent', recipientId: p.phone.slice(1) }),
    );

    const after = await ok(b.a('GET', `/messages/${first.id}`), 200);
    expect([after.to, after.providerMessageId]).toEqual(['erased', null]);
    await expectNowhere(p);
    expect(await placesHolding(env.tdb.db, wamid)).toEqual([]);
  }, 60_000);

  it("keeps no customer's file fetched before the erasure and stored after it", async () => {
    const b = await business('in flight: file');
    const p = person('Cindervale');
    const file = fake.addMedia(
      b.t.business,
      Buffer.from(`%PDF-1.4 ${p.name}`),
      'application/pdf',
      'passport.pdf',
    );
    const held = gate();
    fake.hold = (req) => (req.method === 'GET' && req.path.includes(file.id) ? held.opened : undefined);
    const contactId = await b.contactOf(p);
    await b.fromMeta(
      fake.inboundPayload(b.t.business, {
        from: p.phone,
        message: inboundMessages.document({ id: file.id, filename: `${p.name} passport.pdf` }),
      }),
    );
    await until(
      () => fake.requests.some((r) => r.method === 'GET' && r.path.includes(file.id)),
      15_000,
      () => 'the file was not asked for',
    );

    expect((await b.erase(contactId)).status).toBe(204);
    held.open();
    fake.hold = undefined;
    await until(
      async () =>
        (
          await env.tdb.db.query(
            `SELECT 1 FROM pgboss.job WHERE name = 'media.fetch-inbound' AND data->>'accountId' = $1
                AND state = 'completed'`,
            [b.t.accountId],
          )
        ).rows.length > 0,
      30_000,
      () => 'the fetch did not end',
    );
    await expectNowhere(p);
  }, 60_000);
});

/** A transaction of the test's own connection, holding what `sql` locks until released. */
async function holding(
  sql: string,
  params: unknown[],
): Promise<{ pid: number; release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: env.tdb.url! });
  await client.connect();
  await client.query('BEGIN');
  await client.query(sql, params);
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return {
    pid: rows[0]!.pid,
    release: async () => {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** The backends waiting for a lock that `pid` holds. */
async function waitingOn(pid: number): Promise<number[]> {
  const { rows } = await env.tdb.db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
    [pid],
  );
  return rows.map((r) => r.pid);
}

/**
 * The interleaving READ COMMITTED allows, made to happen: a writer, started by the caller, stops
 * on what `held` locks, having read what it writes; the erasure starts, and is let run as far as it
 * goes (to its end, or until it waits for the writer); then the writer goes on.
 */
async function eraseWhileStopped(held: Awaited<ReturnType<typeof holding>>, erase: () => Promise<Reply>) {
  await until(
    async () => (await waitingOn(held.pid)).length > 0,
    20_000,
    () => 'the writer never stopped',
  );
  const [writer] = await waitingOn(held.pid);
  let settled = false;
  const erasing = erase().finally(() => {
    settled = true;
  });
  await until(
    async () => settled || (await waitingOn(writer!)).length > 0,
    20_000,
    () => 'the erasure neither ended nor waited',
  );
  await held.release();
  expect((await erasing).status).toBe(204);
}

/** The account's wallet, locked as a send locks it (a foreign key's check still passes). */
const walletOf = (accountId: string) =>
  holding('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);

async function messagesCausedBy(accountId: string, where: string): Promise<number> {
  const { rows } = await env.tdb.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND ${where}`,
    [accountId],
  );
  return rows[0]!.n;
}

describe.runIf(onPostgres)('writers stopped half-way across the erasure (PostgreSQL)', () => {
  it('a call status callback that locked the call first: its event is erased with the rest', async () => {
    const b = await business('in flight: call status');
    const p = person('Dunmerrow');
    const contactId = await b.contactOf(p);
    const script = await ok(
      b.a('POST', '/voice/scripts', {
        name: 'hello',
        type: 'tts',
        tts: { text: 'Hello {{ contact.name }}' },
      }),
      201,
    );
    await ok(b.a('POST', `/voice/scripts/${script.id}/publish`), 200);
    const calls = await ok(
      b.a('POST', '/webhooks', { url: receiver.url(), events: ['call.status_changed'] }),
      201,
    );
    const placed = await ok(b.a('POST', '/voice/calls', { to: p.phone, scriptId: script.id }), 202);
    const status = async () =>
      (await env.tdb.db.query<{ status: string }>('SELECT status FROM calls WHERE id = $1', [placed.id]))
        .rows[0]!.status;
    await until(
      async () => (await status()) === 'initiated',
      20_000,
      () => 'the call was not placed',
    );
    // The callback's event waits, the call locked, to be written with its delivery to a webhook
    // of call events alone (whose row the test holds against the delivery's foreign key check).
    const held = await holding('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [calls.id]);
    const callback = postCallStatus(env.app, env.tdb.db, b.t.accountId, placed.id, {
      CallStatus: 'completed',
      SequenceNumber: '99',
      CallDuration: '7',
      To: p.phone,
      From: '+15005550000',
    });
    await eraseWhileStopped(held, () => b.erase(contactId));
    await callback;
    await expectNowhere(p);
  }, 60_000);

  it('a sequence step that read its contact first: its message is erased with the rest', async () => {
    const b = await business('in flight: sequence step');
    const p = person('Elmsgrove');
    const contactId = await b.contactOf(p);
    const { templateName, templateLanguage, parameters } = NEWS;
    const sequence = await ok(
      b.a('POST', '/sequences', {
        name: 'drip',
        steps: [{ delay: { after: 'PT1S' }, message: { templateName, templateLanguage, parameters } }],
      }),
      201,
    );
    await ok(b.a('POST', `/sequences/${sequence.id}/publish`), 200);
    const held = await walletOf(b.t.accountId);
    await ok(b.a('POST', `/sequences/${sequence.id}/enrollments`, { contactId }), 201);
    await eraseWhileStopped(held, () => b.erase(contactId));
    await until(
      async () => (await messagesCausedBy(b.t.accountId, `caused_by->>'kind' = 'sequence'`)) > 0,
      20_000,
      () => 'the step was not sent',
    );
    await expectNowhere(p);
  }, 60_000);

  it("a rule's send for a message that came in first: it is erased with the rest", async () => {
    const b = await business('in flight: rule');
    const p = person('Foxbourne');
    const contactId = await b.contactOf(p);
    await ok(
      b.a('POST', '/rules', {
        name: 'answer',
        trigger: { event: 'message.received' },
        actions: [{ type: 'send_message', message: NEWS }],
      }),
      201,
    );
    const held = await walletOf(b.t.accountId);
    await b.fromMeta(
      fake.inboundPayload(b.t.business, { from: p.phone, message: inboundMessages.text({ body: p.name }) }),
    );
    await eraseWhileStopped(held, () => b.erase(contactId));
    await until(
      async () => (await messagesCausedBy(b.t.accountId, `caused_by->>'kind' = 'rule'`)) > 0,
      20_000,
      () => 'the rule did not send',
    );
    await expectNowhere(p);
  }, 60_000);

  it('a campaign round that read its recipient first: its message is erased with the rest', async () => {
    const b = await business('in flight: campaign');
    const p = person('Glenharrow');
    const contactId = await b.contactOf(p);
    const campaign = await ok(
      b.a('POST', '/campaigns', { name: 'news', message: NEWS, audience: { contactIds: [contactId] } }),
      201,
    );
    const held = await walletOf(b.t.accountId);
    await ok(b.a('POST', `/campaigns/${campaign.id}/start`), 200);
    await eraseWhileStopped(held, () => b.erase(contactId));
    await until(
      async () => (await messagesCausedBy(b.t.accountId, 'campaign_id IS NOT NULL')) > 0,
      20_000,
      () => 'the round did not send',
    );
    await expectNowhere(p);
  }, 60_000);

  it('a bulk import that read its items first: the erased item is not imported again', async () => {
    const b = await business('in flight: bulk import');
    const p = person('Hollinshed');
    const other = person('Ivorystone');
    const contactId = await b.contactOf(p);
    const otherId = await b.contactOf(other);
    // Its first chunk stops on the other contact's row; the erased one is in the second.
    const held = await holding('SELECT 1 FROM contacts WHERE id = $1 FOR UPDATE', [otherId]);
    const job = await ok(
      b.a('POST', '/bulk/contacts', {
        contacts: [
          { phone: other.phone, name: other.name },
          { phone: p.phone, name: p.name },
        ],
      }),
      202,
    );
    await eraseWhileStopped(held, () => b.erase(contactId));
    await until(
      async () => (await b.a('GET', `/bulk/contacts/${job.jobId}`)).body.status === 'completed',
      20_000,
      () => 'the import did not end',
    );
    await expectNowhere(p);
  }, 60_000);
});
