// Calls on the Twilio provider, end to end through HTTP against the fake Twilio (test/fakes/twilio.ts):
// the app listens on the port its PUBLIC_BASE_URL names, so the fake's signed callbacks and TwiML
// requests come over the wire to the real callback routes. The voice channel's credentials checked
// with Twilio; the exact Calls request; the hold, the charge per started minute and the refund in the
// ledger; callbacks shuffled, repeated, unsigned or wrongly signed; Twilio's refusals, throttling and
// a request in doubt (never placed twice); 402; an IVR gather recorded once; cancel and hang-up.
import { createServer } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTwilio, type FakeTwilioAccount, twilioError, twilioSignature } from '../fakes/twilio.ts';
import { call, createAccountKey, type Reply, tenant } from '../helpers/client.ts';
import { credit } from '../helpers/messaging.ts';
import { micros } from '../helpers/money.ts';
import { useTestApp } from '../helpers/setup.ts';
import { eventually } from '../helpers/wait.ts';

const TO = '+14155550123';
const ENDED = ['completed', 'busy', 'no_answer', 'failed', 'canceled'];

let fake: FakeTwilio;
let port: number;

/** A port free now (listened on, then closed): the app listens on it, and its PUBLIC_BASE_URL says so. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  fake = await FakeTwilio.start();
  port = await freePort();
});

const env = useTestApp({
  workers: true,
  config: () => ({
    publicBaseUrl: `http://127.0.0.1:${port}`,
    twilioApiUrl: fake.apiUrl,
    voicePollMs: 20,
    // Short, for the request in doubt: Twilio's answer given up after 1 s, the lease after 1.5 s.
    providerTimeoutMs: 1000,
    voiceLeaseMs: 1500,
  }),
});

beforeAll(async () => {
  await env.app.listen({ port, host: '127.0.0.1' });
});

afterAll(async () => {
  await fake?.close();
});

const tts = { name: 'Hi', type: 'tts', tts: { text: 'Hello {{ variables.name }}' } };

const ivr = {
  name: 'Confirm',
  type: 'ivr',
  ivr: {
    start: 'menu',
    nodes: {
      menu: {
        say: 'Hello {{ contact.name | default: "there" }}, press 1 to confirm.',
        gather: {
          timeoutSeconds: 2,
          retries: 0,
          options: { '1': { action: { type: 'tag', tag: 'confirmed', next: 'thanks' } } },
          noInput: { next: 'bye' },
        },
      },
      thanks: { say: 'Thank you, {{ variables.when }}.', action: { type: 'hangup' } },
      bye: { say: 'Goodbye.' },
    },
  },
};

interface TwilioTenant {
  accountId: string;
  apiKey: string;
  account: FakeTwilioAccount;
}

const base = (accountId: string) => `http://127.0.0.1:${port}/api/v1/callbacks/twilio/voice/${accountId}`;

function channelBody(account: FakeTwilioAccount, overrides: Record<string, string> = {}) {
  return {
    provider: 'twilio',
    twilio: { accountSid: account.sid, authToken: account.authToken, from: account.numbers[0], ...overrides },
  };
}

/** A Scale tenant on its own fake Twilio account, its wallet credited with `balance` (if any). */
async function twilioTenant(balance: string | null = '1.00'): Promise<TwilioTenant> {
  const t = await tenant(env.app, env.partner.partnerKey);
  const account = fake.createAccount();
  const res = await call(env.app, 'PUT', '/account/voice-channel', {
    key: t.apiKey,
    body: channelBody(account),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  if (balance) await credit(env.app, env.partner.partnerKey, t.accountId, balance);
  return { accountId: t.accountId, apiKey: t.apiKey, account };
}

async function published(key: string, body: object): Promise<string> {
  const made = await call(env.app, 'POST', '/voice/scripts', { key, body });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return made.body.id;
}

async function place(key: string, body: object) {
  const res = await call(env.app, 'POST', '/voice/calls', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body;
}

async function getCall(key: string, id: string) {
  const res = await call(env.app, 'GET', `/voice/calls/${id}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The call once `ok` holds (asserted). */
async function callWhen(key: string, id: string, ok: (c: any) => boolean) {
  const res = await eventually(
    () => call(env.app, 'GET', `/voice/calls/${id}`, { key }),
    (r) => ok(r.body),
  );
  expect(ok(res.body), JSON.stringify(res.body)).toBe(true);
  return res.body;
}

const placed = (key: string, id: string) => callWhen(key, id, (c) => c.status !== 'queued');
const ended = (key: string, id: string) => callWhen(key, id, (c) => ENDED.includes(c.status));

/** The Calls.json requests the fake received for this call (its Url names it). */
function callRequests(t: TwilioTenant, callId: string) {
  return fake.requests.filter(
    (r) =>
      r.method === 'POST' &&
      r.path === `/2010-04-01/Accounts/${t.account.sid}/Calls.json` &&
      String(r.form.Url).includes(callId),
  );
}

async function ledger(key: string) {
  const res = await call(env.app, 'GET', '/account/wallet/transactions', { key, query: { limit: '100' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { type: string; amount: { amount: string }; reference: string | null }[];
}

async function balance(key: string): Promise<bigint> {
  const res = await call(env.app, 'GET', '/account/wallet', { key });
  expect(res.status).toBe(200);
  return micros(res.body.balance.amount);
}

/** A request as Twilio would post it, signed with `token` (or unsigned). */
async function postSigned(url: string, params: Record<string, string | string[]>, token: string | null) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const v of [value].flat()) body.append(name, v);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (token) headers['x-twilio-signature'] = twilioSignature(token, url, params);
  const res = await request(url, { method: 'POST', headers, body: body.toString() });
  return { status: res.statusCode, body: await res.body.text() };
}

const usd = (amount: string) => ({ amount, currency: 'USD' });

/** A documented error answer (as setup.ts's expectError, with this app's PUBLIC_BASE_URL in `docs`). */
function expectError(res: Reply, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({
    error: {
      code,
      message: expect.any(String),
      docs: `http://127.0.0.1:${port}/docs/errors#${code}`,
      requestId: res.headers['x-request-id'],
      ...(res.body.error?.details ? { details: res.body.error.details } : {}),
    },
  });
}

describe('the Twilio voice channel', () => {
  it('is checked with Twilio, shown without its token; a wrong token, a foreign from and a sandbox key are refused', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const account = fake.createAccount();
    const put = await call(env.app, 'PUT', '/account/voice-channel', {
      key: t.apiKey,
      body: channelBody(account),
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const got = await call(env.app, 'GET', '/account/voice-channel', { key: t.apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      provider: 'twilio',
      twilio: { accountSid: account.sid, from: account.numbers[0] },
      callbackUrl: base(t.accountId),
      updatedAt: expect.any(String),
    });
    expect(JSON.stringify(got.body)).not.toContain(account.authToken);
    expect(JSON.stringify(put.body)).not.toContain(account.authToken);

    const wrongToken = await call(env.app, 'PUT', '/account/voice-channel', {
      key: t.apiKey,
      body: channelBody(account, { authToken: 'f'.repeat(32) }),
    });
    expectError(wrongToken, 400, 'INVALID_REQUEST');
    expect(wrongToken.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'twilio.authToken',
    ]);

    const foreign = await call(env.app, 'PUT', '/account/voice-channel', {
      key: t.apiKey,
      body: channelBody(account, { from: '+14155559999' }),
    });
    expectError(foreign, 400, 'INVALID_REQUEST');
    expect(foreign.body.error.details.map((d: { field: string }) => d.field)).toEqual(['twilio.from']);

    const sandbox = await createAccountKey(env.app, env.partner.partnerKey, t.accountId, {
      scope: 'sandbox',
    });
    expectError(
      await call(env.app, 'PUT', '/account/voice-channel', {
        key: sandbox.apiKey,
        body: channelBody(account),
      }),
      403,
      'FORBIDDEN',
    );
    // None of the refusals changed what was saved.
    expect((await call(env.app, 'GET', '/account/voice-channel', { key: t.apiKey })).body).toEqual(got.body);
  });
});

describe('calls on Twilio', () => {
  it('places the call as Twilio expects, holds the estimate, charges each started minute and refunds the rest', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    const made = await place(t.apiKey, {
      to: TO,
      scriptId: script,
      variables: { name: 'Ann' },
      maxDurationSeconds: 300,
    });
    expect(made).toMatchObject({
      status: 'queued',
      provider: 'twilio',
      sandbox: false,
      price: usd('0.0140'),
    });

    const c = await placed(t.apiKey, made.id);
    const sent = callRequests(t, made.id);
    expect(sent).toHaveLength(1);
    const form = sent[0]!.form;
    expect(form).toMatchObject({
      To: TO,
      From: t.account.numbers[0],
      Url: `${base(t.accountId)}/answer?call=${made.id}`,
      StatusCallback: `${base(t.accountId)}?call=${made.id}`,
      Timeout: '30',
      TimeLimit: '300',
    });
    expect([form.StatusCallbackEvent].flat().sort()).toEqual([
      'answered',
      'completed',
      'initiated',
      'ringing',
    ]);
    const sid = [...fake.calls.values()].find((x) => x.url.includes(made.id))!.sid;
    expect(c).toMatchObject({ status: 'initiated', providerCallId: sid, held: usd('0.0700') });
    const hold = (await ledger(t.apiKey)).filter((x) => x.reference === `hold:${made.id}`);
    expect(hold).toEqual([expect.objectContaining({ type: 'debit', amount: usd('-0.0700') })]);

    await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], { durationSeconds: 61 });
    const done = await getCall(t.apiKey, made.id);
    expect(done).toMatchObject({
      status: 'completed',
      durationSeconds: 61,
      billableMinutes: 2,
      charged: usd('0.0280'),
      held: usd('0.0700'),
    });
    const refunds = (await ledger(t.apiKey)).filter((x) => x.reference === made.id);
    expect(refunds).toEqual([expect.objectContaining({ type: 'refund', amount: usd('0.0420') })]);
    expect(await balance(t.apiKey)).toBe(micros('1.00') - micros('0.028'));
  });

  it('callbacks out of order and repeated: each status once, an ended call never charged twice', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    const made = await place(t.apiKey, { to: TO, scriptId: script, variables: { name: 'Ann' } });
    const sid = (await placed(t.apiKey, made.id)).providerCallId;

    const posted = await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], {
      order: [1, 0, 2, 2, 3, 1],
      durationSeconds: 30,
    });
    expect(posted.map((p) => p.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(posted.map((p) => JSON.parse(p.body).applied)).toEqual([true, false, true, false, true, false]);
    const done = await getCall(t.apiKey, made.id);
    expect(done).toMatchObject({ status: 'completed', billableMinutes: 1, charged: usd('0.0140') });
    expect(done.ringingAt).not.toBeNull();
    expect(done.answeredAt).not.toBeNull();
    expect(Date.parse(done.ringingAt)).toBeLessThanOrEqual(Date.parse(done.answeredAt));

    const { rows } = await env.app.ctx.db.query<{ payload: string }>(
      `SELECT payload FROM events WHERE account_id = $1 AND type = 'call.status_changed'`,
      [t.accountId],
    );
    const statuses = rows
      .map((r) => JSON.parse(r.payload).data)
      .filter((d) => d.id === made.id)
      .map((d) => d.status);
    expect(statuses.sort()).toEqual(['completed', 'in_progress', 'initiated', 'queued', 'ringing']);

    // The same completed again, and a later one with another duration: neither changes the call.
    const again = await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], {
      order: [3],
      durationSeconds: 30,
    });
    const later = await postSigned(
      `${base(t.accountId)}?call=${made.id}`,
      { ...posted[4]!.params, SequenceNumber: '7', CallDuration: '600' },
      t.account.authToken,
    );
    expect([again[0]!.status, later.status]).toEqual([200, 200]);
    expect([JSON.parse(again[0]!.body).applied, JSON.parse(later.body).applied]).toEqual([false, false]);
    expect(await getCall(t.apiKey, made.id)).toEqual(done);
    expect((await ledger(t.apiKey)).filter((x) => x.reference === made.id)).toHaveLength(1);
    expect(await balance(t.apiKey)).toBe(micros('1.00') - micros('0.014'));
  });

  it('refuses a callback with a wrong signature or none (401), and the call does not change', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    const made = await place(t.apiKey, { to: TO, scriptId: script, variables: { name: 'Ann' } });
    const before = await placed(t.apiKey, made.id);
    const sid = before.providerCallId;
    for (const signature of ['wrong', 'missing'] as const) {
      const posted = await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], {
        signature,
      });
      for (const p of posted) {
        expect(p.status, p.body).toBe(401);
        expect(JSON.parse(p.body).error.code).toBe('INVALID_SIGNATURE');
      }
    }
    // The answer request too: unsigned, it does not put the call in progress.
    const answer = await postSigned(
      `${base(t.accountId)}/answer?call=${made.id}`,
      { CallSid: sid, CallStatus: 'in-progress' },
      null,
    );
    expect(answer.status).toBe(401);
    const after = await getCall(t.apiKey, made.id);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ status: 'initiated' });
  });

  it("Twilio's refusals: an invalid number and a blocked one fail the call and refund its hold", async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    fake.failNext(twilioError(400, 21211, `The 'To' number ${TO} is not a valid phone number.`));
    const invalid = await place(t.apiKey, { to: TO, scriptId: script, variables: { name: 'Ann' } });
    expect(await ended(t.apiKey, invalid.id)).toMatchObject({
      status: 'failed',
      error: { code: 'INVALID_NUMBER', providerCode: '21211' },
      charged: usd('0.0000'),
    });

    const blockedTo = '+14155550177';
    fake.blocked.add(blockedTo);
    const blocked = await place(t.apiKey, { to: blockedTo, scriptId: script, variables: { name: 'Ann' } });
    expect(await ended(t.apiKey, blocked.id)).toMatchObject({
      status: 'failed',
      error: { code: 'NUMBER_BLOCKED', providerCode: '21216' },
      charged: usd('0.0000'),
    });
    expect(callRequests(t, invalid.id)).toHaveLength(1);
    expect(callRequests(t, blocked.id)).toHaveLength(1);
    // Each hold (what was taken, if any) given back in full: the wallet is whole again.
    const entries = await ledger(t.apiKey);
    for (const id of [invalid.id, blocked.id]) {
      const held = entries.filter((x) => x.reference === `hold:${id}`).map((x) => -micros(x.amount.amount));
      const back = entries.filter((x) => x.reference === id).map((x) => micros(x.amount.amount));
      expect(back).toEqual(held);
    }
    expect(await balance(t.apiKey)).toBe(micros('1.00'));
  });

  it('throttled by Twilio (429, 20429, Retry-After): placed on a later try', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    fake.failNext({
      status: 429,
      code: 20429,
      message: 'Too Many Requests',
      headers: { 'retry-after': '1' },
    });
    const made = await place(t.apiKey, { to: TO, scriptId: script, variables: { name: 'Ann' } });
    const c = await callWhen(t.apiKey, made.id, (x) => x.status === 'initiated');
    expect(c.providerCallId).toMatch(/^CA/);
    expect(c.error).toBeNull();
    expect(callRequests(t, made.id)).toHaveLength(2);
    expect(fake.calls.get(c.providerCallId)?.to).toBe(TO);
    // Held once, whatever the tries.
    expect(c.held).toEqual(usd('0.1400'));
    expect((await ledger(t.apiKey)).filter((x) => x.reference === `hold:${made.id}`)).toHaveLength(1);
  });

  it('in doubt (Twilio never answers): failed PROVIDER_UNKNOWN_OUTCOME, placed once, the hold refunded', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    fake.failNext({ status: 200, hang: true });
    const made = await place(t.apiKey, {
      to: TO,
      scriptId: script,
      variables: { name: 'Ann' },
      maxDurationSeconds: 300,
    });
    const done = await ended(t.apiKey, made.id);
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: 'PROVIDER_UNKNOWN_OUTCOME' },
      providerCallId: null,
      held: usd('0.0700'),
      charged: usd('0.0000'),
    });
    expect(callRequests(t, made.id)).toHaveLength(1);
    const refunds = (await ledger(t.apiKey)).filter((x) => x.reference === made.id);
    expect(refunds).toEqual([expect.objectContaining({ type: 'refund', amount: usd('0.0700') })]);
    expect(await balance(t.apiKey)).toBe(micros('1.00'));
  });

  it('402 INSUFFICIENT_BALANCE when the wallet cannot pay the first minute; nothing is stored', async () => {
    const t = await twilioTenant(null);
    const script = await published(t.apiKey, tts);
    expectError(
      await call(env.app, 'POST', '/voice/calls', {
        key: t.apiKey,
        body: { to: TO, scriptId: script, variables: { name: 'Ann' } },
      }),
      402,
      'INSUFFICIENT_BALANCE',
    );
    const list = await call(env.app, 'GET', '/voice/calls', { key: t.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect(fake.requests.filter((r) => r.path.includes(`${t.account.sid}/Calls`))).toEqual([]);
  });

  it('an IVR through Twilio: the gather action, the digit recorded once, the contact tagged', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, ivr);
    const made = await place(t.apiKey, { to: TO, scriptId: script, variables: { when: 'Monday' } });
    const sid = (await placed(t.apiKey, made.id)).providerCallId;

    const answer = await fake.fetchTwiml(sid);
    expect(answer.status, answer.body).toBe(200);
    const action = /<Gather\b[^>]*\baction="([^"]*)"/.exec(answer.body)?.[1]?.replaceAll('&amp;', '&');
    expect(action).toBe(`${base(t.accountId)}/gather?call=${made.id}&node=menu&attempt=1`);
    expect(answer.body).toContain('Hello there, press 1 to confirm.');

    const gathered = await fake.fetchTwiml(sid, '1');
    expect(gathered.status, gathered.body).toBe(200);
    expect(gathered.body).toContain('Thank you, Monday.');
    const c = await getCall(t.apiKey, made.id);
    expect(c).toMatchObject({
      status: 'in_progress',
      digits: [{ nodeId: 'menu', input: '1', at: expect.any(String) }],
    });
    const contact = await call(env.app, 'GET', `/contacts/${c.contactId}`, { key: t.apiKey });
    expect(contact.body.tags).toContain('confirmed');

    // Twilio repeats the same gather request: answered alike, recorded once.
    const repeated = await postSigned(gathered.url, gathered.params, t.account.authToken);
    expect(repeated).toEqual({ status: 200, body: gathered.body });
    expect((await getCall(t.apiKey, made.id)).digits).toEqual(c.digits);
  });

  it('cancel: a ringing call is canceled with Twilio; one in progress is hung up and completed', async () => {
    const t = await twilioTenant('1.00');
    const script = await published(t.apiKey, tts);
    const updates = (sid: string) =>
      fake.requests.filter(
        (r) => r.method === 'POST' && r.path === `/2010-04-01/Accounts/${t.account.sid}/Calls/${sid}.json`,
      );

    const ringing = await place(t.apiKey, { to: TO, scriptId: script, variables: { name: 'Ann' } });
    const ringSid = (await placed(t.apiKey, ringing.id)).providerCallId;
    await fake.playCall(ringSid, ['initiated', 'ringing']);
    expect((await getCall(t.apiKey, ringing.id)).status).toBe('ringing');
    const canceled = await call(env.app, 'POST', `/voice/calls/${ringing.id}/cancel`, { key: t.apiKey });
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', charged: usd('0.0000') });
    expect(updates(ringSid).map((r) => r.form)).toEqual([{ Status: 'canceled' }]);
    expect(fake.calls.get(ringSid)?.status).toBe('canceled');

    const talking = await place(t.apiKey, { to: TO, scriptId: script, variables: { name: 'Ann' } });
    const talkSid = (await placed(t.apiKey, talking.id)).providerCallId;
    await fake.playCall(talkSid, ['initiated', 'ringing', 'in-progress']);
    expect((await getCall(t.apiKey, talking.id)).status).toBe('in_progress');
    const hung = await call(env.app, 'POST', `/voice/calls/${talking.id}/cancel`, { key: t.apiKey });
    expect(hung.status, JSON.stringify(hung.body)).toBe(200);
    expect(hung.body).toMatchObject({ status: 'completed', answeredAt: expect.any(String) });
    expect(updates(talkSid).map((r) => r.form)).toEqual([{ Status: 'completed' }]);
    expect(fake.calls.get(talkSid)?.status).toBe('completed');
    expect((await getCall(t.apiKey, talking.id)).status).toBe('completed');
  });
});
