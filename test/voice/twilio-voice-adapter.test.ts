// The Twilio voice adapter against the fake Twilio REST API over real HTTP: the exact form Twilio
// receives for a call and a hang-up, how each kind of failure becomes an outcome (and never carries
// the Auth Token), the credential check, and Twilio's side of the callbacks: signatures (checked
// with the official package, the fake signing on its own), status callbacks in order, shuffled and
// repeated, and the TwiML requests of a call.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { type Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  mapAnsweredBy,
  parseStatusCallback,
  signTwilioRequest,
  TWILIO_SIGNATURE_HEADER,
  verifyTwilioSignature,
} from '../../src/channels/twilio-voice/callbacks.ts';
import {
  checkTwilioCredentials,
  createTwilioAgent,
  type TwilioConnection,
  TwilioVoiceAdapter,
} from '../../src/channels/twilio-voice/client.ts';
import { codeForTwilioCode } from '../../src/channels/twilio-voice/errors.ts';
import type { FormParams, PlaceCallRequest } from '../../src/channels/voice.ts';
import { FakeTwilio, type FakeTwilioAccount, twilioSignature } from '../fakes/twilio.ts';
import { type Received, Receiver } from '../helpers/receiver.ts';

let fake: FakeTwilio;
let agent: Agent;
let account: FakeTwilioAccount;
let receiver: Receiver;

beforeAll(async () => {
  fake = await FakeTwilio.start();
  agent = createTwilioAgent(5_000);
  account = fake.createAccount();
  receiver = await Receiver.start((req) => {
    if (req.path.startsWith('/twiml'))
      return { status: 200, headers: { 'content-type': 'text/xml' }, body: MENU };
    if (req.path.startsWith('/gather'))
      return { status: 200, headers: { 'content-type': 'text/xml' }, body: BYE };
    return { status: 204 };
  });
});

afterAll(async () => {
  await agent.close();
  await fake.close();
  await receiver.close();
});

const MENU = (() => {
  const response = new twilio.twiml.VoiceResponse();
  response
    .gather({
      numDigits: 1,
      action: '/gather?node=menu&attempt=1',
      method: 'POST',
      actionOnEmptyResult: true,
    })
    .say('Press 1 to confirm.');
  return response.toString();
})();
const BYE = (() => {
  const response = new twilio.twiml.VoiceResponse();
  response.say('Thank you.');
  response.hangup();
  return response.toString();
})();

function connectionFor(a: FakeTwilioAccount, overrides: Partial<TwilioConnection> = {}): TwilioConnection {
  return { apiUrl: fake.apiUrl, accountSid: a.sid, authToken: a.authToken, timeoutMs: 5_000, ...overrides };
}

const adapterFor = (a: FakeTwilioAccount, overrides: Partial<TwilioConnection> = {}) =>
  new TwilioVoiceAdapter(connectionFor(a, overrides), agent);

const TO = '+447700900123';
const callRequest = (overrides: Partial<PlaceCallRequest> = {}): PlaceCallRequest => ({
  callId: 'call_test',
  to: TO,
  from: account.numbers[0]!,
  answerUrl: receiver.url('/twiml?call=call_test'),
  statusCallbackUrl: receiver.url('/status?call=call_test'),
  machineDetection: false,
  ringTimeoutSeconds: 30,
  maxDurationSeconds: 600,
  ...overrides,
});

async function placed(overrides: Partial<PlaceCallRequest> = {}): Promise<string> {
  const outcome = await adapterFor(account).place(callRequest(overrides));
  if (outcome.kind !== 'placed') throw new Error(`not placed: ${JSON.stringify(outcome)}`);
  return outcome.providerCallId;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A received form, as a route would hand it to the reader: a repeated field is an array. */
function formOf(received: Received): FormParams {
  const form: FormParams = {};
  for (const [name, value] of new URLSearchParams(received.body)) {
    const had = form[name];
    form[name] = had === undefined ? value : ([] as string[]).concat(had, value);
  }
  return form;
}

const urlOf = (received: Received) => `http://127.0.0.1:${receiver.port}${received.path}`;
const signatureOf = (received: Received) => received.headers[TWILIO_SIGNATURE_HEADER] as string | undefined;

describe('place: what Twilio receives', () => {
  it('POSTs the documented form to Calls.json with basic auth, and is placed with the CallSid', async () => {
    const before = fake.requests.length;
    const outcome = await adapterFor(account).place(callRequest());
    expect(fake.requests.length).toBe(before + 1);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/2010-04-01/Accounts/${account.sid}/Calls.json`);
    expect(req.headers.authorization).toBe(
      `Basic ${Buffer.from(`${account.sid}:${account.authToken}`).toString('base64')}`,
    );
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(req.form).toStrictEqual({
      To: TO,
      From: account.numbers[0],
      Url: receiver.url('/twiml?call=call_test'),
      Method: 'POST',
      StatusCallback: receiver.url('/status?call=call_test'),
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      Timeout: '30',
      TimeLimit: '600',
    });
    const call = [...fake.calls.values()].at(-1)!;
    expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(call.status).toBe('queued');
    expect(outcome).toStrictEqual({ kind: 'placed', providerCallId: call.sid });
  });

  it('asks for machine detection with MachineDetection=Enable', async () => {
    await placed({ machineDetection: true });
    expect(fake.requests.at(-1)!.form.MachineDetection).toBe('Enable');
  });

  it('without a From number: rejected without a request', async () => {
    const before = fake.requests.length;
    const outcome = await adapterFor(account).place(callRequest({ from: null }));
    expect(outcome).toMatchObject({
      kind: 'rejected',
      error: { code: 'PROVIDER_REJECTED', providerCode: null },
    });
    expect(fake.requests.length).toBe(before);
  });
});

describe('place: each failure as an outcome', () => {
  it("an invalid 'To' (Twilio's 21211): rejected INVALID_NUMBER", async () => {
    const outcome = await adapterFor(account).place(callRequest({ to: '+12' }));
    expect(outcome).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'INVALID_NUMBER',
        message: "The 'To' number +12 is not a valid phone number.",
        providerCode: 21211,
      },
    });
  });

  it('a number Twilio blocks (21216): rejected NUMBER_BLOCKED', async () => {
    fake.blocked.add('+447700900666');
    const outcome = await adapterFor(account).place(callRequest({ to: '+447700900666' }));
    expect(outcome).toMatchObject({
      kind: 'rejected',
      error: { code: 'NUMBER_BLOCKED', providerCode: 21216 },
    });
  });

  it.each([
    [21214, 'INVALID_NUMBER'],
    [21217, 'INVALID_NUMBER'],
    [13223, 'INVALID_NUMBER'],
    [13224, 'INVALID_NUMBER'],
    [21215, 'NUMBER_BLOCKED'],
    [13227, 'NUMBER_BLOCKED'],
    [21610, 'NUMBER_BLOCKED'],
  ])('Twilio code %i: rejected %s', async (code, expected) => {
    fake.failNext({ status: 400, code });
    const outcome = await adapterFor(account).place(callRequest());
    expect(outcome).toMatchObject({ kind: 'rejected', error: { code: expected, providerCode: code } });
    expect(codeForTwilioCode(code)).toBe(expected);
  });

  it('throttled (20429 with Retry-After): retry after the seconds Twilio gave', async () => {
    fake.failNext({
      status: 429,
      code: 20429,
      message: 'Too Many Requests',
      headers: { 'retry-after': '7' },
    });
    const outcome = await adapterFor(account).place(callRequest());
    expect(outcome).toStrictEqual({
      kind: 'retry',
      error: { code: 'PROVIDER_THROTTLED', message: 'Too Many Requests', providerCode: 20429 },
      retryAfterSeconds: 7,
    });
  });

  it('a bare HTTP 429 is throttled too', async () => {
    fake.failNext({ status: 429, body: 'slow down' });
    const outcome = await adapterFor(account).place(callRequest());
    expect(outcome).toMatchObject({
      kind: 'retry',
      error: { code: 'PROVIDER_THROTTLED', providerCode: null },
    });
  });

  it('HTTP 503: retry PROVIDER_UNAVAILABLE; 500 or a gateway 502: in doubt (Twilio may have placed it)', async () => {
    fake.failNext({ status: 503, body: '<html>busy</html>' });
    expect(await adapterFor(account).place(callRequest())).toStrictEqual({
      kind: 'retry',
      error: { code: 'PROVIDER_UNAVAILABLE', message: 'Twilio answered HTTP 503', providerCode: null },
    });
    for (const status of [500, 502]) {
      fake.failNext({ status, body: '<html>oops</html>' });
      expect(await adapterFor(account).place(callRequest())).toStrictEqual({
        kind: 'in_doubt',
        error: {
          code: 'PROVIDER_UNKNOWN_OUTCOME',
          message: `Twilio answered HTTP ${status}`,
          providerCode: null,
        },
      });
    }
  });

  it('unreachable before sending (connection refused): retry PROVIDER_UNAVAILABLE', async () => {
    const port = await closedPort();
    const outcome = await adapterFor(account, { apiUrl: `http://127.0.0.1:${port}` }).place(callRequest());
    expect(outcome).toMatchObject({ kind: 'retry', error: { code: 'PROVIDER_UNAVAILABLE' } });
    expect((outcome as { error: { message: string } }).error.message).toMatch(
      /could not be reached.*ECONNREFUSED/,
    );
  });

  it('no answer within timeoutMs: in doubt (Twilio may be ringing the person)', async () => {
    fake.failNext({ status: 201, hang: true });
    const outcome = await adapterFor(account, { timeoutMs: 300 }).place(callRequest());
    expect(outcome).toStrictEqual({
      kind: 'in_doubt',
      error: {
        code: 'PROVIDER_UNKNOWN_OUTCOME',
        message: 'no answer came from Twilio: timed out after 300 ms',
        providerCode: null,
      },
    });
  });

  it('the connection lost once the request arrived: in doubt', async () => {
    fake.failNext({ status: 201, destroy: true });
    const outcome = await adapterFor(account).place(callRequest());
    expect(outcome).toMatchObject({ kind: 'in_doubt', error: { code: 'PROVIDER_UNKNOWN_OUTCOME' } });
  });

  it('a 201 without a sid, or not JSON: in doubt', async () => {
    fake.failNext({ status: 201, body: { status: 'queued', to: TO } }, { status: 201, body: 'Created' });
    for (let i = 0; i < 2; i++) {
      const outcome = await adapterFor(account).place(callRequest());
      expect(outcome).toStrictEqual({
        kind: 'in_doubt',
        error: {
          code: 'PROVIDER_UNKNOWN_OUTCOME',
          message: 'Twilio answered HTTP 201 without a call sid',
          providerCode: null,
        },
      });
    }
  });

  it('a wrong Auth Token (Twilio 20003, HTTP 401): rejected CHANNEL_UNAUTHORIZED', async () => {
    const outcome = await adapterFor(account, { authToken: 'f'.repeat(32) }).place(callRequest());
    expect(outcome).toStrictEqual({
      kind: 'rejected',
      error: { code: 'CHANNEL_UNAUTHORIZED', message: 'Authenticate', providerCode: 20003 },
    });
  });

  it('HTTP 403, or a 20404 that comes as a 401: CHANNEL_UNAUTHORIZED', async () => {
    fake.failNext({ status: 403, body: {} }, { status: 401, code: 20404 });
    for (let i = 0; i < 2; i++) {
      const outcome = await adapterFor(account).place(callRequest());
      expect(outcome).toMatchObject({ kind: 'rejected', error: { code: 'CHANNEL_UNAUTHORIZED' } });
    }
  });

  it("any other 4xx (a From that is not the account's, 21210): rejected PROVIDER_REJECTED", async () => {
    const outcome = await adapterFor(account).place(callRequest({ from: '+14155550000' }));
    expect(outcome).toMatchObject({
      kind: 'rejected',
      error: { code: 'PROVIDER_REJECTED', providerCode: 21210 },
    });
  });

  it('the Auth Token never appears in an error, whatever Twilio or the network says', async () => {
    const token = account.authToken;
    const port = await closedPort();
    fake.failNext(
      { status: 400, code: 21211, message: `The 'To' number ${token} is not a valid phone number.` },
      { status: 500, code: 20500, message: `Internal error for ${token}` },
      { status: 429, code: 20429, message: token },
      { status: 201, hang: true },
    );
    const outcomes = [
      await adapterFor(account).place(callRequest()),
      await adapterFor(account).place(callRequest()),
      await adapterFor(account).place(callRequest()),
      await adapterFor(account, { timeoutMs: 200 }).place(callRequest()),
      await adapterFor(account, { apiUrl: `http://127.0.0.1:${port}` }).place(callRequest()),
      await adapterFor(account, { authToken: `${token}x` }).place(callRequest()),
      await adapterFor(account).hangUp({ callId: 'call_x', providerCallId: `CA${'0'.repeat(32)}` }, 'cancel'),
    ];
    for (const outcome of outcomes) {
      expect(outcome.kind).not.toBe('placed');
      expect(JSON.stringify(outcome)).not.toContain(token);
    }
    expect((outcomes[0] as { error: { message: string } }).error.message).toContain('[redacted]');
  });
});

describe('hangUp', () => {
  it('cancel: POST Calls/{sid}.json with Status=canceled; done, and Twilio has it canceled', async () => {
    const sid = await placed();
    const outcome = await adapterFor(account).hangUp({ callId: 'call_test', providerCallId: sid }, 'cancel');
    expect(outcome).toStrictEqual({ kind: 'done' });
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/2010-04-01/Accounts/${account.sid}/Calls/${sid}.json`);
    expect(req.form).toStrictEqual({ Status: 'canceled' });
    expect(fake.calls.get(sid)!.status).toBe('canceled');
  });

  it('complete: an answered call ends with Status=completed', async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=complete') });
    await fake.playCall(sid, ['initiated', 'ringing', 'in-progress']);
    const outcome = await adapterFor(account).hangUp(
      { callId: 'call_test', providerCallId: sid },
      'complete',
    );
    expect(outcome).toStrictEqual({ kind: 'done' });
    expect(fake.requests.at(-1)!.form).toStrictEqual({ Status: 'completed' });
    expect(fake.calls.get(sid)!.status).toBe('completed');
  });

  it('cancel comes too late for an answered call: failed, and the call goes on', async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=late') });
    await fake.playCall(sid, ['initiated', 'in-progress']);
    const outcome = await adapterFor(account).hangUp({ callId: 'call_test', providerCallId: sid }, 'cancel');
    expect(outcome).toMatchObject({ kind: 'failed', error: { code: 'PROVIDER_REJECTED' } });
    expect(fake.calls.get(sid)!.status).toBe('in-progress');
  });

  it('gone: a call that already ended (21220), or that Twilio does not know (404)', async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=gone') });
    await fake.playCall(sid, ['initiated', 'ringing', 'no-answer']);
    const adapter = adapterFor(account);
    expect(await adapter.hangUp({ callId: 'call_test', providerCallId: sid }, 'cancel')).toStrictEqual({
      kind: 'gone',
    });
    expect(fake.requests.at(-1)!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const unknown = `CA${'0'.repeat(32)}`;
    expect(await adapter.hangUp({ callId: 'call_test', providerCallId: unknown }, 'complete')).toStrictEqual({
      kind: 'gone',
    });
  });

  it('failed with the classified error: 503, a timeout, a wrong token', async () => {
    const sid = await placed();
    fake.failNext({ status: 503, body: {} }, { status: 200, hang: true });
    const call = { callId: 'call_test', providerCallId: sid };
    expect(await adapterFor(account).hangUp(call, 'cancel')).toMatchObject({
      kind: 'failed',
      error: { code: 'PROVIDER_UNAVAILABLE' },
    });
    expect(await adapterFor(account, { timeoutMs: 200 }).hangUp(call, 'cancel')).toMatchObject({
      kind: 'failed',
      error: { code: 'PROVIDER_UNKNOWN_OUTCOME' },
    });
    expect(await adapterFor(account, { authToken: 'nope' }).hangUp(call, 'cancel')).toMatchObject({
      kind: 'failed',
      error: { code: 'CHANNEL_UNAUTHORIZED', providerCode: 20003 },
    });
  });
});

describe('checkTwilioCredentials', () => {
  const check = (a: FakeTwilioAccount, from: string, overrides: Partial<TwilioConnection> = {}) =>
    checkTwilioCredentials(connectionFor(a, overrides), agent, from);

  it("ok: reads the account, then finds From among its numbers; the token Twilio's answer carries stays there", async () => {
    const before = fake.requests.length;
    const result = await check(account, account.numbers[0]!);
    expect(result).toStrictEqual({ kind: 'ok', friendlyName: 'Tidings test account' });
    const [acc, numbers] = fake.requests.slice(before);
    expect(acc!.method).toBe('GET');
    expect(acc!.path).toBe(`/2010-04-01/Accounts/${account.sid}.json`);
    expect(numbers!.path).toBe(
      `/2010-04-01/Accounts/${account.sid}/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(account.numbers[0]!)}`,
    );
    expect(JSON.stringify(result)).not.toContain(account.authToken);
  });

  it('ok: a verified caller id is a From too', async () => {
    const verified = fake.createAccount({ numbers: [], callerIds: ['+442071838750'] });
    expect(await check(verified, '+442071838750')).toMatchObject({ kind: 'ok' });
    expect(fake.requests.at(-1)!.path).toContain('/OutgoingCallerIds.json?PhoneNumber=%2B442071838750');
  });

  it('refused: the token (401), the account (404), a From that is not the account’s', async () => {
    expect(await check(account, account.numbers[0]!, { authToken: 'wrong' })).toStrictEqual({
      kind: 'refused',
      field: 'authToken',
      issue: 'was refused by Twilio',
    });
    fake.failNext({ status: 404, code: 20404 });
    expect(await check(account, account.numbers[0]!)).toMatchObject({ kind: 'refused', field: 'accountSid' });
    expect(await check(account, '+14155550000')).toStrictEqual({
      kind: 'refused',
      field: 'from',
      issue: 'is not a number of this Twilio account',
    });
  });

  it('refused: Twilio matches PhoneNumber as a pattern, so only an exact number counts', async () => {
    const partial = account.numbers[0]!.slice(0, -2);
    // Twilio (and the fake) answer a partial number with the longer ones it matches…
    const listed = await request(
      `${fake.apiUrl}/2010-04-01/Accounts/${account.sid}/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(partial)}`,
      {
        headers: {
          authorization: `Basic ${Buffer.from(`${account.sid}:${account.authToken}`).toString('base64')}`,
        },
      },
    );
    const body = (await listed.body.json()) as { incoming_phone_numbers: { phone_number: string }[] };
    expect(body.incoming_phone_numbers.map((n) => n.phone_number)).toStrictEqual([account.numbers[0]]);
    // …which is not the number asked about.
    expect(await check(account, partial)).toMatchObject({ kind: 'refused', field: 'from' });
  });

  it('unavailable: 5xx, throttled, a timeout, unreachable', async () => {
    fake.failNext({ status: 503, body: {} });
    expect(await check(account, account.numbers[0]!)).toMatchObject({ kind: 'unavailable' });
    fake.failNext({ status: 200, body: { friendly_name: 'x' } }, { status: 429, code: 20429 });
    expect(await check(account, account.numbers[0]!)).toMatchObject({ kind: 'unavailable' });
    fake.failNext({ status: 200, hang: true });
    expect(await check(account, account.numbers[0]!, { timeoutMs: 200 })).toStrictEqual({
      kind: 'unavailable',
      reason: 'no answer came from Twilio: timed out after 200 ms',
    });
    const port = await closedPort();
    expect(await check(account, account.numbers[0]!, { apiUrl: `http://127.0.0.1:${port}` })).toMatchObject({
      kind: 'unavailable',
    });
  });
});

describe('callbacks: signatures', () => {
  it('signTwilioRequest is Twilio’s algorithm (the package’s and the fake’s)', () => {
    const cases: [string, FormParams][] = [
      ['https://tidings.example/api/v1/callbacks/twilio/voice/acc_1/status?call=call_1', { CallSid: 'CA1' }],
      ['https://tidings.example/cb', { b: 'two words', a: '1', Z: 'ünïcode ☎', empty: '' }],
      ['https://tidings.example/cb?x=1&y=2', { list: ['b', 'a', 'b'], single: 'v' }],
      ['https://tidings.example/cb', {}],
    ];
    for (const [url, params] of cases) {
      const signature = signTwilioRequest(account.authToken, url, params);
      expect(signature).toBe(twilio.getExpectedTwilioSignature(account.authToken, url, params));
      expect(signature).toBe(twilioSignature(account.authToken, url, params));
      expect(verifyTwilioSignature(account.authToken, signature, url, params)).toBe(true);
    }
  });

  it('verifyTwilioSignature takes the URL with or without its default port, as Twilio may sign either', () => {
    const params = { CallSid: 'CA1', CallStatus: 'ringing' };
    const signature = signTwilioRequest(account.authToken, 'https://tidings.example/cb?call=1', params);
    expect(
      verifyTwilioSignature(account.authToken, signature, 'https://tidings.example:443/cb?call=1', params),
    ).toBe(true);
  });

  it("accepts the fake's signed callback; refuses a changed param, a changed URL, a missing or wrong signature", async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=signed') });
    const before = receiver.received.length;
    await fake.playCall(sid, ['initiated']);
    await fake.playCall(sid, ['ringing'], { signature: 'missing' });
    await fake.playCall(sid, ['in-progress'], { signature: 'wrong' });
    const [good, missing, wrong] = receiver.received.slice(before) as [Received, Received, Received];
    const params = formOf(good);
    const token = account.authToken;
    expect(verifyTwilioSignature(token, signatureOf(good), urlOf(good), params)).toBe(true);
    expect(
      verifyTwilioSignature(token, signatureOf(good), urlOf(good), { ...params, CallStatus: 'completed' }),
    ).toBe(false);
    expect(verifyTwilioSignature(token, signatureOf(good), urlOf(good), { ...params, Extra: '1' })).toBe(
      false,
    );
    expect(verifyTwilioSignature(token, signatureOf(good), `${urlOf(good)}x`, params)).toBe(false);
    expect(verifyTwilioSignature(token, signatureOf(good), receiver.url('/status?call=other'), params)).toBe(
      false,
    );
    expect(signatureOf(missing)).toBeUndefined();
    expect(verifyTwilioSignature(token, signatureOf(missing), urlOf(missing), formOf(missing))).toBe(false);
    expect(verifyTwilioSignature(token, signatureOf(wrong), urlOf(wrong), formOf(wrong))).toBe(false);
    expect(verifyTwilioSignature(token, '', urlOf(good), params)).toBe(false);
    expect(verifyTwilioSignature(token, signatureOf(good), 'not a url', params)).toBe(false);
  });
});

describe('callbacks: status callbacks as Twilio posts them', () => {
  it('a whole call: four form posts, the documented fields, read in order', async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=whole') });
    const startAt = new Date('2026-03-02T10:00:00Z');
    const before = receiver.received.length;
    const posted = await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], {
      startAt,
    });
    expect(posted.map((p) => p.status)).toStrictEqual([204, 204, 204, 204]);
    const received = receiver.received.slice(before);
    expect(received.map((r) => r.headers['content-type'])).toStrictEqual(
      Array(4).fill('application/x-www-form-urlencoded'),
    );
    const forms = received.map(formOf);
    expect(forms[3]).toStrictEqual({
      CallSid: sid,
      AccountSid: account.sid,
      From: account.numbers[0],
      To: TO,
      CallStatus: 'completed',
      ApiVersion: '2010-04-01',
      Direction: 'outbound-api',
      CallbackSource: 'call-progress-events',
      SequenceNumber: '3',
      Timestamp: 'Mon, 02 Mar 2026 10:00:15 +0000',
      CallDuration: '12',
    });
    const now = new Date();
    const reports = forms.map((f) => parseStatusCallback(f, now)!);
    expect(reports.map((r) => [r.status, r.sequenceNumber, r.durationSeconds])).toStrictEqual([
      ['initiated', 0, null],
      ['ringing', 1, null],
      ['in-progress', 2, null],
      ['completed', 3, 12],
    ]);
    expect(reports[0]).toStrictEqual({
      callSid: sid,
      status: 'initiated',
      sequenceNumber: 0,
      durationSeconds: null,
      answeredBy: null,
      at: new Date('2026-03-02T10:00:01Z'),
      errorCode: null,
      sipResponseCode: null,
    });
    for (const r of received)
      expect(verifyTwilioSignature(account.authToken, signatureOf(r), urlOf(r), formOf(r))).toBe(true);
  });

  it('shuffled and repeated: SequenceNumber keeps the order Twilio generated them in', async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=shuffled') });
    const before = receiver.received.length;
    await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], {
      order: [3, 1, 0, 1, 2],
    });
    const reports = receiver.received.slice(before).map((r) => parseStatusCallback(formOf(r), new Date())!);
    expect(reports.map((r) => [r.sequenceNumber, r.status])).toStrictEqual([
      [3, 'completed'],
      [1, 'ringing'],
      [0, 'initiated'],
      [1, 'ringing'],
      [2, 'in-progress'],
    ]);
  });

  it('machine detection: AnsweredBy from the answer on, and in the TwiML request', async () => {
    const sid = await placed({ machineDetection: true, statusCallbackUrl: receiver.url('/status?call=amd') });
    const before = receiver.received.length;
    await fake.playCall(sid, ['initiated', 'ringing', 'in-progress', 'completed'], {
      answeredBy: 'machine_end_beep',
    });
    const reports = receiver.received.slice(before).map((r) => parseStatusCallback(formOf(r), new Date())!);
    expect(reports.map((r) => r.answeredBy)).toStrictEqual([null, null, 'machine', 'machine']);
  });

  it('a failed call: ErrorCode and SipResponseCode', async () => {
    const sid = await placed({ statusCallbackUrl: receiver.url('/status?call=failed') });
    const before = receiver.received.length;
    await fake.playCall(sid, ['initiated', 'failed'], { errorCode: '13224', sipResponseCode: 404 });
    const report = parseStatusCallback(formOf(receiver.received.at(before + 1)!), new Date())!;
    expect(report).toMatchObject({
      status: 'failed',
      durationSeconds: 0,
      errorCode: '13224',
      sipResponseCode: 404,
    });
    expect(codeForTwilioCode(Number(report.errorCode))).toBe('INVALID_NUMBER');
  });

  it.each([
    'queued',
    'initiated',
    'ringing',
    'in-progress',
    'completed',
    'busy',
    'no-answer',
    'failed',
    'canceled',
  ] as const)('reads CallStatus %s', (status) => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseStatusCallback({ CallSid: 'CA1', CallStatus: status }, now)).toStrictEqual({
      callSid: 'CA1',
      status,
      sequenceNumber: null,
      durationSeconds: null,
      answeredBy: null,
      at: now,
      errorCode: null,
      sipResponseCode: null,
    });
  });

  it('null without a CallSid or a status Twilio has; odd fields are read safely', () => {
    const now = new Date();
    expect(parseStatusCallback({ CallStatus: 'ringing' }, now)).toBeNull();
    expect(parseStatusCallback({ CallSid: '', CallStatus: 'ringing' }, now)).toBeNull();
    expect(parseStatusCallback({ CallSid: 'CA1' }, now)).toBeNull();
    expect(parseStatusCallback({ CallSid: 'CA1', CallStatus: 'answered' }, now)).toBeNull();
    expect(parseStatusCallback({ CallSid: 'CA1', CallStatus: 'in_progress' }, now)).toBeNull();
    const odd = parseStatusCallback(
      {
        CallSid: ['CA1', 'CA2'],
        CallStatus: 'busy',
        SequenceNumber: 'x',
        CallDuration: '-3',
        Timestamp: 'yesterday',
        SipResponseCode: '486',
      },
      now,
    );
    expect(odd).toMatchObject({
      callSid: 'CA1',
      sequenceNumber: null,
      durationSeconds: null,
      at: now,
      sipResponseCode: 486,
    });
  });

  it.each([
    ['human', 'human'],
    ['machine_start', 'machine'],
    ['machine_end_beep', 'machine'],
    ['machine_end_silence', 'machine'],
    ['machine_end_other', 'machine'],
    ['fax', 'machine'],
    ['unknown', 'unknown'],
    ['something_new', 'unknown'],
    ['', null],
    [undefined, null],
  ])('AnsweredBy %s is %s', (value, expected) => {
    expect(mapAnsweredBy(value)).toBe(expected);
    const params: FormParams = { CallSid: 'CA1', CallStatus: 'in-progress' };
    if (value !== undefined) params.AnsweredBy = value;
    expect(parseStatusCallback(params, new Date())!.answeredBy).toBe(expected);
  });
});

describe('callbacks: TwiML requests', () => {
  it("fetches the call's Url, then posts the digits to the gather's action, signed", async () => {
    const sid = await placed({ machineDetection: true });
    const first = await fake.fetchTwiml(sid);
    expect(first.url).toBe(receiver.url('/twiml?call=call_test'));
    expect(first.body).toBe(MENU);
    expect(first.params).toMatchObject({ CallSid: sid, CallStatus: 'in-progress', AnsweredBy: 'human' });
    const gathered = await fake.fetchTwiml(sid, '1');
    expect(gathered.url).toBe(receiver.url('/gather?node=menu&attempt=1'));
    expect(gathered.params).toMatchObject({ CallSid: sid, Digits: '1' });
    expect(gathered.body).toBe(BYE);
    const received = receiver.received.at(-1)!;
    expect(
      verifyTwilioSignature(account.authToken, signatureOf(received), urlOf(received), formOf(received)),
    ).toBe(true);
    await expect(fake.fetchTwiml(sid)).rejects.toThrow(/call is over/);
  });
});
