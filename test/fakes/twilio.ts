// A fake Twilio REST API (2010-04-01, JSON) on loopback, so Tidings' Twilio voice channel is tested
// over the wire against something that answers like Twilio: basic auth with the Account SID and
// Auth Token, the Calls resource (create, then cancel or complete), the Account and its phone
// numbers, and Twilio's error bodies `{code, message, more_info, status}`. It records every request,
// lets a test script answers (any status and Twilio code, Retry-After, a hang, a dropped
// connection), and plays Twilio's side of a call: the signed status callbacks of its progress (in
// order, shuffled or repeated) and the requests for its TwiML (the call's Url, a gather's action).
//
// It is written from Twilio's documentation, independently of src/channels/twilio-voice (its
// signature included), so the adapter cannot pass by agreeing with itself.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { TwilioCallStatus } from '../../src/channels/voice.ts';

export type Form = Record<string, string | string[]>;

export interface FakeTwilioAccount {
  sid: string;
  authToken: string;
  friendlyName: string;
  /** The account's phone numbers (IncomingPhoneNumbers), E.164. */
  numbers: string[];
  /** Verified caller ids (OutgoingCallerIds): Twilio takes them as From too. */
  callerIds: string[];
}

export interface RecordedRequest {
  method: string;
  /** With the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The form fields; a field sent more than once is an array. */
  form: Form;
  raw: string;
}

/** How the fake answers a request instead of its own behaviour. */
export interface FakeAnswer {
  status: number;
  /** A Twilio error code: the body is Twilio's error JSON with it. */
  code?: number;
  message?: string;
  /** The body as is (JSON unless a string), when there is no `code`. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer (the client gives up, or the fake closes). */
  hang?: boolean;
  /** Drop the connection once the request has arrived. */
  destroy?: boolean;
}

export type CallStatus = TwilioCallStatus;

export interface FakeCall {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  url: string;
  statusCallback: string | null;
  /** StatusCallbackEvent as asked (Twilio's default: completed only). */
  events: string[];
  machineDetection: string | null;
  status: CallStatus;
  dateCreated: Date;
  /** The TwiML Twilio last fetched for it, and from where. */
  document: { url: string; xml: string } | null;
}

export interface PlayOptions {
  /**
   * Indices into the callbacks Twilio generates (those the call subscribed to, in Twilio's order),
   * in the order to post them; an index twice posts it twice. Default: each once, in order.
   */
  order?: number[];
  /** AnsweredBy once answered, when the call asked for machine detection (default human). */
  answeredBy?: string;
  /** CallDuration of an answered call (default 12). */
  durationSeconds?: number;
  errorCode?: string;
  sipResponseCode?: number;
  /** `wrong`: signed with another token; `missing`: no X-Twilio-Signature. */
  signature?: 'valid' | 'wrong' | 'missing';
  /** When the first event happens; the next ones follow a second apart (the end after the talk). */
  startAt?: Date;
}

export interface PostedCallback {
  url: string;
  params: Form;
  headers: Record<string, string>;
  status: number;
  body: string;
}

const API = '/2010-04-01';
const ENDS: CallStatus[] = ['completed', 'busy', 'no-answer', 'failed', 'canceled'];
/** The StatusCallbackEvent under which Twilio reports a status. */
const eventOf = (s: CallStatus) => (ENDS.includes(s) ? 'completed' : s === 'in-progress' ? 'answered' : s);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** Twilio's dates: RFC 2822, UTC, "+0000". */
const rfc2822 = (d: Date) => d.toUTCString().replace('GMT', '+0000');
const notFound = (path: string) => twilioError(404, 20404, `The requested resource ${path} was not found`);
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** A Twilio error answer, as its REST API writes one. */
export function twilioError(status: number, code: number, message: string): FakeAnswer {
  return {
    status,
    body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
  };
}

/**
 * X-Twilio-Signature, from Twilio's webhook security page: the full URL, then each POST field's
 * name and value with no delimiter, fields sorted by name; HMAC-SHA1 keyed with the Auth Token;
 * base64.
 */
export function twilioSignature(authToken: string, url: string, params: Form): string {
  let data = url;
  // A repeated field: each distinct value once, sorted (as Twilio's own libraries check it).
  for (const name of Object.keys(params).sort()) {
    for (const value of [...new Set([params[name]!].flat())].sort()) data += name + value;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function parseForm(raw: string): Form {
  const form: Form = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    const had = form[name];
    form[name] = had === undefined ? value : ([] as string[]).concat(had, value);
  }
  return form;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const unescapeXml = (s: string) => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ENTITIES[e]!);
const attr = (attrs: string, name: string) => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m ? unescapeXml(m[1]!) : undefined;
};

export class FakeTwilio {
  readonly requests: RecordedRequest[] = [];
  readonly calls = new Map<string, FakeCall>();
  /** Numbers Twilio refuses to call (21216). */
  readonly blocked = new Set<string>();
  readonly #accounts: FakeTwilioAccount[] = [];
  readonly #scripted: FakeAnswer[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<FakeTwilio> {
    const server = createServer();
    const fake = new FakeTwilio(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const recorded = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, raw };
        fake.#handle({ ...recorded, form: parseForm(raw) }, res);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  /** The base URL to configure as the connection's apiUrl. */
  get apiUrl(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** An account with fresh credentials and one phone number. */
  createAccount(overrides: Partial<FakeTwilioAccount> = {}): FakeTwilioAccount {
    const account: FakeTwilioAccount = {
      sid: `AC${hex(16)}`,
      authToken: hex(16),
      friendlyName: 'Tidings test account',
      numbers: [`+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`],
      callerIds: [],
      ...overrides,
    };
    this.#accounts.push(account);
    return account;
  }

  /** The next requests (whatever they are) get these answers, in order, instead of the fake's own. */
  failNext(...answers: FakeAnswer[]): void {
    this.#scripted.push(...answers);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
  }

  // ---- Requests from Tidings ----

  #handle(req: RecordedRequest, res: ServerResponse): void {
    this.requests.push(req);
    const answer = this.#scripted.shift() ?? this.#route(req);
    if (answer.hang) return;
    if (answer.destroy) {
      res.socket?.destroy();
      return;
    }
    const body =
      answer.code !== undefined
        ? twilioError(answer.status, answer.code, answer.message ?? `Error ${answer.code}`).body
        : answer.body;
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body ?? {}));
  }

  #route(req: RecordedRequest): FakeAnswer {
    const url = new URL(req.path, 'http://api.invalid');
    const basic = String(req.headers.authorization ?? '').replace(/^Basic /, '');
    const [user, password] = Buffer.from(basic, 'base64').toString('utf8').split(/:(.*)/s);
    const caller = this.#accounts.find((a) => a.sid === user && a.authToken === password);
    if (!caller) {
      const answer = twilioError(401, 20003, 'Authenticate');
      (answer.body as Record<string, unknown>).detail = 'Your AccountSid or AuthToken was incorrect.';
      return { ...answer, headers: { 'www-authenticate': 'Basic realm="Twilio API"' } };
    }
    const m =
      /^\/2010-04-01\/Accounts\/([^/]+?)(?:\/(Calls|IncomingPhoneNumbers|OutgoingCallerIds)(?:\/([^/]+?))?)?\.json$/.exec(
        url.pathname,
      );
    // Another account's resources are not found: Twilio does not say they exist.
    if (!m || m[1] !== caller.sid) return notFound(url.pathname);
    const [, , collection, id] = m;
    if (!collection && req.method === 'GET') return { status: 200, body: this.#accountJson(caller) };
    if (collection === 'Calls' && !id && req.method === 'POST') return this.#createCall(caller, req.form);
    if (collection === 'Calls' && id && req.method === 'POST') return this.#updateCall(caller, id, req.form);
    if (collection && collection !== 'Calls' && !id && req.method === 'GET') {
      return this.#numbers(caller, collection, url.searchParams.get('PhoneNumber'));
    }
    return notFound(url.pathname);
  }

  #createCall(account: FakeTwilioAccount, form: Form): FakeAnswer {
    const [to, from, callUrl] = [first(form.To), first(form.From), first(form.Url)];
    if (!to) return twilioError(400, 21201, "No 'To' number is specified");
    if (!from) return twilioError(400, 21213, "No 'From' number is specified");
    if (!callUrl || !/^https?:\/\//.test(callUrl)) return twilioError(400, 21205, 'Url is not a valid URL');
    if (!/^\+[1-9]\d{6,14}$/.test(to)) {
      return twilioError(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    }
    if (![...account.numbers, ...account.callerIds].includes(from)) {
      return twilioError(400, 21210, `The source phone number provided, ${from}, is not yet verified`);
    }
    if (this.blocked.has(to)) return twilioError(400, 21216, `Account not allowed to call ${to}`);
    const events = form.StatusCallbackEvent === undefined ? ['completed'] : [form.StatusCallbackEvent].flat();
    const call: FakeCall = {
      sid: `CA${hex(16)}`,
      accountSid: account.sid,
      to,
      from,
      url: callUrl,
      statusCallback: first(form.StatusCallback) ?? null,
      events,
      machineDetection: first(form.MachineDetection) ?? null,
      status: 'queued',
      dateCreated: new Date(),
      document: null,
    };
    this.calls.set(call.sid, call);
    return { status: 201, body: this.#callJson(call) };
  }

  /** Status=canceled ends a queued or ringing call only; completed ends it in any state. */
  #updateCall(account: FakeTwilioAccount, sid: string, form: Form): FakeAnswer {
    const call = this.calls.get(sid);
    if (!call || call.accountSid !== account.sid)
      return notFound(`${API}/Accounts/${account.sid}/Calls/${sid}`);
    const status = first(form.Status);
    if (status !== 'canceled' && status !== 'completed') {
      return twilioError(400, 20001, `Invalid Status: ${status ?? '(none)'}`);
    }
    if (ENDS.includes(call.status))
      return twilioError(400, 21220, 'Call is not in-progress. Cannot redirect.');
    if (call.status === 'in-progress') {
      if (status === 'completed') call.status = 'completed';
    } else call.status = 'canceled';
    return { status: 200, body: this.#callJson(call) };
  }

  /** IncomingPhoneNumbers and OutgoingCallerIds: PhoneNumber is a pattern, partial numbers and * match. */
  #numbers(account: FakeTwilioAccount, collection: string, pattern: string | null): FakeAnswer {
    const incoming = collection === 'IncomingPhoneNumbers';
    const re = pattern
      ? new RegExp(pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*'))
      : /.*/;
    const numbers = (incoming ? account.numbers : account.callerIds).filter((n) => re.test(n));
    const key = incoming ? 'incoming_phone_numbers' : 'outgoing_caller_ids';
    const uri = `${API}/Accounts/${account.sid}/${collection}.json`;
    const items = numbers.map((n) => ({ sid: `PN${hex(16)}`, account_sid: account.sid, phone_number: n }));
    return { status: 200, body: { [key]: items, page: 0, page_size: 50, uri, next_page_uri: null } };
  }

  #accountJson(account: FakeTwilioAccount) {
    // Twilio's Account resource carries the Auth Token: a client must not keep what it reads here.
    return {
      sid: account.sid,
      friendly_name: account.friendlyName,
      status: 'active',
      type: 'Full',
      auth_token: account.authToken,
      uri: `${API}/Accounts/${account.sid}.json`,
    };
  }

  #callJson(call: FakeCall) {
    return {
      sid: call.sid,
      account_sid: call.accountSid,
      to: call.to,
      from: call.from,
      status: call.status,
      direction: 'outbound-api',
      date_created: rfc2822(call.dateCreated),
      uri: `${API}/Accounts/${call.accountSid}/Calls/${call.sid}.json`,
    };
  }

  // ---- Twilio's side of the call ----

  #call(sid: string): { call: FakeCall; account: FakeTwilioAccount } {
    const call = this.calls.get(sid);
    if (!call) throw new Error(`no call ${sid}`);
    return { call, account: this.#accounts.find((a) => a.sid === call.accountSid)! };
  }

  #params(call: FakeCall, status: CallStatus): Form {
    return {
      CallSid: call.sid,
      AccountSid: call.accountSid,
      From: call.from,
      To: call.to,
      CallStatus: status,
      ApiVersion: '2010-04-01',
      Direction: 'outbound-api',
    };
  }

  /**
   * The call goes through `statuses` (e.g. initiated, ringing, in-progress, completed; or ringing,
   * no-answer), and Twilio posts a status callback for each the call subscribed to: SequenceNumber
   * numbers them as Twilio generated them, whatever order they are posted in.
   */
  async playCall(sid: string, statuses: CallStatus[], options: PlayOptions = {}): Promise<PostedCallback[]> {
    const { call, account } = this.#call(sid);
    const answered = statuses.includes('in-progress');
    const duration = answered ? (options.durationSeconds ?? 12) : 0;
    let at = options.startAt?.getTime() ?? Date.now();
    const generated: Form[] = [];
    for (const status of statuses) {
      call.status = status;
      const end = ENDS.includes(status);
      at += end && answered ? duration * 1000 : 1000;
      if (!call.statusCallback || !call.events.includes(eventOf(status))) continue;
      const params: Form = {
        ...this.#params(call, status),
        CallbackSource: 'call-progress-events',
        SequenceNumber: String(generated.length),
        Timestamp: rfc2822(new Date(at)),
      };
      if (end) params.CallDuration = String(duration);
      if (call.machineDetection && answered && (end || status === 'in-progress'))
        params.AnsweredBy = options.answeredBy ?? 'human';
      if (end && options.errorCode) params.ErrorCode = options.errorCode;
      if (end && options.sipResponseCode) params.SipResponseCode = String(options.sipResponseCode);
      generated.push(params);
    }
    const posted: PostedCallback[] = [];
    for (const i of options.order ?? generated.map((_, i) => i)) {
      posted.push(await this.#post(account, call.statusCallback!, generated[i]!, options.signature));
    }
    return posted;
  }

  /**
   * Twilio asks for the call's TwiML: first its Url; then, from the last document, a gather's action
   * (with Digits, or without when the gather has actionOnEmptyResult), else its Redirect.
   */
  async fetchTwiml(
    sid: string,
    digits?: string,
    options: { answeredBy?: string } = {},
  ): Promise<PostedCallback> {
    const { call, account } = this.#call(sid);
    const params = this.#params(call, 'in-progress');
    if (call.machineDetection) params.AnsweredBy = options.answeredBy ?? 'human';
    let target = call.url;
    const doc = call.document;
    if (doc) {
      const gather = /<Gather\b([^>]*)>/.exec(doc.xml)?.[1];
      const redirect = /<Redirect\b[^>]*>([^<]*)<\/Redirect>/.exec(doc.xml);
      const action = gather === undefined ? undefined : (attr(gather, 'action') ?? doc.url);
      if (digits !== undefined && action) {
        target = action;
        Object.assign(params, { Digits: digits, FinishedOnKey: '' });
      } else if (digits !== undefined) throw new Error('the last TwiML has no <Gather>');
      else if (action && attr(gather!, 'actionOnEmptyResult') === 'true') target = action;
      else if (redirect) target = unescapeXml(redirect[1]!.trim());
      else throw new Error('the call is over: its last TwiML neither gathers nor redirects');
      target = new URL(target, doc.url).href;
    }
    const answer = await this.#post(account, target, params);
    if (answer.status === 200) call.document = { url: answer.url, xml: answer.body };
    return answer;
  }

  /** A request from Twilio: a form POST (what Tidings asks for), signed with the account's token. */
  async #post(
    account: FakeTwilioAccount,
    url: string,
    params: Form,
    signature: PlayOptions['signature'] = 'valid',
  ): Promise<PostedCallback> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) for (const v of [value].flat()) body.append(name, v);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      'user-agent': 'TwilioProxy/1.1',
      'i-twilio-idempotency-token': randomUUID(),
    };
    if (signature !== 'missing') {
      const token = signature === 'valid' ? account.authToken : hex(16);
      headers['x-twilio-signature'] = twilioSignature(token, url, params);
    }
    const res = await request(url, { method: 'POST', headers, body: body.toString() });
    return { url, params, headers, status: res.statusCode, body: await res.body.text() };
  }
}
