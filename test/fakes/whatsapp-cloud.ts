// A fake WhatsApp Cloud API (Meta's Graph API) on loopback, so Tidings' WhatsApp channel is tested
// over the wire against something that answers like Meta: the same paths, success bodies and Graph
// error bodies, checked as strictly as Meta checks them (token ownership, unknown ids, template
// name/language/status and parameter counts, text length, interactive limits). It records every
// request, lets a test script failures (any status and Graph error, Retry-After, a hang), decides
// template reviews on the test's word, and plays Meta's side of the webhooks: signed status,
// template and inbound callbacks, and the GET verification handshake. Media as Meta documents it:
// POST /{phone-number-id}/media (multipart) → {id}; GET /{media-id} → its details and a download URL
// on the fake itself, which answers the bytes to the owner's bearer token only (401 without);
// DELETE /{media-id}; addMedia gives a customer's message a file.
//
// It is written from Meta's documentation, independently of src/channels/whatsapp-cloud, so the
// adapter cannot pass by agreeing with itself.
import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { Arrivals } from '../helpers/arrivals.ts';
import { graphError } from './graph-errors.ts';
import { FakeMetaOnboarding } from './meta-onboarding.ts';
import { FakeMetaProfiles } from './meta-profile.ts';

export { type GraphErrorOptions, graphError } from './graph-errors.ts';

export interface FakeBusiness {
  phoneNumberId: string;
  businessAccountId: string;
  accessToken: string;
  appSecret: string;
  verifyToken: string;
  /** As GET /{phone-number-id} shows it, e.g. "+1 555-012-3456". */
  displayPhoneNumber: string;
  verifiedName: string;
  /** GET /{phone-number-id}'s throughput.level (STANDARD unless set). */
  throughputLevel?: 'STANDARD' | 'HIGH';
  /** GET /{phone-number-id}'s messaging_limit_tier (TIER_1K unless set). */
  messagingLimitTier?: string;
  /** GET /{phone-number-id}'s quality_rating (GREEN unless set). */
  qualityRating?: 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';
  /**
   * GET /{phone-number-id}'s platform_type: CLOUD_API once registered (every business createBusiness
   * makes is), NOT_APPLICABLE before (a number fresh from Embedded Signup): Meta refuses its sends
   * (133010) until POST /{phone-number-id}/register.
   */
  platformType?: 'CLOUD_API' | 'NOT_APPLICABLE' | 'ON_PREMISE';
  /** The number is on the WhatsApp Business app too (coexistence): it sends without registering. */
  onBusinessApp?: boolean;
  /** The two-step verification PIN set on the number, if any. */
  pin?: string | null;
  /** Registered with another provider under a PIN nobody here knows: register answers 133005. */
  registeredElsewhere?: boolean;
}

export type FakeTemplateStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';

export interface FakeTemplate {
  id: string;
  businessAccountId: string;
  name: string;
  language: string;
  category: string;
  components: any[];
  status: FakeTemplateStatus;
  reason: string | null;
  /** Meta's quality rating (UNKNOWN until customers have seen it) and when it was given. */
  qualityScore: 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';
  qualityDate: number;
  /** POSITIONAL unless submitted (or put) with parameter_format NAMED. */
  parameterFormat: 'POSITIONAL' | 'NAMED';
}

export interface RecordedRequest {
  method: string;
  /** The path with its query string, e.g. /v21.0/123/messages. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; null when there was none or it was not JSON. */
  body: any;
  raw: string;
  /** The body's bytes as sent (a multipart upload's file is not UTF-8). */
  bytes: Buffer;
}

/** A file the fake holds: uploaded by a business (POST /{phone-number-id}/media) or sent by a customer. */
export interface FakeMedia {
  id: string;
  phoneNumberId: string;
  bytes: Buffer;
  mimeType: string;
  filename: string | null;
}

/** A `status: read` request the fake took: a customer's message marked read (and typing shown). */
export interface ReadReceipt {
  businessPhoneNumberId: string;
  messageId: string;
  typing: boolean;
}

export interface SentMessage {
  businessPhoneNumberId: string;
  to: string;
  body: any;
  wamid: string;
}

/** How the fake answers a request instead of its own behaviour. */
export interface GraphAnswer {
  status: number;
  /** Sent as JSON (a string is sent as it is). */
  body?: unknown;
  /** Sent as these bytes instead of `body` (a media download), with the headers given. */
  bytes?: Buffer;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up or the fake closes). */
  hang?: boolean;
}

/** A promise that a request's answer (the fake's own, or a scripted one) waits for, or undefined. */
export type Holder = (request: RecordedRequest) => Promise<unknown> | undefined;

/** Looks at every request first; an answer replaces the fake's own, undefined lets it proceed. */
export type Responder = (request: RecordedRequest) => GraphAnswer | undefined;

export interface CallbackResult {
  status: number;
  body: string;
}

export interface CallbackOptions {
  /** `wrong`: signed with another secret; `missing`: no X-Hub-Signature-256 header. */
  signature?: 'valid' | 'wrong' | 'missing';
}

const digits = (count: number) =>
  String(randomInt(1, 10)) + Array.from({ length: count - 1 }, () => randomInt(0, 10)).join('');

/** Meta's message ids: "wamid." and a base64 blob. */
const newWamid = () => `wamid.${randomBytes(30).toString('base64')}`;

const MESSAGE_TYPES = [
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'template',
  'interactive',
  'location',
  'contacts',
  'reaction',
];
const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'];
const PHONE_FIELDS = [
  'id',
  'display_phone_number',
  'verified_name',
  'quality_rating',
  'code_verification_status',
  'platform_type',
  'throughput',
  'messaging_limit_tier',
  'status',
  'name_status',
  'is_on_biz_app',
];

const TEMPLATE_FIELDS = [
  'id',
  'name',
  'language',
  'status',
  'category',
  'components',
  'quality_score',
  'parameter_format',
  'rejected_reason',
  'previous_category',
  'sub_category',
];

/** Graph cursors are opaque base64 strings; the fake's name the entry they stand at. */
const cursorOf = (templateId: string) => Buffer.from(`hsm:${templateId}`).toString('base64url');
function cursorPosition(cursor: string, all: FakeTemplate[]): number | null {
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith('hsm:')) return null;
  const index = all.findIndex((t) => t.id === decoded.slice(4));
  return index < 0 ? null : index;
}

/** The distinct named placeholders ({{first_name}}) of a text. */
const names = (text: unknown): string[] =>
  typeof text === 'string'
    ? [...new Set(Array.from(text.matchAll(/\{\{\s*([a-z][a-z0-9_]*)\s*\}\}/g), (m) => m[1]!))]
    : [];
const hasNumbered = (text: unknown) => typeof text === 'string' && /\{\{\s*\d+\s*\}\}/.test(text);
const hasNamed = (text: unknown) => typeof text === 'string' && /\{\{\s*[a-z_][a-z0-9_]*\s*\}\}/.test(text);

const placeholders = (text: unknown) =>
  typeof text === 'string' ? new Set(Array.from(text.matchAll(/\{\{\s*(\d+)\s*\}\}/g), (m) => m[1])).size : 0;
const chars = (text: string) => [...text].length;
const isRecord = (v: unknown): v is Record<string, any> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isHttpUrl = (v: unknown) => {
  if (typeof v !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

export class FakeWhatsAppCloud {
  readonly requests: RecordedRequest[] = [];
  readonly #sends = new Arrivals<SentMessage>('sends');
  /** Every mark-as-read the fake took, in order. */
  readonly readReceipts: ReadReceipt[] = [];
  /** The wamids of customers' messages the fake made (inboundPayload), by business phone number id. */
  readonly #inboundWamids = new Map<string, string>();
  readonly templates = new Map<string, FakeTemplate>();
  /** Files by Meta's media id: uploads, and files given to customers' messages (addMedia). */
  readonly media = new Map<string, FakeMedia>();
  /** Submitted templates are APPROVED at once instead of PENDING. */
  autoApprove: boolean;
  respond: Responder | undefined;
  /** Requests whose handling (and answer) waits: recorded at once, answered once the promise settles. */
  hold: Holder | undefined;
  /**
   * Requests the fake handles (Meta does what they ask) but never answers: the answer lost on the
   * way back, as when the network or the caller dies after Meta acted.
   */
  loseAnswer: ((request: RecordedRequest) => boolean) | undefined;
  /** How long every answer takes (Meta's own latency), unless a scripted answer says otherwise. */
  latencyMs = 0;
  /**
   * WhatsApp's id for a number a business writes to (E.164 → wa_id), where it is not the number's
   * digits: "for Brazil and Mexico, the extra added prefix of the phone number may be modified by
   * the Cloud API" (Meta's send-messages reference). A send's answer reports it.
   */
  readonly waIds = new Map<string, string>();
  /**
   * Where Meta posts each business's status webhooks, by phone number id: Meta's `sent` follows
   * every send it accepts (its answer only says it took the message). Set by reportStatuses.
   */
  readonly #statusSinks = new Map<
    string,
    (body: string, headers: Record<string, string>) => Promise<unknown>
  >();
  readonly #version: string;
  readonly #server: Server;
  readonly #businesses: FakeBusiness[] = [];
  readonly #scripted: GraphAnswer[] = [];
  /** Embedded Signup: apps, signup codes, subscribed apps, registrations (meta-onboarding.ts). */
  readonly onboarding = new FakeMetaOnboarding((overrides) => this.createBusiness(overrides));
  /** Business profiles and the Resumable Upload API (meta-profile.ts). */
  readonly profiles = new FakeMetaProfiles(() => this.onboarding.apps);

  private constructor(server: Server, options: { autoApprove?: boolean; version?: string }) {
    this.#server = server;
    this.autoApprove = options.autoApprove ?? false;
    this.#version = options.version ?? 'v21.0';
  }

  static async start(options: { autoApprove?: boolean; version?: string } = {}): Promise<FakeWhatsAppCloud> {
    const server = createServer();
    const fake = new FakeWhatsAppCloud(server, options);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const raw = bytes.toString('utf8');
        let body: unknown = null;
        try {
          body = raw ? JSON.parse(raw) : null;
        } catch {
          // not JSON: the route answers for it
        }
        fake.#handle(
          { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, raw, bytes },
          res,
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** The Graph base URL to configure, e.g. http://127.0.0.1:PORT/v21.0. */
  get graphUrl(): string {
    return `http://127.0.0.1:${this.port}/${this.#version}`;
  }

  /** Registers a business (a WABA with one phone number) with fresh random credentials. */
  createBusiness(overrides: Partial<FakeBusiness> = {}): FakeBusiness {
    const local = digits(7);
    const business: FakeBusiness = {
      phoneNumberId: digits(15),
      businessAccountId: digits(15),
      accessToken: `EAA${randomBytes(48).toString('base64url')}`,
      appSecret: randomBytes(16).toString('hex'),
      verifyToken: randomBytes(12).toString('hex'),
      displayPhoneNumber: `+1 555-${local.slice(0, 3)}-${local.slice(3)}`,
      verifiedName: `Test Business ${digits(4)}`,
      ...overrides,
    };
    this.#businesses.push(business);
    return business;
  }

  /**
   * A file a customer sends the business: its id goes into an inbound media message (e.g.
   * `inboundMessages.image({ id })`), and the business fetches it with its token.
   */
  addMedia(
    business: FakeBusiness,
    bytes: Buffer,
    mimeType: string,
    filename: string | null = null,
  ): FakeMedia {
    const media: FakeMedia = {
      id: newMediaId(),
      phoneNumberId: business.phoneNumberId,
      bytes,
      mimeType,
      filename,
    };
    this.media.set(media.id, media);
    return media;
  }

  /** Puts a template straight into a business's account (APPROVED unless told otherwise). */
  addTemplate(
    business: FakeBusiness,
    template: {
      name: string;
      language: string;
      category?: string;
      components: any[];
      parameter_format?: string;
      qualityScore?: FakeTemplate['qualityScore'];
      reason?: string | null;
    },
    status: FakeTemplateStatus = 'APPROVED',
  ): FakeTemplate {
    const stored: FakeTemplate = {
      id: digits(16),
      businessAccountId: business.businessAccountId,
      name: template.name,
      language: template.language,
      category: template.category ?? 'UTILITY',
      components: structuredClone(template.components),
      status,
      reason: template.reason ?? null,
      qualityScore: template.qualityScore ?? 'UNKNOWN',
      qualityDate: Math.floor(Date.now() / 1000),
      parameterFormat: template.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL',
    };
    this.templates.set(stored.id, stored);
    return stored;
  }

  setTemplateStatus(id: string, status: FakeTemplateStatus, reason: string | null = null): FakeTemplate {
    const template = this.templates.get(id);
    if (!template) throw new Error(`the fake has no template ${id}`);
    template.status = status;
    template.reason = reason;
    return template;
  }

  approveTemplate(id: string): FakeTemplate {
    return this.setTemplateStatus(id, 'APPROVED');
  }

  rejectTemplate(id: string, reason = 'INVALID_FORMAT'): FakeTemplate {
    return this.setTemplateStatus(id, 'REJECTED', reason);
  }

  /**
   * The next `times` sends (POST …/messages) get this answer instead of the fake's own, before any
   * check (token, ids, body): Meta's own failures do not wait for validation either.
   */
  failNext(answer: GraphAnswer, times = 1): void {
    for (let i = 0; i < times; i++) this.#scripted.push(answer);
  }

  /** Every message the fake accepted, in order. */
  get sent(): SentMessage[] {
    return this.#sends.items;
  }

  /** Resolves once `count` messages were accepted in all; rejects after timeoutMs. */
  waitForSends(count: number, timeoutMs = 10_000): Promise<SentMessage[]> {
    return this.#sends.waitFor(count, timeoutMs);
  }

  /**
   * The `whatsapp` object of PUT /account/channel for a number of a partner's Meta app: no app
   * secret or verify token of its own (the partner's app checks its callbacks).
   */
  static partnerAppChannelSettings(business: FakeBusiness) {
    return {
      phoneNumberId: business.phoneNumberId,
      businessAccountId: business.businessAccountId,
      accessToken: business.accessToken,
    };
  }

  /** The `whatsapp` object of PUT /account/channel for this business's number. */
  static channelSettings(business: FakeBusiness) {
    return {
      phoneNumberId: business.phoneNumberId,
      businessAccountId: business.businessAccountId,
      accessToken: business.accessToken,
      appSecret: business.appSecret,
      verifyToken: business.verifyToken,
    };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
  }

  // ---- Requests from Tidings ----

  #handle(req: RecordedRequest, res: ServerResponse): void {
    this.requests.push(req);
    const held = this.hold?.(req);
    if (held) void held.finally(() => this.#answer(req, res));
    else this.#answer(req, res);
  }

  #answer(req: RecordedRequest, res: ServerResponse): void {
    const answer = this.respond?.(req) ?? this.#route(req);
    if (answer.hang || this.loseAnswer?.(req)) return;
    const send = () => {
      if (res.destroyed) return;
      if (answer.bytes) {
        res.writeHead(answer.status, { 'content-length': String(answer.bytes.length), ...answer.headers });
        res.end(answer.bytes);
        return;
      }
      const payload = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
      res.writeHead(answer.status, { 'content-type': 'application/json; charset=UTF-8', ...answer.headers });
      res.end(payload);
    };
    const delay = answer.delayMs ?? this.latencyMs;
    if (delay) setTimeout(send, delay).unref();
    else send();
  }

  #route(req: RecordedRequest): GraphAnswer {
    const url = new URL(req.path, 'http://graph.invalid');
    if (url.pathname === DOWNLOAD_PATH) return this.#download(req, url);
    const parts = /^\/v\d+\.\d+\/([^/]+)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!parts) return graphError(2500, { message: `Unknown path components: ${url.pathname}` });
    const [, id, edge] = parts as unknown as [string, string, string | undefined];
    const isSend = req.method === 'POST' && edge === 'messages';
    if (isSend && this.#scripted.length > 0) return this.#scripted.shift()!;
    if (id === 'oauth' && edge === 'access_token' && req.method === 'GET')
      return this.onboarding.exchange(url);
    if (id.startsWith('upload:') && edge === undefined && req.method === 'POST')
      return this.profiles.upload(req, id, this.#businesses);

    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const caller = token ? this.#businesses.find((b) => b.accessToken === token) : undefined;
    if (!caller) return graphError(190);
    const template = this.templates.get(id);
    if (template && req.method === 'POST' && edge === undefined) {
      const wabaOwner = this.#businesses.find((b) => b.businessAccountId === template.businessAccountId);
      if (wabaOwner !== caller)
        return graphError(190, {
          message: 'Error validating access token: the token does not belong to this object',
        });
      return this.#editTemplate(template, req.body);
    }
    const file = this.media.get(id);
    if (file && edge === undefined && (req.method === 'GET' || req.method === 'DELETE')) {
      if (caller.phoneNumberId !== file.phoneNumberId) {
        return graphError(100, {
          type: 'GraphMethodException',
          subcode: 33,
          message: `Unsupported ${req.method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
        });
      }
      if (req.method === 'DELETE') {
        this.media.delete(id);
        return { status: 200, body: { success: true } };
      }
      return {
        status: 200,
        body: {
          messaging_product: 'whatsapp',
          url: `http://127.0.0.1:${this.port}${DOWNLOAD_PATH}?mid=${id}&ext=${Date.now()}`,
          mime_type: file.mimeType,
          sha256: createHash('sha256').update(file.bytes).digest('hex'),
          file_size: file.bytes.length,
          id,
        },
      };
    }
    if (edge === 'uploads' && req.method === 'POST') {
      const started = this.profiles.startUpload(url, id, caller);
      if (started) return started;
    }
    const owner = this.#businesses.find((b) => b.phoneNumberId === id || b.businessAccountId === id);
    const onboarding = this.onboarding.edge(req, id, edge, caller, owner);
    if (onboarding) return onboarding;
    const unsupported = () =>
      graphError(100, {
        type: 'GraphMethodException',
        subcode: 33,
        message: `Unsupported ${req.method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
      });
    if (!owner) return unsupported();
    if (owner !== caller) {
      return graphError(190, {
        message: 'Error validating access token: the token does not belong to this object',
      });
    }
    const onPhone = owner.phoneNumberId === id;
    if (req.method === 'POST' && edge === 'messages' && onPhone) return this.#send(owner, req.body);
    if (req.method === 'POST' && edge === 'message_templates' && !onPhone)
      return this.#createTemplate(owner, req.body);
    if (req.method === 'DELETE' && edge === 'message_templates' && !onPhone)
      return this.#deleteTemplate(owner, url);
    if (req.method === 'GET' && edge === undefined && onPhone) return this.#phoneNumber(owner, url);
    if (req.method === 'POST' && edge === 'media' && onPhone) return this.#upload(owner, req);
    if (edge === 'whatsapp_business_profile' && onPhone) return this.profiles.profile(req, url, owner);
    if (req.method === 'GET' && edge === 'message_templates' && !onPhone)
      return this.#listTemplates(owner, url);
    if (edge !== undefined && !['messages', 'message_templates', 'media'].includes(edge)) {
      return graphError(2500, { message: `Unknown path components: /${edge}` });
    }
    return unsupported();
  }

  /**
   * POST /{phone-number-id}/media: multipart/form-data with messaging_product=whatsapp, the file
   * (its part's Content-Type its type) and `type`; answers {id}.
   */
  #upload(business: FakeBusiness, req: RecordedRequest): GraphAnswer {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(String(req.headers['content-type'] ?? ''));
    if (!boundary) return graphError(100, { message: '(#100) The parameter file is required.' });
    const parts = parseMultipart(req.bytes, boundary[1] ?? boundary[2]!);
    const field = (name: string) =>
      parts.find((p) => p.name === name && p.filename === null)?.data.toString('utf8');
    const product = field('messaging_product');
    if (product === undefined)
      return graphError(100, { message: '(#100) The parameter messaging_product is required.' });
    if (product !== 'whatsapp') {
      return graphError(100, {
        message: `(#100) Param messaging_product must be one of {WHATSAPP} - got "${product}".`,
      });
    }
    const file = parts.find((p) => p.name === 'file' && p.filename !== null);
    if (!file) return graphError(100, { message: '(#100) The parameter file is required.' });
    const type = field('type') ?? file.contentType;
    if (!type) return graphError(100, { message: '(#100) The parameter type is required.' });
    if (file.data.length === 0)
      return graphError(131053, { status: 400, message: '(#131053) Media upload error' });
    const media: FakeMedia = {
      id: newMediaId(),
      phoneNumberId: business.phoneNumberId,
      bytes: file.data,
      mimeType: type,
      filename: file.filename,
    };
    this.media.set(media.id, media);
    return { status: 200, body: { id: media.id } };
  }

  /** The download URL GET /{media-id} gives: the file, to its business's token only. */
  #download(req: RecordedRequest, url: URL): GraphAnswer {
    const file = this.media.get(url.searchParams.get('mid') ?? '');
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const caller = token ? this.#businesses.find((b) => b.accessToken === token) : undefined;
    if (!caller) return { status: 401, body: 'Unauthorized', headers: { 'content-type': 'text/plain' } };
    if (!file || file.phoneNumberId !== caller.phoneNumberId)
      return { status: 404, body: 'Not Found', headers: { 'content-type': 'text/plain' } };
    return { status: 200, bytes: file.bytes, headers: { 'content-type': file.mimeType } };
  }

  /** DELETE /{waba-id}/message_templates?name=…[&hsm_id=…]: every language of the name, or one. */
  #deleteTemplate(business: FakeBusiness, url: URL): GraphAnswer {
    const name = url.searchParams.get('name');
    const hsmId = url.searchParams.get('hsm_id');
    if (!name) return graphError(100, { message: '(#100) The parameter name is required.' });
    const doomed = [...this.templates.values()].filter(
      (t) =>
        t.businessAccountId === business.businessAccountId &&
        t.name === name &&
        (hsmId === null || t.id === hsmId),
    );
    if (doomed.length === 0) {
      return graphError(100, {
        type: 'GraphMethodException',
        subcode: 33,
        message: `Unsupported delete request. Object with ID '${hsmId ?? name}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
      });
    }
    for (const t of doomed) this.templates.delete(t.id);
    return { status: 200, body: { success: true } };
  }

  /**
   * GET /{waba-id}/message_templates: the WABA's templates a page at a time, as every Graph list
   * pages: `limit` (25 by default), the opaque cursors `after` / `before`, and `paging` with
   * `cursors: {before, after}` (the page's first and last entries) and `next` (the next page's full
   * URL) only while one follows. `fields` picks the fields (the id always comes).
   */
  #listTemplates(business: FakeBusiness, url: URL): GraphAnswer {
    const asked = url.searchParams.get('fields');
    const fields = asked
      ? asked.split(',').map((f) => f.trim())
      : ['name', 'components', 'language', 'status', 'category'];
    const unknown = fields.find((f) => !TEMPLATE_FIELDS.includes(f));
    if (unknown) {
      return graphError(100, {
        message: `(#100) Tried accessing nonexisting field (${unknown}) on node type (WhatsAppBusinessHSM)`,
      });
    }
    const limitText = url.searchParams.get('limit') ?? '25';
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1) {
      return graphError(100, { message: '(#100) Param limit must be a positive integer' });
    }
    const all = [...this.templates.values()].filter(
      (t) => t.businessAccountId === business.businessAccountId,
    );
    const after = url.searchParams.get('after');
    const before = url.searchParams.get('before');
    let start = 0;
    let end = Math.min(all.length, limit);
    if (after !== null || before !== null) {
      const position = cursorPosition(after ?? before!, all);
      if (position === null)
        return graphError(100, { message: '(#100) The after/before cursor is not valid' });
      if (after !== null) start = position + 1;
      else start = Math.max(0, position - limit);
      end = Math.min(all.length, after !== null ? start + limit : position);
    }
    const page = all.slice(start, end);
    const data = page.map((t) => {
      const full: Record<string, unknown> = {
        name: t.name,
        components: structuredClone(t.components),
        language: t.language,
        status: t.status,
        category: t.category,
        parameter_format: t.parameterFormat,
        quality_score: { score: t.qualityScore, date: t.qualityDate },
        rejected_reason: t.reason ?? 'NONE',
      };
      const entry: Record<string, unknown> = {};
      for (const f of fields) if (f !== 'id') entry[f] = full[f];
      entry.id = t.id;
      return entry;
    });
    if (page.length === 0) return { status: 200, body: { data } };
    const cursors = { before: cursorOf(page[0]!.id), after: cursorOf(page.at(-1)!.id) };
    const link = (key: 'after' | 'before', cursor: string) => {
      const next = new URL(`https://graph.facebook.com${url.pathname}`);
      if (asked) next.searchParams.set('fields', asked);
      next.searchParams.set('limit', String(limit));
      next.searchParams.set(key, cursor);
      return next.toString();
    };
    const paging: Record<string, unknown> = { cursors };
    if (end < all.length) paging.next = link('after', cursors.after);
    if (start > 0) paging.previous = link('before', cursors.before);
    return { status: 200, body: { data, paging } };
  }

  #phoneNumber(business: FakeBusiness, url: URL): GraphAnswer {
    const asked = url.searchParams.get('fields');
    const fields = asked ? asked.split(',').map((f) => f.trim()) : PHONE_FIELDS;
    const unknown = fields.find((f) => !PHONE_FIELDS.includes(f));
    if (unknown) {
      return graphError(100, {
        message: `(#100) Tried accessing nonexisting field (${unknown}) on node type (WhatsAppBusinessPhoneNumber)`,
      });
    }
    const all: Record<string, unknown> = {
      verified_name: business.verifiedName,
      code_verification_status: 'VERIFIED',
      display_phone_number: business.displayPhoneNumber,
      quality_rating: business.qualityRating ?? 'GREEN',
      platform_type: business.platformType ?? 'CLOUD_API',
      status:
        (business.platformType ?? 'CLOUD_API') === 'CLOUD_API' || business.onBusinessApp
          ? 'CONNECTED'
          : 'PENDING',
      name_status: 'APPROVED',
      is_on_biz_app: business.onBusinessApp ?? false,
      throughput: { level: business.throughputLevel ?? 'STANDARD' },
      messaging_limit_tier: business.messagingLimitTier ?? 'TIER_1K',
    };
    const body: Record<string, unknown> = {};
    for (const field of fields) if (field !== 'id') body[field] = all[field];
    body.id = business.phoneNumberId;
    return { status: 200, body };
  }

  /**
   * Posts the business's status webhooks with `deliver` from now on, signed with its app secret:
   * a `sent` status (echoing biz_opaque_callback_data, with Meta's pricing) shortly after each send
   * the fake accepts, as Meta does.
   */
  reportStatuses(
    business: FakeBusiness,
    deliver: (body: string, headers: Record<string, string>) => Promise<unknown>,
  ): void {
    this.#statusSinks.set(business.phoneNumberId, deliver);
  }

  #reportSent(
    business: FakeBusiness,
    wamid: string,
    recipient: { recipientId: string } | { recipientUserId: string },
    body: any,
  ): void {
    const deliver = this.#statusSinks.get(business.phoneNumberId);
    if (!deliver) return;
    const payload = JSON.stringify(
      this.statusPayload(business, {
        wamid,
        status: 'sent',
        ...recipient,
        ...(typeof body.biz_opaque_callback_data === 'string'
          ? { bizOpaqueCallbackData: body.biz_opaque_callback_data }
          : {}),
      }),
    );
    const headers = {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', business.appSecret).update(payload).digest('hex')}`,
    };
    // After the answer, as Meta's webhook follows its API's answer.
    setTimeout(() => void deliver(payload, headers).catch(() => {}), 10).unref();
  }

  /**
   * Meta's mark as read (and typing indicator): the same edge as a send, with `status: read` and
   * the customer's message's wamid; {success: true}.
   */
  #markRead(business: FakeBusiness, body: Record<string, any>): GraphAnswer {
    if (body.messaging_product !== 'whatsapp') {
      return graphError(100, { message: '(#100) The parameter messaging_product is required.' });
    }
    if (body.status !== 'read') {
      return graphError(100, {
        message: `(#100) Param status must be one of {READ} - got "${body.status}".`,
      });
    }
    if (typeof body.message_id !== 'string' || !body.message_id) {
      return graphError(100, { message: '(#100) The parameter message_id is required.' });
    }
    if (this.#inboundWamids.get(body.message_id) !== business.phoneNumberId) {
      return graphError(100, { message: '(#100) Invalid parameter', details: 'Invalid message_id' });
    }
    const typing = body.typing_indicator;
    if (typing !== undefined && !(isRecord(typing) && typing.type === 'text')) {
      return graphError(100, { message: '(#100) Param typing_indicator[type] must be one of {TEXT}' });
    }
    this.readReceipts.push({
      businessPhoneNumberId: business.phoneNumberId,
      messageId: body.message_id,
      typing: typing !== undefined,
    });
    return { status: 200, body: { success: true } };
  }

  #send(business: FakeBusiness, body: any): GraphAnswer {
    if ((business.platformType ?? 'CLOUD_API') !== 'CLOUD_API' && !business.onBusinessApp)
      return graphError(133010, { status: 400, message: '(#133010) Phone number Not Registered' });
    if (isRecord(body) && body.status !== undefined) return this.#markRead(business, body);
    const problem = this.#checkMessage(business, body);
    if (problem) return problem;
    const wamid = newWamid();
    // By number (`to`, which wins when both are given), or by business-scoped user id (`recipient`):
    // the answer names the wa_id, or echoes the user id (Meta's BSUID page, "Sending messages").
    const byNumber = typeof body.to === 'string';
    const to: string = byNumber ? body.to : body.recipient;
    this.#sends.push({ businessPhoneNumberId: business.phoneNumberId, to, body, wamid });
    const waId = byNumber ? (this.waIds.get(body.to) ?? String(body.to).replace(/\D/g, '')) : null;
    this.#reportSent(business, wamid, byNumber ? { recipientId: waId! } : { recipientUserId: to }, body);
    // message_status (template pacing) is only in answers to template sends.
    const message: Record<string, string> = { id: wamid };
    if (body.type === 'template') message.message_status = 'accepted';
    return {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [byNumber ? { input: body.to, wa_id: waId } : { input: to, user_id: to }],
        messages: [message],
      },
    };
  }

  #checkMessage(business: FakeBusiness, body: any): GraphAnswer | null {
    const invalid = (details: string) => graphError(131009, { details });
    const missing = (details: string) => graphError(131008, { details });
    if (!isRecord(body)) return graphError(100, { details: 'The request body must be a JSON object' });
    if (body.messaging_product === undefined) {
      return graphError(100, { message: '(#100) The parameter messaging_product is required.' });
    }
    if (body.messaging_product !== 'whatsapp') {
      return graphError(100, {
        message: `(#100) Param messaging_product must be one of {WHATSAPP} - got "${body.messaging_product}".`,
      });
    }
    if (body.recipient_type !== undefined && !['individual', 'group'].includes(body.recipient_type)) {
      return graphError(100, { message: '(#100) Param recipient_type must be one of {GROUP, INDIVIDUAL}' });
    }
    if (body.to === undefined && body.recipient !== undefined) {
      // A business-scoped user id: the country, a dot, up to 128 letters and digits (ENT. for a parent).
      if (
        typeof body.recipient !== 'string' ||
        !/^[A-Z]{2}\.(ENT\.)?[A-Za-z0-9]{1,128}$/.test(body.recipient)
      )
        return invalid(`Invalid recipient: ${String(body.recipient)}`);
    } else {
      if (typeof body.to !== 'string' || !body.to) {
        return graphError(100, { message: '(#100) The parameter to is required.' });
      }
      const toDigits = body.to.replace(/\D/g, '');
      if (!/^\+?[\d\s()-]+$/.test(body.to) || toDigits.length < 7 || toDigits.length > 15) {
        return invalid(`Invalid recipient phone number: ${body.to}`);
      }
    }
    // An arbitrary string Meta echoes in the message's status callbacks, up to 512 characters.
    const opaque = body.biz_opaque_callback_data;
    if (opaque !== undefined && (typeof opaque !== 'string' || chars(opaque) > 512)) {
      return invalid('biz_opaque_callback_data must be a string of at most 512 characters');
    }
    const type = body.type ?? 'text';
    if (!MESSAGE_TYPES.includes(type)) {
      return graphError(100, {
        message: `(#100) Param type must be one of {${MESSAGE_TYPES.join(', ').toUpperCase()}}`,
      });
    }
    if (
      body.context !== undefined &&
      !(isRecord(body.context) && typeof body.context.message_id === 'string')
    ) {
      return invalid('context must be {message_id: <wamid>}');
    }
    if (type === 'contacts') return checkContacts(body.contacts);
    const object = body[type];
    if (!isRecord(object)) return missing(`Parameter '${type}' is required for messages of type ${type}`);
    if (type === 'reaction' || type === 'location') return checkPlainKind(type, object);

    if (type === 'text') {
      if (typeof object.body !== 'string' || !object.body)
        return missing("Parameter 'text.body' is required");
      if (chars(object.body) > 4096) {
        return graphError(100, {
          message: "(#100) Param text['body'] must be at most 4096 characters long.",
        });
      }
      if (object.preview_url !== undefined && typeof object.preview_url !== 'boolean') {
        return invalid('preview_url must be a boolean');
      }
      return null;
    }
    if (MEDIA_TYPES.includes(type)) {
      if (object.id === undefined && object.link === undefined)
        return missing(`Parameter '${type}.link' or '${type}.id' is required`);
      if (object.link !== undefined && !isHttpUrl(object.link))
        return invalid(`${type}.link must be an http(s) URL`);
      if (object.caption !== undefined) {
        if (type === 'audio' || type === 'sticker') return invalid(`caption is not allowed for ${type}`);
        if (typeof object.caption !== 'string' || chars(object.caption) > 1024) {
          return invalid('caption must be a string of at most 1024 characters');
        }
      }
      if (object.filename !== undefined && type !== 'document')
        return invalid(`filename is not allowed for ${type}`);
      return null;
    }
    if (type === 'interactive') return checkInteractive(object);
    if (type === 'template') return this.#checkTemplate(business, object);
    return null;
  }

  #checkTemplate(business: FakeBusiness, sent: Record<string, any>): GraphAnswer | null {
    const name = sent.name;
    const language = isRecord(sent.language) ? sent.language.code : undefined;
    if (typeof name !== 'string' || !name)
      return graphError(131008, { details: "Parameter 'template.name' is required" });
    if (typeof language !== 'string' || !language) {
      return graphError(131008, { details: "Parameter 'template.language.code' is required" });
    }
    const template = [...this.templates.values()].find(
      (t) => t.businessAccountId === business.businessAccountId && t.name === name && t.language === language,
    );
    if (!template || template.status === 'PENDING' || template.status === 'REJECTED') {
      return graphError(132001, { details: `template name (${name}) does not exist in ${language}` });
    }
    if (template.status === 'PAUSED') return graphError(132015, { details: `template ${name} is paused` });
    if (template.status === 'DISABLED')
      return graphError(132016, { details: `template ${name} is disabled` });

    // What the template needs filled, by send-time component.
    const header = template.components.find((c) => c.type === 'HEADER');
    const body = template.components.find((c) => c.type === 'BODY');
    const buttons: any[] = template.components.find((c) => c.type === 'BUTTONS')?.buttons ?? [];
    const expected = new Map<string, { count: number; kind: string; names?: string[] }>();
    const named = template.parameterFormat === 'NAMED';
    if (named && header?.format === 'TEXT' && names(header.text).length > 0)
      expected.set('header', { count: names(header.text).length, kind: 'text', names: names(header.text) });
    else if (!named && header?.format === 'TEXT' && placeholders(header.text) > 0)
      expected.set('header', { count: 1, kind: 'text' });
    else if (header && header.format !== 'TEXT')
      expected.set('header', { count: 1, kind: String(header.format).toLowerCase() });
    if (named && names(body?.text).length > 0)
      expected.set('body', { count: names(body.text).length, kind: 'text', names: names(body.text) });
    else if (!named && placeholders(body?.text) > 0)
      expected.set('body', { count: placeholders(body.text), kind: 'text' });
    buttons.forEach((b, index) => {
      if (b.type === 'URL' && placeholders(b.url) > 0)
        expected.set(`button:${index}`, { count: 1, kind: 'text' });
    });

    const given = new Map<string, any[]>();
    const components = sent.components ?? [];
    if (!Array.isArray(components))
      return graphError(100, { details: 'template.components must be an array' });
    for (const component of components) {
      const type = String(component?.type ?? '').toLowerCase();
      const key = type === 'button' ? `button:${Number(component.index)}` : type;
      if (type === 'button' && component.sub_type === 'quick_reply') {
        // A quick reply's payload for this send: the button at `index` must be a QUICK_REPLY.
        const button = buttons[Number(component.index)];
        const payload = Array.isArray(component.parameters) ? component.parameters : [];
        if (button?.type !== 'QUICK_REPLY' || String(Number(component.index)) !== String(component.index)) {
          return graphError(131009, { details: `button at index ${component.index} is not a quick reply` });
        }
        if (
          payload.length !== 1 ||
          payload[0]?.type !== 'payload' ||
          typeof payload[0].payload !== 'string'
        ) {
          return graphError(131009, { details: 'a quick_reply button takes one {type: payload, payload}' });
        }
        continue;
      }
      if (!['header', 'body'].includes(type) && !(type === 'button' && component.sub_type === 'url')) {
        return graphError(132000, { details: `unexpected component ${JSON.stringify(component?.type)}` });
      }
      given.set(key, Array.isArray(component.parameters) ? component.parameters : []);
    }
    for (const key of new Set([...expected.keys(), ...given.keys()])) {
      const want = expected.get(key);
      const got = given.get(key) ?? [];
      if ((want?.count ?? 0) !== got.length) {
        return graphError(132000, {
          details: `${key.replace(':', ' ')}: number of localizable_params (${got.length}) does not match the expected number of params (${want?.count ?? 0})`,
        });
      }
      for (const parameter of got) {
        // A NAMED template's values name their placeholder; a POSITIONAL one's may not.
        if (
          want?.names
            ? !want.names.includes(parameter?.parameter_name)
            : parameter?.parameter_name !== undefined
        ) {
          return graphError(132012, {
            details: `${key.replace(':', ' ')}: parameter_name ${JSON.stringify(parameter?.parameter_name)} does not match the template`,
          });
        }
        const ok =
          want?.kind === 'text'
            ? parameter?.type === 'text' && typeof parameter.text === 'string' && parameter.text.length > 0
            : parameter?.type === want?.kind && isHttpUrl(parameter?.[want!.kind]?.link);
        if (!ok) {
          return graphError(132012, {
            details: `${key.replace(':', ' ')}: parameter format does not match the template (expected ${want?.kind})`,
          });
        }
      }
    }
    return null;
  }

  /** Why Meta would refuse this template definition, or null. */
  #templateProblem(body: any): GraphAnswer | null {
    const refuse = (userMessage: string, subcode = 2388001) =>
      graphError(100, { message: 'Invalid parameter', subcode, userMessage });
    if (!isRecord(body)) return refuse('The request body must be a JSON object');
    if (typeof body.name !== 'string' || !/^[a-z0-9_]{1,512}$/.test(body.name)) {
      return refuse(
        'Template name can only contain lowercase alphanumeric characters and underscores',
        2388023,
      );
    }
    if (typeof body.language !== 'string' || !/^[a-z]{2,3}(_[A-Z]{2,4})?$/.test(body.language)) {
      return refuse('The language is not supported', 2388072);
    }
    if (!['MARKETING', 'UTILITY', 'AUTHENTICATION'].includes(body.category)) {
      return refuse('Category must be one of MARKETING, UTILITY or AUTHENTICATION', 2388026);
    }
    const components = body.components;
    if (!Array.isArray(components) || components.length === 0)
      return refuse('components are required', 2388040);
    const bodies = components.filter((c: any) => c?.type === 'BODY');
    if (bodies.length !== 1 || typeof bodies[0].text !== 'string' || !bodies[0].text) {
      return refuse('A template needs exactly one BODY component with text', 2388043);
    }
    if (chars(bodies[0].text) > 1024) return refuse('The body text is longer than 1024 characters', 2388040);
    for (const component of components) {
      if (!['HEADER', 'BODY', 'FOOTER', 'BUTTONS'].includes(component?.type)) {
        return refuse(`Unknown component type ${JSON.stringify(component?.type)}`, 2388047);
      }
      if (component.type === 'HEADER') {
        if (!['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'].includes(component.format)) {
          return refuse('Header format is incorrect', 2388047);
        }
        if (
          component.format === 'TEXT' &&
          (typeof component.text !== 'string' || chars(component.text) > 60)
        ) {
          return refuse('A TEXT header needs text of at most 60 characters', 2388040);
        }
        if (component.format === 'TEXT' && placeholders(component.text) > 1) {
          return refuse('A TEXT header may have one variable', 2388047);
        }
        if (
          ['IMAGE', 'VIDEO', 'DOCUMENT'].includes(component.format) &&
          !component.example?.header_handle?.[0]
        ) {
          return refuse('A media header needs an example (header_handle)', 2388043);
        }
      }
    }
    return this.#parameterFormatProblem(body, refuse);
  }

  /**
   * Meta's parameter formats: POSITIONAL ({{1}}, the default) or NAMED ({{first_name}}), whose
   * examples are `body_text_named_params` / `header_text_named_params`, one {param_name, example}
   * per placeholder.
   */
  #parameterFormatProblem(body: any, refuse: (message: string, subcode?: number) => GraphAnswer) {
    const format = body.parameter_format ?? 'POSITIONAL';
    if (!['POSITIONAL', 'NAMED'].includes(format)) {
      return refuse('parameter_format must be POSITIONAL or NAMED', 2388040);
    }
    for (const component of body.components) {
      if (component.type !== 'BODY' && !(component.type === 'HEADER' && component.format === 'TEXT'))
        continue;
      if (format === 'POSITIONAL') {
        if (hasNamed(component.text)) {
          return refuse('Named variables such as {{name}} need parameter_format NAMED', 2388040);
        }
        continue;
      }
      if (hasNumbered(component.text)) {
        return refuse('A template with parameter_format NAMED cannot use numbered variables', 2388040);
      }
      const key = component.type === 'BODY' ? 'body_text_named_params' : 'header_text_named_params';
      const wanted = names(component.text);
      const examples = component.example?.[key];
      if (wanted.length === 0) continue;
      const given = Array.isArray(examples) ? examples.map((e: any) => e?.param_name) : [];
      const complete =
        given.length === wanted.length &&
        wanted.every((n) => given.includes(n)) &&
        examples.every((e: any) => typeof e?.example === 'string' && e.example.length > 0);
      if (!complete) {
        return refuse(`Message template "components" param is missing expected field(s) (${key})`, 2388043);
      }
    }
    return null;
  }

  #createTemplate(business: FakeBusiness, body: any): GraphAnswer {
    const problem = this.#templateProblem(body);
    if (problem) return problem;
    const refuse = (userMessage: string, subcode = 2388001) =>
      graphError(100, { message: 'Invalid parameter', subcode, userMessage });
    const duplicate = [...this.templates.values()].some(
      (t) =>
        t.businessAccountId === business.businessAccountId &&
        t.name === body.name &&
        t.language === body.language,
    );
    if (duplicate) return refuse('Content in this language already exists', 2388024);
    const stored = this.addTemplate(business, body as any, this.autoApprove ? 'APPROVED' : 'PENDING');
    return { status: 200, body: { id: stored.id, status: stored.status, category: stored.category } };
  }

  /**
   * POST /{template-id}: Meta's edit of an approved, rejected or paused template (name and language
   * stay; the category may change only when it is not approved). The edit goes back to review.
   */
  #editTemplate(template: FakeTemplate, body: any): GraphAnswer {
    if (!['APPROVED', 'REJECTED', 'PAUSED'].includes(template.status)) {
      return graphError(100, {
        message: 'Invalid parameter',
        subcode: 2388025,
        userMessage: `A template that is ${template.status} cannot be edited`,
      });
    }
    if (template.status === 'APPROVED' && body?.category && body.category !== template.category) {
      return graphError(100, {
        message: 'Invalid parameter',
        subcode: 2388025,
        userMessage: 'The category of an approved template cannot be changed',
      });
    }
    const edited = {
      name: template.name,
      language: template.language,
      category: body?.category ?? template.category,
      components: body?.components,
      parameter_format: body?.parameter_format ?? template.parameterFormat,
    };
    const problem = this.#templateProblem(edited);
    if (problem) return problem;
    template.category = edited.category;
    template.components = structuredClone(edited.components);
    template.parameterFormat = edited.parameter_format === 'NAMED' ? 'NAMED' : 'POSITIONAL';
    template.status = this.autoApprove ? 'APPROVED' : 'PENDING';
    template.reason = null;
    return { status: 200, body: { success: true } };
  }

  // ---- Callbacks to Tidings, as Meta sends them ----

  /** POSTs a payload to a callback URL signed with the business's app secret (or not, on request). */
  async postCallback(
    callbackUrl: string,
    business: FakeBusiness,
    payload: unknown,
    options: CallbackOptions = {},
  ): Promise<CallbackResult> {
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'facebookexternalua',
    };
    const signature = options.signature ?? 'valid';
    if (signature !== 'missing') {
      const secret = signature === 'valid' ? business.appSecret : randomBytes(16).toString('hex');
      headers['x-hub-signature-256'] = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    }
    const res = await request(callbackUrl, { method: 'POST', headers, body });
    return { status: res.statusCode, body: await res.body.text() };
  }

  #envelope(business: FakeBusiness, field: string, value: unknown) {
    return {
      object: 'whatsapp_business_account',
      entry: [{ id: business.businessAccountId, changes: [{ value, field }] }],
    };
  }

  #metadata(business: FakeBusiness) {
    return {
      display_phone_number: business.displayPhoneNumber.replace(/\D/g, ''),
      phone_number_id: business.phoneNumberId,
    };
  }

  /**
   * `smb_message_echoes`: messages the business sent from the WhatsApp Business app of a
   * coexistence number (Meta's shape: from the business, to the customer, its own wamid).
   */
  echoPayload(
    business: FakeBusiness,
    echoes: {
      to: string;
      text?: string;
      id?: string;
      timestamp?: number;
      message?: Record<string, unknown>;
    }[],
  ) {
    return this.#envelope(business, 'smb_message_echoes', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      message_echoes: echoes.map((e) => ({
        from: business.displayPhoneNumber.replace(/\D/g, ''),
        to: e.to.replace(/\D/g, ''),
        id: e.id ?? newWamid(),
        timestamp: String(e.timestamp ?? Math.floor(Date.now() / 1000)),
        ...(e.message ?? { type: 'text', text: { body: e.text ?? 'Sent from the app' } }),
      })),
    });
  }

  /**
   * `history`: one chunk of a coexistence number's chat history, as Meta shares it after the
   * history sync (threads by customer number; `fromBusiness` messages were sent from the app).
   */
  historyPayload(
    business: FakeBusiness,
    chunk: {
      phase: number;
      chunkOrder: number;
      progress: number;
      threads: {
        customer: string;
        messages: {
          fromBusiness?: boolean;
          text?: string;
          timestamp: number;
          status?: string;
          id?: string;
          type?: string;
        }[];
      }[];
    },
  ) {
    const own = business.displayPhoneNumber.replace(/\D/g, '');
    return this.#envelope(business, 'history', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      history: [
        {
          metadata: { phase: chunk.phase, chunk_order: chunk.chunkOrder, progress: chunk.progress },
          threads: chunk.threads.map((t) => ({
            id: t.customer.replace(/\D/g, ''),
            messages: t.messages.map((m) => ({
              from: m.fromBusiness ? own : t.customer.replace(/\D/g, ''),
              ...(m.fromBusiness ? { to: t.customer.replace(/\D/g, '') } : {}),
              id: m.id ?? newWamid(),
              timestamp: String(m.timestamp),
              ...(m.type === 'media_placeholder'
                ? { type: 'media_placeholder' }
                : { type: 'text', text: { body: m.text ?? 'hello' } }),
              history_context: { status: m.status ?? (m.fromBusiness ? 'READ' : 'DELIVERED') },
            })),
          })),
        },
      ],
    });
  }

  /** `history` when the business declined to share it (Meta's error 2593109). */
  historyDeclinedPayload(business: FakeBusiness) {
    return this.#envelope(business, 'history', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      history: [
        {
          errors: [
            {
              code: 2593109,
              title: 'History sync is turned off by the business from the WhatsApp Business App',
              message: 'History sync is turned off by the business from the WhatsApp Business App',
              error_data: { details: 'History sharing is turned off by the business' },
            },
          ],
        },
      ],
    });
  }

  /** `smb_app_state_sync`: contacts of the Business app's address book added, edited or removed. */
  appContactsPayload(
    business: FakeBusiness,
    contacts: { phone: string; fullName?: string; action?: 'add' | 'remove' }[],
  ) {
    return this.#envelope(business, 'smb_app_state_sync', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      state_sync: contacts.map((c) => ({
        type: 'contact',
        contact: {
          ...(c.action === 'remove' || !c.fullName
            ? {}
            : { full_name: c.fullName, first_name: c.fullName.split(' ')[0] }),
          phone_number: c.phone.replace(/\D/g, ''),
        },
        action: c.action ?? 'add',
        metadata: { timestamp: String(Math.floor(Date.now() / 1000)) },
      })),
    });
  }

  /** The `statuses` webhook for a message the business sent. */
  statusPayload(
    business: FakeBusiness,
    update: {
      wamid: string;
      status: 'sent' | 'delivered' | 'read' | 'failed' | 'played';
      /** The recipient's number (wa_id); left out for a message sent to a user id whose number Meta withholds. */
      recipientId?: string;
      /** The recipient's business-scoped user id (recipient_user_id), and their username (contacts[]). */
      recipientUserId?: string;
      username?: string;
      /** Unix seconds; now by default. */
      timestamp?: number;
      /** What the send carried in biz_opaque_callback_data: Meta echoes it in each status. */
      bizOpaqueCallbackData?: string;
      errors?: { code: number; title: string; message?: string; details?: string }[];
    },
  ) {
    const timestamp = update.timestamp ?? Math.floor(Date.now() / 1000);
    const status: Record<string, unknown> = {
      id: update.wamid,
      status: update.status,
      timestamp: String(timestamp),
      ...(update.recipientId !== undefined && { recipient_id: update.recipientId.replace(/\D/g, '') }),
      ...(update.recipientUserId !== undefined && { recipient_user_id: update.recipientUserId }),
    };
    if (update.bizOpaqueCallbackData !== undefined)
      status.biz_opaque_callback_data = update.bizOpaqueCallbackData;
    if (update.status === 'failed') {
      const errors = update.errors ?? [{ code: 131026, title: 'Message undeliverable' }];
      status.errors = errors.map((e) => ({
        code: e.code,
        title: e.title,
        message: e.message ?? e.title,
        error_data: { details: e.details ?? e.title },
        href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
      }));
    } else if (update.status !== 'played') {
      // One conversation per business and customer, as Meta counts them: a repeated status repeats it.
      const conversation: Record<string, unknown> = {
        id: createHash('md5')
          .update(`${business.phoneNumberId}/${status.recipient_id ?? status.recipient_user_id}`)
          .digest('hex'),
        origin: { type: 'utility' },
      };
      if (update.status === 'sent') conversation.expiration_timestamp = String(timestamp + 86_400);
      status.conversation = conversation;
      status.pricing = { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' };
    }
    // Since April 2026 a status (but a failed one) has a contacts[] entry for its recipient, with the
    // username on delivered and read (Meta's BSUID page, "Status messages webhooks").
    const contact =
      update.recipientUserId !== undefined && update.status !== 'failed' && update.status !== 'played'
        ? {
            profile: {
              name: 'Test Customer',
              ...(update.username !== undefined && update.status !== 'sent' && { username: update.username }),
            },
            ...(status.recipient_id !== undefined && { wa_id: status.recipient_id }),
            user_id: update.recipientUserId,
          }
        : null;
    return this.#envelope(business, 'messages', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      ...(contact && { contacts: [contact] }),
      statuses: [status],
    });
  }

  postStatus(
    callbackUrl: string,
    business: FakeBusiness,
    update: Parameters<FakeWhatsAppCloud['statusPayload']>[1],
    options?: CallbackOptions,
  ): Promise<CallbackResult> {
    return this.postCallback(callbackUrl, business, this.statusPayload(business, update), options);
  }

  // ---- Account signals: webhooks about the business, not about one message ----

  /** `user_preferences`: the customer (by wa_id) stops or resumes marketing messages. */
  userPreferencesPayload(
    business: FakeBusiness,
    update: { waId: string; value: 'stop' | 'resume'; timestamp?: number; name?: string },
  ) {
    const timestamp = update.timestamp ?? Math.floor(Date.now() / 1000);
    return this.#envelope(business, 'user_preferences', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      contacts: [{ profile: { name: update.name ?? 'Customer' }, wa_id: update.waId }],
      user_preferences: [
        {
          wa_id: update.waId,
          detail:
            update.value === 'stop'
              ? 'User requested to stop marketing messages'
              : 'User requested to resume marketing messages',
          category: 'marketing_messages',
          value: update.value,
          timestamp,
        },
      ],
    });
  }

  /** `phone_number_quality_update`: names the number by its display number only, with the WABA. */
  qualityUpdatePayload(
    business: FakeBusiness,
    update: { event: string; currentLimit?: string; oldLimit?: string; time?: number },
  ) {
    const value: Record<string, unknown> = {
      display_phone_number: business.displayPhoneNumber.replace(/\D/g, ''),
      event: update.event,
      current_limit: update.currentLimit ?? business.messagingLimitTier ?? 'TIER_1K',
      max_daily_conversations_per_business: update.currentLimit ?? business.messagingLimitTier ?? 'TIER_1K',
    };
    if (update.oldLimit) value.old_limit = update.oldLimit;
    const envelope = this.#envelope(business, 'phone_number_quality_update', value);
    (envelope.entry[0] as Record<string, unknown>).time = update.time ?? Math.floor(Date.now() / 1000);
    return envelope;
  }

  /** `account_update`: an event about the business account, with Meta's details. */
  accountUpdatePayload(
    business: FakeBusiness,
    update: { event: string; details?: Record<string, unknown>; time?: number },
  ) {
    const envelope = this.#envelope(business, 'account_update', {
      phone_number: business.displayPhoneNumber.replace(/\D/g, ''),
      event: update.event,
      ...(update.details ?? {}),
    });
    (envelope.entry[0] as Record<string, unknown>).time = update.time ?? Math.floor(Date.now() / 1000);
    return envelope;
  }

  /** `errors`: errors about the number or the app, outside any one message. */
  errorsPayload(
    business: FakeBusiness,
    error: { code: number; title: string; message?: string; details?: string; time?: number },
  ) {
    const envelope = this.#envelope(business, 'errors', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      errors: [
        {
          code: error.code,
          title: error.title,
          message: error.message ?? error.title,
          error_data: { details: error.details ?? error.title },
          href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
        },
      ],
    });
    (envelope.entry[0] as Record<string, unknown>).time = error.time ?? Math.floor(Date.now() / 1000);
    return envelope;
  }

  /**
   * The `message_template_status_update` webhook, as raw JSON text: Meta sends the template id as a
   * bare number, which JSON.stringify of a string id would not.
   */
  templateStatusPayload(
    business: FakeBusiness,
    update: { templateId: string; name: string; language: string; event: string; reason?: string | null },
  ): string {
    const envelope = this.#envelope(business, 'message_template_status_update', {
      event: update.event,
      message_template_id: update.templateId,
      message_template_name: update.name,
      message_template_language: update.language,
      reason: update.reason ?? 'NONE',
    });
    (envelope.entry[0] as Record<string, unknown>).time = Math.floor(Date.now() / 1000);
    return JSON.stringify(envelope).replace(
      `"message_template_id":${JSON.stringify(update.templateId)}`,
      `"message_template_id":${update.templateId}`,
    );
  }

  /** Sends the template webhook, and keeps the fake's own template in step with what it said. */
  postTemplateStatus(
    callbackUrl: string,
    business: FakeBusiness,
    update: Parameters<FakeWhatsAppCloud['templateStatusPayload']>[1],
    options?: CallbackOptions,
  ): Promise<CallbackResult> {
    const template = this.templates.get(update.templateId);
    const becomes: Record<string, FakeTemplateStatus> = {
      APPROVED: 'APPROVED',
      REINSTATED: 'APPROVED',
      REJECTED: 'REJECTED',
      PAUSED: 'PAUSED',
      DISABLED: 'DISABLED',
    };
    const status = becomes[update.event];
    if (template && status) this.setTemplateStatus(template.id, status, update.reason ?? null);
    return this.postCallback(callbackUrl, business, this.templateStatusPayload(business, update), options);
  }

  /** A template webhook's envelope as raw JSON, with the template id as Meta sends it: a bare number. */
  #templateWebhook(business: FakeBusiness, field: string, value: Record<string, unknown>): string {
    const envelope = this.#envelope(business, field, value);
    (envelope.entry[0] as Record<string, unknown>).time = Math.floor(Date.now() / 1000);
    const id = String(value.message_template_id);
    return JSON.stringify(envelope).replace(
      `"message_template_id":${JSON.stringify(id)}`,
      `"message_template_id":${id}`,
    );
  }

  /**
   * Meta rates a template's quality (the fake's own template takes the score) and sends
   * `message_template_quality_update`: {previous_quality_score, new_quality_score,
   * message_template_id, message_template_name, message_template_language}.
   */
  postTemplateQuality(
    callbackUrl: string,
    business: FakeBusiness,
    templateId: string,
    score: FakeTemplate['qualityScore'],
  ): Promise<CallbackResult> {
    const template = this.templates.get(templateId);
    if (!template) throw new Error(`the fake has no template ${templateId}`);
    const previous = template.qualityScore;
    template.qualityScore = score;
    template.qualityDate = Math.floor(Date.now() / 1000);
    const payload = this.#templateWebhook(business, 'message_template_quality_update', {
      previous_quality_score: previous,
      new_quality_score: score,
      message_template_id: template.id,
      message_template_name: template.name,
      message_template_language: template.language,
    });
    return this.postCallback(callbackUrl, business, payload);
  }

  /**
   * Meta recategorises a template and sends `template_category_update`: a change made
   * ({previous_category, new_category}; the fake's own template takes it), or with `announce` one
   * to be made in 24 hours ({correct_category, new_category: the current one,
   * category_update_timestamp}; nothing changes yet).
   */
  postTemplateCategory(
    callbackUrl: string,
    business: FakeBusiness,
    templateId: string,
    category: string,
    options: { announce?: boolean } = {},
  ): Promise<CallbackResult> {
    const template = this.templates.get(templateId);
    if (!template) throw new Error(`the fake has no template ${templateId}`);
    const named = {
      message_template_id: template.id,
      message_template_name: template.name,
      message_template_language: template.language,
    };
    let value: Record<string, unknown>;
    if (options.announce) {
      value = {
        ...named,
        correct_category: category,
        new_category: template.category,
        category_update_timestamp: Math.floor(Date.now() / 1000) + 86_400,
      };
    } else {
      value = { ...named, previous_category: template.category, new_category: category };
      template.category = category;
    }
    return this.postCallback(
      callbackUrl,
      business,
      this.#templateWebhook(business, 'template_category_update', value),
    );
  }

  /**
   * The `messages` webhook for a customer's message to the business: a text unless `message` (e.g.
   * one of `inboundMessages`) gives its type; `context` makes it a reply to (or a button tap on) a
   * message the business sent, as Meta marks those.
   */
  inboundPayload(
    business: FakeBusiness,
    inbound: {
      /** The customer's number; left out for a customer with a username who withholds it. */
      from?: string;
      /** Their business-scoped user id (from_user_id), and username. */
      userId?: string;
      username?: string;
      name?: string;
      text?: string;
      message?: Record<string, unknown>;
      timestamp?: number;
      context?: { id: string };
    },
  ) {
    const from = inbound.from?.replace(/\D/g, '');
    const wamid = newWamid();
    this.#inboundWamids.set(wamid, business.phoneNumberId);
    const message: Record<string, unknown> = {
      ...(inbound.context && {
        context: { from: this.#metadata(business).display_phone_number, id: inbound.context.id },
      }),
      ...(from !== undefined && { from }),
      ...(inbound.userId !== undefined && { from_user_id: inbound.userId }),
      id: wamid,
      timestamp: String(inbound.timestamp ?? Math.floor(Date.now() / 1000)),
      // Meta sends only the content of the message's own type: no `text` beside an `image`.
      ...(inbound.message?.type === undefined && { type: 'text', text: { body: inbound.text ?? 'Hello' } }),
      ...inbound.message,
    };
    return this.#envelope(business, 'messages', {
      messaging_product: 'whatsapp',
      metadata: this.#metadata(business),
      contacts: [
        {
          profile: {
            name: inbound.name ?? 'Test Customer',
            ...(inbound.username !== undefined && { username: inbound.username }),
          },
          ...(from !== undefined && { wa_id: from }),
          ...(inbound.userId !== undefined && { user_id: inbound.userId }),
        },
      ],
      messages: [message],
    });
  }

  postInbound(
    callbackUrl: string,
    business: FakeBusiness,
    inbound: Parameters<FakeWhatsAppCloud['inboundPayload']>[1],
    options?: CallbackOptions,
  ): Promise<CallbackResult> {
    return this.postCallback(callbackUrl, business, this.inboundPayload(business, inbound), options);
  }

  /** Meta's GET verification request for a callback URL. */
  async handshake(
    callbackUrl: string,
    params: { verifyToken: string; challenge: string; mode?: string },
  ): Promise<{ status: number; text: string }> {
    const url = new URL(callbackUrl);
    url.searchParams.set('hub.mode', params.mode ?? 'subscribe');
    url.searchParams.set('hub.verify_token', params.verifyToken);
    url.searchParams.set('hub.challenge', params.challenge);
    const res = await request(url, { method: 'GET', headers: { 'user-agent': 'facebookplatform/1.0' } });
    return { status: res.statusCode, text: await res.body.text() };
  }
}

/** Drops the keys left undefined: Meta leaves absent fields out rather than sending null. */
function present<T extends Record<string, unknown>>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as T;
}

/** Where the fake serves the files GET /{media-id} names (Meta's are on lookaside.fbsbx.com). */
const DOWNLOAD_PATH = '/whatsapp_business/attachments/';

/** The parts of a multipart/form-data body. */
function parseMultipart(body: Buffer, boundary: string) {
  const parts: { name: string; filename: string | null; contentType: string | null; data: Buffer }[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(head)?.[1] ?? null;
    const contentType = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim() ?? null;
    parts.push({ name, filename, contentType, data: Buffer.from(part.subarray(split + 4)) });
    at = next;
  }
  return parts;
}

/** Meta's media ids are numeric strings; its sha256 is the file's hash in base64. */
const newMediaId = () => digits(16);
const newSha256 = () => randomBytes(32).toString('base64');

interface MediaOptions {
  id?: string;
  mimeType?: string;
  sha256?: string;
  /** The media's download URL, which newer webhook versions include. */
  url?: string;
}

/**
 * A customer's message of each type, as the `message` of `inboundPayload`: `type` and the object
 * named after it, shaped as Meta's webhook reference for `messages` documents them.
 */
export const inboundMessages = {
  text: (options: { body?: string } = {}) => ({ type: 'text', text: { body: options.body ?? 'Hello' } }),

  image: (options: MediaOptions & { caption?: string } = {}) => ({
    type: 'image',
    image: present({
      caption: options.caption,
      mime_type: options.mimeType ?? 'image/jpeg',
      sha256: options.sha256 ?? newSha256(),
      id: options.id ?? newMediaId(),
      url: options.url,
    }),
  }),

  video: (options: MediaOptions & { caption?: string } = {}) => ({
    type: 'video',
    video: present({
      caption: options.caption,
      mime_type: options.mimeType ?? 'video/mp4',
      sha256: options.sha256 ?? newSha256(),
      id: options.id ?? newMediaId(),
      url: options.url,
    }),
  }),

  /** A voice note (`voice: true`, recorded in WhatsApp as Ogg/Opus) or an audio file. */
  audio: (options: MediaOptions & { voice?: boolean } = {}) => ({
    type: 'audio',
    audio: present({
      mime_type: options.mimeType ?? (options.voice ? 'audio/ogg; codecs=opus' : 'audio/mpeg'),
      sha256: options.sha256 ?? newSha256(),
      id: options.id ?? newMediaId(),
      url: options.url,
      voice: options.voice ?? false,
    }),
  }),

  document: (options: MediaOptions & { caption?: string; filename?: string } = {}) => ({
    type: 'document',
    document: present({
      caption: options.caption,
      filename: options.filename ?? 'invoice.pdf',
      mime_type: options.mimeType ?? 'application/pdf',
      sha256: options.sha256 ?? newSha256(),
      id: options.id ?? newMediaId(),
      url: options.url,
    }),
  }),

  sticker: (options: MediaOptions & { animated?: boolean } = {}) => ({
    type: 'sticker',
    sticker: present({
      mime_type: options.mimeType ?? 'image/webp',
      sha256: options.sha256 ?? newSha256(),
      id: options.id ?? newMediaId(),
      url: options.url,
      animated: options.animated ?? false,
    }),
  }),

  /** A tap on a reply button of an interactive message (Meta adds `context`: pass it to inboundPayload). */
  buttonReply: (options: { id?: string; title?: string } = {}) => ({
    type: 'interactive',
    interactive: {
      type: 'button_reply',
      button_reply: { id: options.id ?? 'cancel-button', title: options.title ?? 'Cancel' },
    },
  }),

  /** A row chosen from an interactive list message. */
  listReply: (options: { id?: string; title?: string; description?: string } = {}) => ({
    type: 'interactive',
    interactive: {
      type: 'list_reply',
      list_reply: present({
        id: options.id ?? 'priority_express',
        title: options.title ?? 'Priority Mail Express',
        description: options.description,
      }),
    },
  }),

  /** A tap on a template's quick-reply button: `payload` is the one the send set, else the label. */
  templateButton: (options: { text?: string; payload?: string } = {}) => ({
    type: 'button',
    button: {
      payload: options.payload ?? options.text ?? 'Unsubscribe',
      text: options.text ?? 'Unsubscribe',
    },
  }),

  /** An emoji on the business's message `messageId` (a wamid); `emoji: null` takes the reaction back. */
  reaction: (options: { messageId: string; emoji?: string | null }) => ({
    type: 'reaction',
    reaction: present({
      message_id: options.messageId,
      emoji: options.emoji === null ? undefined : (options.emoji ?? '\u{1F44D}'),
    }),
  }),

  /** A named place by default; `null` leaves a field out (a dropped pin has coordinates only). */
  location: (
    options: {
      latitude?: number;
      longitude?: number;
      name?: string | null;
      address?: string | null;
      url?: string | null;
    } = {},
  ) => {
    const field = <T>(value: T | null | undefined, fallback: T) =>
      value === null ? undefined : (value ?? fallback);
    return {
      type: 'location',
      location: present({
        address: field(options.address, '101 Forest Ave, Palo Alto, CA 94301'),
        latitude: options.latitude ?? 37.44216251868683,
        longitude: options.longitude ?? -122.16153582049394,
        name: field(options.name, 'Philz Coffee'),
        url: field(options.url, 'https://philzcoffee.com/'),
      }),
    };
  },

  /** One contact card as a phone shares it: name, two numbers (one on WhatsApp), an email, the employer. */
  contacts: (options: { formattedName?: string } = {}) => ({
    type: 'contacts',
    contacts: [
      {
        name: {
          formatted_name: options.formattedName ?? 'Barbara J. Johnson',
          first_name: 'Barbara',
          last_name: 'Johnson',
          middle_name: 'Joana',
        },
        phones: [
          { phone: '+1 (940) 555-1234', wa_id: '19405551234', type: 'CELL' },
          { phone: '+1 (650) 555-1234', type: 'WORK' },
        ],
        emails: [{ email: 'bjohnson@luckyshrub.com', type: 'WORK' }],
        org: { company: 'Lucky Shrub', department: 'Legal', title: 'Lead Counsel' },
      },
    ],
  }),

  /** A message Cloud API cannot pass on (a poll, say): Meta says only that, with error 131051. */
  unsupported: (options: { unsupportedType?: string } = {}) => ({
    type: 'unsupported',
    errors: [
      {
        code: 131051,
        title: 'Message type unknown',
        message: 'Message type unknown',
        error_data: { details: 'Message type is currently not supported.' },
      },
    ],
    unsupported: { type: options.unsupportedType ?? 'poll_creation' },
  }),

  /** An order placed from the business's catalog (a type Tidings does not model). */
  order: (options: { catalogId?: string; text?: string } = {}) => ({
    type: 'order',
    order: {
      catalog_id: options.catalogId ?? '194836987003835',
      text: options.text ?? 'Love these!',
      product_items: [{ product_retailer_id: 'di9ozbzfi4', quantity: 2, item_price: 7.99, currency: 'USD' }],
    },
  }),
};

function checkInteractive(interactive: Record<string, any>): GraphAnswer | null {
  const invalid = (details: string) => graphError(131009, { details });
  const missing = (details: string) => graphError(131008, { details });
  const kind = interactive.type;
  if (!['button', 'list', 'cta_url', 'location_request_message', 'request_contact_info'].includes(kind))
    return invalid(`interactive.type ${JSON.stringify(kind)} is not supported`);
  if (typeof interactive.body?.text !== 'string' || !interactive.body.text)
    return missing("Parameter 'interactive.body.text' is required");
  if (chars(interactive.body.text) > 1024)
    return invalid('interactive.body.text is longer than 1024 characters');
  if (interactive.header !== undefined) {
    if (kind === 'list' && interactive.header.type !== 'text')
      return invalid('a list message header must be of type text');
    if (
      interactive.header.type === 'text' &&
      (typeof interactive.header.text !== 'string' || chars(interactive.header.text) > 60)
    ) {
      return invalid('interactive.header.text must be at most 60 characters');
    }
  }
  if (
    interactive.footer !== undefined &&
    (typeof interactive.footer.text !== 'string' || chars(interactive.footer.text) > 60)
  ) {
    return invalid('interactive.footer.text must be at most 60 characters');
  }
  const action = interactive.action;
  if (!isRecord(action)) return missing("Parameter 'interactive.action' is required");
  if (kind === 'cta_url' || kind === 'location_request_message' || kind === 'request_contact_info')
    return checkActionKinds(kind, interactive);
  if (kind === 'button') {
    const buttons = action.buttons;
    if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3)
      return invalid('a button message has 1 to 3 buttons');
    const ids = new Set<string>();
    const titles = new Set<string>();
    for (const b of buttons) {
      if (b?.type !== 'reply' || typeof b.reply?.id !== 'string' || typeof b.reply?.title !== 'string') {
        return invalid('each button is {type:"reply", reply:{id, title}}');
      }
      if (chars(b.reply.id) > 256 || chars(b.reply.title) > 20)
        return invalid('button id ≤ 256, title ≤ 20 characters');
      if (ids.has(b.reply.id) || titles.has(b.reply.title))
        return invalid('button ids and titles must be unique');
      ids.add(b.reply.id);
      titles.add(b.reply.title);
    }
    return null;
  }
  if (kind === 'list') {
    if (typeof action.button !== 'string' || !action.button || chars(action.button) > 20) {
      return invalid('action.button is required, at most 20 characters');
    }
    const sections = action.sections;
    if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10)
      return invalid('a list has 1 to 10 sections');
    let rows = 0;
    const ids = new Set<string>();
    for (const section of sections) {
      if (sections.length > 1 && (typeof section?.title !== 'string' || !section.title)) {
        return invalid('every section needs a title when there is more than one');
      }
      if (section?.title !== undefined && chars(String(section.title)) > 24)
        return invalid('section title ≤ 24 characters');
      if (!Array.isArray(section?.rows) || section.rows.length === 0)
        return invalid('every section needs rows');
      for (const row of section.rows) {
        rows++;
        if (typeof row?.id !== 'string' || typeof row?.title !== 'string')
          return invalid('each row is {id, title}');
        if (chars(row.id) > 200 || chars(row.title) > 24)
          return invalid('row id ≤ 200, title ≤ 24 characters');
        if (
          row.description !== undefined &&
          (typeof row.description !== 'string' || chars(row.description) > 72)
        ) {
          return invalid('row description ≤ 72 characters');
        }
        if (ids.has(row.id)) return invalid('row ids must be unique');
        ids.add(row.id);
      }
    }
    if (rows > 10) return invalid('a list has at most 10 rows in all');
  }
  return null;
}

// The kinds Meta documents in its own pages (reaction, location, contacts, CTA URL and location
// request messages), checked as its reference states them.

function checkPlainKind(type: 'reaction' | 'location', object: Record<string, any>): GraphAnswer | null {
  const invalid = (details: string) => graphError(131009, { details });
  const missing = (details: string) => graphError(131008, { details });
  if (type === 'reaction') {
    if (typeof object.message_id !== 'string' || !object.message_id)
      return missing("Parameter 'reaction.message_id' is required");
    if (typeof object.emoji !== 'string') return missing("Parameter 'reaction.emoji' is required");
    if ([...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(object.emoji)].length > 1)
      return invalid('reaction.emoji must be a single emoji');
    return null;
  }
  for (const [field, limit] of [
    ['latitude', 90],
    ['longitude', 180],
  ] as const) {
    const value = object[field];
    if (value === undefined) return missing(`Parameter 'location.${field}' is required`);
    const n = typeof value === 'string' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n) || Math.abs(n) > limit)
      return invalid(`location.${field} must be a number between -${limit} and ${limit}`);
  }
  for (const field of ['name', 'address']) {
    if (object[field] !== undefined && typeof object[field] !== 'string')
      return invalid(`location.${field} must be a string`);
  }
  return null;
}

function checkContacts(contacts: unknown): GraphAnswer | null {
  const invalid = (details: string) => graphError(131009, { details });
  if (!Array.isArray(contacts) || contacts.length === 0)
    return graphError(131008, { details: "Parameter 'contacts' is required for messages of type contacts" });
  if (contacts.length > 257) return invalid('a contacts message holds at most 257 contacts');
  for (const [i, card] of contacts.entries()) {
    if (
      !isRecord(card) ||
      !isRecord(card.name) ||
      typeof card.name.formatted_name !== 'string' ||
      !card.name.formatted_name
    )
      return graphError(131008, { details: `Parameter 'contacts[${i}].name.formatted_name' is required` });
    if (card.birthday !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(String(card.birthday)))
      return invalid(`contacts[${i}].birthday must be YYYY-MM-DD`);
    for (const list of ['phones', 'emails', 'urls', 'addresses']) {
      if (card[list] !== undefined && !Array.isArray(card[list]))
        return invalid(`contacts[${i}].${list} must be an array`);
    }
    if (card.org !== undefined && !isRecord(card.org)) return invalid(`contacts[${i}].org must be an object`);
  }
  return null;
}

function checkActionKinds(
  kind: 'cta_url' | 'location_request_message' | 'request_contact_info',
  interactive: Record<string, any>,
) {
  const invalid = (details: string) => graphError(131009, { details });
  const action = interactive.action as Record<string, any>;
  // Meta's BSUID page, "Requesting contact information" (the type was contact_request until May 28, 2026).
  if (kind === 'request_contact_info') {
    if (action.name !== 'request_contact_info') return invalid("action.name must be 'request_contact_info'");
    if (interactive.header !== undefined || interactive.footer !== undefined)
      return invalid('a contact information request has only a body');
    return null;
  }
  if (kind === 'location_request_message') {
    if (action.name !== 'send_location') return invalid("action.name must be 'send_location'");
    if (interactive.header !== undefined || interactive.footer !== undefined)
      return invalid('a location request message has only a body');
    return null;
  }
  if (action.name !== 'cta_url') return invalid("action.name must be 'cta_url'");
  const p = action.parameters;
  if (!isRecord(p) || typeof p.display_text !== 'string' || !p.display_text || typeof p.url !== 'string')
    return graphError(131008, {
      details: "Parameters 'action.parameters.display_text' and 'url' are required",
    });
  if (chars(p.display_text) > 20) return invalid('display_text must be at most 20 characters');
  if (!isHttpUrl(p.url)) return invalid('action.parameters.url must be a URL');
  return null;
}
