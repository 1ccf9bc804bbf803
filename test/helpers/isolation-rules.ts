// The rules of the tenant isolation matrix as data: which callers try which operations of the
// OpenAPI document, and what each must get (docs/errors.md; docs/decisions.md § Keys, § Partners and accounts). The matrix is
// generated from the document, so a new route is tried by every caller without an edit here; only
// the documented exceptions are listed by hand, each with the line that justifies it.
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { operationsOf as documentOperations, type OpenApiDocument } from './openapi-operations.ts';
import type { World } from './world.ts';

export interface Operation {
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** The path template without the /api/v1/public prefix. */
  path: string;
  /** Who may call it: an account's key (or a partner key naming the account), or a partner key. */
  access: 'account' | 'partner';
  params: string[];
  hasBody: boolean;
  /** The documented success status (the one 2xx response). */
  success: number;
  /** The documented responses: status → the error codes its description names. */
  responses: Record<string, string[]>;
  /** A console agent may call it (routes marked `agents`: the inbox). */
  agents: boolean;
}

export const PREFIX = '/api/v1/public';

/** Operations with a path parameter that no API key reaches, and why the matrix leaves them out. */
export const NOT_KEYED: Record<string, string> = {
  // docs/messaging.md § Provider callbacks: not under `public`, authenticated by the provider's signature.
  verifyWhatsAppCallback: 'provider callback, authenticated by Meta, not by an API key',
  receiveWhatsAppCallback: 'provider callback, authenticated by Meta, not by an API key',
  verifyWhatsAppAppCallback: 'provider callback, authenticated by Meta, not by an API key',
  receiveWhatsAppAppCallback: 'provider callback, authenticated by Meta, not by an API key',
  receiveTwilioVoiceStatus: 'provider callback, authenticated by Twilio, not by an API key',
  answerTwilioVoiceCall: 'provider callback, authenticated by Twilio, not by an API key',
  receiveTwilioVoiceGather: 'provider callback, authenticated by Twilio, not by an API key',
  fetchTwilioVoiceNode: 'provider callback, authenticated by Twilio, not by an API key',
};

/** The success the body in BODIES gets, for an operation that has several. */
const SUCCESS_OF_BODY: Record<string, string> = { createEnrollment: '201' };

/** Every operation of the document an API key can call (bootstrap, probes and callbacks aside). */
export function operationsOf(doc: OpenApiDocument): {
  keyed: Operation[];
  unkeyed: { operationId: string; path: string; params: string[] }[];
} {
  const keyed: Operation[] = [];
  const unkeyed: { operationId: string; path: string; params: string[] }[] = [];
  for (const op of documentOperations(doc)) {
    const params = op.pathParams.map((p) => p.name);
    if (op.access !== 'account' && op.access !== 'partner') {
      unkeyed.push({ operationId: op.operationId, path: op.path, params });
      continue;
    }
    // One success, or the one its body in BODIES gets where the body chooses (createEnrollment: 201
    // for one contact, 202 for many).
    const successes = Object.keys(op.responses).filter((s) => s.startsWith('2'));
    const chosen = SUCCESS_OF_BODY[op.operationId];
    if (successes.length !== 1 && !(chosen && successes.includes(chosen)))
      throw new Error(`${op.operationId}: expected one 2xx response, got ${successes}`);
    keyed.push({
      operationId: op.operationId,
      method: op.method as Operation['method'],
      path: op.path.slice(PREFIX.length),
      access: op.access,
      params,
      hasBody: op.body !== null,
      success: Number(chosen ?? successes[0]),
      responses: op.responses,
      agents: op.agents,
    });
  }
  return { keyed, unkeyed };
}

/** Whether the document lists this answer for the operation (its status, and its code if any). */
export function documents(op: Operation, status: number, code: string | undefined): boolean {
  const codes = op.responses[String(status)];
  return codes !== undefined && (!code || codes.includes(code));
}

/** The path template up to and including `{param}`: the key of the fixture that fills it. */
export function fixtureKey(path: string, param: string): string {
  const at = path.indexOf(`{${param}}`);
  return path.slice(0, at + param.length + 2);
}

export type Caller =
  | 'owner'
  | 'ownPartner'
  | 'sandbox'
  | 'otherTenant'
  | 'otherTenantNamingA'
  | 'unrelatedPartner'
  | 'revokedKey'
  | 'revokedPartnerKey'
  | 'expiredKey'
  | 'suspendedKey'
  | 'suspendedViaPartner'
  | 'closedKey'
  | 'closedViaPartner'
  // Console sessions (docs/console.md): A's agent, tenant B's account admin and agent, and the
  // partner admin of a partner of no relation to A.
  | 'agent'
  | 'otherTenantAdmin'
  | 'otherTenantAgent'
  | 'unrelatedPartnerAdmin';

/** The key (and X-Account-Id) each caller sends; account routes get A's account from partners. */
export function credentialsOf(
  world: World,
  caller: Caller,
  op: Operation,
): { key?: string; accountId?: string; cookie?: string; csrf?: string } {
  const namingA = op.access === 'account' ? world.accountId : undefined;
  switch (caller) {
    case 'owner':
      return op.access === 'account' ? { key: world.keys.live } : { key: world.partner.partnerKey };
    case 'ownPartner':
    case 'suspendedViaPartner':
    case 'closedViaPartner':
      return { key: world.partner.partnerKey, accountId: namingA };
    case 'sandbox':
      return { key: world.keys.sandbox };
    case 'otherTenant':
      return { key: world.keys.otherTenant };
    case 'otherTenantNamingA':
      return { key: world.keys.otherTenant, accountId: world.accountId };
    case 'unrelatedPartner':
      return { key: world.unrelatedPartner.partnerKey, accountId: namingA };
    case 'revokedKey':
      return { key: world.keys.revoked };
    case 'revokedPartnerKey':
      return { key: world.revokedPartnerKey, accountId: namingA };
    case 'expiredKey':
      return { key: world.keys.expired };
    case 'suspendedKey':
    case 'closedKey':
      return { key: world.keys.live };
    case 'agent':
    case 'otherTenantAdmin':
    case 'otherTenantAgent':
      return world.sessions[caller];
    case 'unrelatedPartnerAdmin':
      return { ...world.sessions.unrelatedPartnerAdmin, accountId: namingA };
  }
}

/** `success`: the operation's documented 2xx; otherwise the exact error. */
export type Expected = 'success' | { status: number; code: string };

const error = (status: number, code: string): Expected => ({ status, code });
// docs/errors.md, RESOURCE_NOT_FOUND: "Another account's ids are answered the same way".
const NOT_FOUND = error(404, 'RESOURCE_NOT_FOUND');
// docs/errors.md, FORBIDDEN: "The key may not do this: a standard key on a `/partner/*` endpoint, a
// sandbox key on a live-only action, or `X-Account-Id` naming an account the key does not belong to".
const FORBIDDEN = error(403, 'FORBIDDEN');
// docs/errors.md, INVALID_API_KEY: "missing, or the key is unknown, revoked or expired".
const INVALID_KEY = error(401, 'INVALID_API_KEY');
// docs/errors.md, ACCOUNT_SUSPENDED: "The account is `SUSPENDED` or `CLOSED`."
const SUSPENDED = error(403, 'ACCOUNT_SUSPENDED');

/**
 * The general rule: what `caller` gets from `op` with A's ids, or null where the caller has no case
 * (e.g. tenant B on a list of its own, or a sandbox key's writes, which act on A like A's own key).
 */
function generalRule(op: Operation, caller: Caller): Expected | null {
  const hasId = op.params.length > 0;
  const partnerRoute = op.access === 'partner';
  switch (caller) {
    case 'revokedKey':
    case 'revokedPartnerKey':
    case 'expiredKey':
      return INVALID_KEY;
    case 'owner':
      return hasId ? 'success' : null;
    case 'ownPartner':
      return !partnerRoute && hasId && op.method === 'GET' ? 'success' : null;
    case 'otherTenant':
      // A standard key on /partner/* is refused before any id is looked at.
      return hasId ? (partnerRoute ? FORBIDDEN : NOT_FOUND) : null;
    case 'otherTenantNamingA':
      // docs/decisions.md: "A standard key naming any account other than its own gets 403 FORBIDDEN".
      return partnerRoute ? null : FORBIDDEN;
    case 'unrelatedPartner':
      // docs/decisions.md: "A partner key naming another partner's account (or an unknown one) gets
      // 404: other tenants' ids are invisible" (docs/errors.md's RESOURCE_NOT_FOUND: "Another account's ids are answered the same way"; also for other
      // tenants' ids"); on /partner/* the other partner's ids are as invisible.
      return partnerRoute ? (hasId ? NOT_FOUND : null) : NOT_FOUND;
    case 'sandbox':
      // A sandbox key sees its account's data (there is no separate sandbox data set: only sends go
      // elsewhere, docs/decisions.md § Keys); its writes act like the live key's, so only reads.
      if (partnerRoute) return hasId ? FORBIDDEN : null;
      return hasId && op.method === 'GET' ? 'success' : null;
    case 'suspendedKey':
    case 'closedKey':
      if (partnerRoute) return hasId ? FORBIDDEN : null;
      return SUSPENDED;
    case 'suspendedViaPartner':
    case 'closedViaPartner':
      return partnerRoute ? null : SUSPENDED;
    // docs/console.md § Roles: an account admin's session acts as a live key of its account, a
    // partner admin's as a partner key, so they meet A's ids as those keys do.
    case 'otherTenantAdmin':
      return generalRule(op, 'otherTenant');
    case 'unrelatedPartnerAdmin':
      return generalRule(op, 'unrelatedPartner');
    // An agent may call the inbox's routes only: 403 on any other, whatever it names.
    case 'otherTenantAgent':
      if (!op.agents || partnerRoute) return FORBIDDEN;
      return hasId ? NOT_FOUND : null;
    case 'agent':
      if (!op.agents || partnerRoute) return FORBIDDEN;
      return hasId && op.method === 'GET' ? 'success' : null;
  }
}

export interface Exception {
  expected: Expected | null;
  /** Fixtures this row needs instead of the usual ones (a resource in a particular state). */
  ids?: (world: World) => Record<string, string>;
  why: string;
}

/** Documented departures from the general rule, by `operationId:caller`. */
export const EXCEPTIONS: Record<string, Exception> = {
  'putChannel:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; decisions.md: a sandbox key may not change the channel',
  },
  'putChannel:owner': { expected: 'success', why: 'the control of the row above' },
  'completeEmbeddedSignup:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; decisions.md: a sandbox key may not change the channel',
  },
  'completeEmbeddedSignup:owner': { expected: 'success', why: 'the control of the row above' },
  'updateChannelProfile:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; docs/messaging.md § The business profile',
  },
  'disconnectChannel:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; decisions.md: a sandbox key may not change the channel',
  },
  'moveAccountChannel:owner': {
    expected: 'success',
    ids: (w) => ({ accountId: w.moves.from }),
    why: "moving A's own number would leave A on the sandbox for the rows after it: a spare account's number moves",
  },
  'putVoiceChannel:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; docs/voice.md: a sandbox key may not change the voice channel',
  },
  'putVoiceChannel:owner': { expected: 'success', why: 'the control of the row above' },
  'submitTemplate:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; decisions.md: a sandbox key of a WhatsApp Cloud API account may not submit',
  },
  'deleteTemplate:sandbox': {
    expected: FORBIDDEN,
    ids: (w) => ({ id: w.submittedTemplateId }),
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; decisions.md: a sandbox key may not delete a template Meta holds',
  },
  'syncTemplates:sandbox': {
    expected: FORBIDDEN,
    why: 'docs/errors.md FORBIDDEN: "a sandbox key on a live-only action"; docs/messaging.md § Templates from Meta: a sandbox key of a WhatsApp Cloud API account may not sync',
  },
  'syncTemplates:owner': { expected: 'success', why: 'the control of the row above' },
  'replaceTemplate:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.replaceableTemplateId }),
    why: 'docs/messaging.md: a replace takes a DRAFT or REJECTED template (the submit row leaves the usual one PENDING)',
  },
  'simulateInboundMessage:owner': {
    expected: FORBIDDEN,
    why: 'docs/conversations.md: a **sandbox key** plays the customer; decisions.md: a live key gets 403',
  },
  'simulateInboundMessage:sandbox': { expected: 'success', why: 'the control of the row above' },
  'simulateNumberChange:owner': {
    expected: FORBIDDEN,
    why: 'docs/messaging.md § Who a customer is: a sandbox key plays the customer; a live key gets 403',
  },
  // The world's customers stay as they are: the number changed is nobody's, so the control's
  // answer is the documented 404 (no contact at `from`), not a change other rows would see.
  'simulateNumberChange:sandbox': {
    expected: NOT_FOUND,
    why: 'docs/messaging.md § Who a customer is: 404 when no contact is at `from`',
  },
  // GET /messages/{id}/media reads a message that carries a file (docs/messaging.md § Media: a
  // message without one is a 404): A's own readers get it from one that does.
  'getMessageMedia:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.mediaMessageId }),
    why: 'docs/messaging.md § Media: the file of a message that carries one',
  },
  'getMessageMedia:ownPartner': {
    expected: 'success',
    ids: (w) => ({ id: w.mediaMessageId }),
    why: 'docs/messaging.md § Media: the file of a message that carries one',
  },
  'getMessageMedia:sandbox': {
    expected: 'success',
    ids: (w) => ({ id: w.mediaMessageId }),
    why: 'docs/messaging.md § Media: the file of a message that carries one',
  },
  // docs/messaging.md § Send later: cancel takes a scheduled message, and leaves it canceled: each
  // caller that may cancel one of A's has its own.
  ...Object.fromEntries(
    (['owner', 'ownPartner', 'sandbox', 'agent'] as const).map((caller) => [
      `cancelMessage:${caller}`,
      {
        expected: 'success' as const,
        ids: (w: World) => ({ id: w.scheduledMessageIds[caller] }),
        why: 'docs/messaging.md § Send later: cancel takes a scheduled message (an agent may: it is the inbox’s)',
      },
    ]),
  ),
  'markMessageRead:sandbox': {
    expected: 'success',
    why: "docs/messaging.md § Read receipts: A's '/messages/{id}' is its sandbox customer's message, which a sandbox key marks read (recorded only; a WhatsApp one is 403)",
  },
  // A move applies to a sequence in one state (docs/automation.md § Sequences): each owner row
  // names a sequence in the state its move leaves from.
  'publishSequence:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.sequences.draft }),
    why: 'docs/automation.md: publish takes a draft',
  },
  'pauseSequence:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.sequences.active }),
    why: 'docs/automation.md: pause takes an active sequence',
  },
  'resumeSequence:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.sequences.paused }),
    why: 'docs/automation.md: resume takes a paused sequence',
  },
  'archiveSequence:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.sequences.archivable }),
    why: 'docs/automation.md: archive takes a sequence not archived yet',
  },
  // Likewise for journeys (docs/automation.md § Journeys).
  'publishJourney:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.journeys.draft }),
    why: 'docs/automation.md: publish takes a draft (or a paused journey)',
  },
  'pauseJourney:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.journeys.published }),
    why: 'docs/automation.md: pause takes a published journey',
  },
  'publishVoiceScript:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.draftScriptId }),
    why: 'docs/voice.md: publish takes a draft',
  },
  'pressSandboxCallDigits:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.keysCallId }),
    why: 'docs/voice.md: keys go to a call not ended (the cancel row ends the other)',
  },
  // Campaign moves apply to a campaign in one state (docs/voice.md § Campaigns).
  'startVoiceCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.campaigns.startable }),
    why: 'docs/voice.md: start takes a draft',
  },
  'pauseVoiceCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.campaigns.running }),
    why: 'docs/voice.md: pause takes a running campaign',
  },
  'resumeVoiceCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.campaigns.paused }),
    why: 'docs/voice.md: resume takes a paused campaign',
  },
  'cancelVoiceCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.campaigns.cancelable }),
    why: 'docs/voice.md: cancel takes a campaign not ended',
  },
  // Broadcast campaign moves, likewise (docs/messaging.md § Campaigns).
  'startCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.broadcasts.startable }),
    why: 'docs/messaging.md: start takes a draft',
  },
  'pauseCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.broadcasts.running }),
    why: 'docs/messaging.md: pause takes a running campaign',
  },
  'resumeCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.broadcasts.paused }),
    why: 'docs/messaging.md: resume takes a paused campaign',
  },
  'cancelCampaign:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.broadcasts.cancelable }),
    why: 'docs/messaging.md: cancel takes a campaign not ended',
  },
  // docs/console.md: a sandbox key may not manage keys nor invite (docs/history/issue-26.md).
  'createKey:sandbox': { expected: FORBIDDEN, why: 'docs/console.md: a sandbox key may not manage keys' },
  'listKeys:sandbox': { expected: FORBIDDEN, why: 'docs/console.md: a sandbox key may not manage keys' },
  'revokeKey:sandbox': { expected: FORBIDDEN, why: 'docs/console.md: a sandbox key may not manage keys' },
  'inviteTeamMember:sandbox': { expected: FORBIDDEN, why: 'docs/console.md: a sandbox key may not invite' },
  // docs/console.md § Roles: an agent reads the events of what the inbox shows it (messages,
  // conversations, contacts, templates), not the webhook test event the usual fixture is.
  'getEvent:agent': {
    expected: 'success',
    ids: (w) => ({ id: w.inboxEventId }),
    why: 'docs/console.md § Roles: an agent reads the events of the routes it may call',
  },
  'getMessageMedia:agent': {
    expected: 'success',
    ids: (w) => ({ id: w.mediaMessageId }),
    why: 'docs/messaging.md § Media: the file of a message that carries one',
  },
  'archiveJourney:owner': {
    expected: 'success',
    ids: (w) => ({ id: w.journeys.archivable }),
    why: 'docs/automation.md: archive takes a journey not archived yet',
  },
};

export function expectedFor(op: Operation, caller: Caller): Exception {
  return (
    EXCEPTIONS[`${op.operationId}:${caller}`] ?? { expected: generalRule(op, caller), why: 'general rule' }
  );
}

/**
 * A minimal valid body for every operation that takes one, so that only the caller can be the
 * reason for a refusal. Bodies of the success rows must also succeed.
 */
export const BODIES: Record<string, (w: World) => unknown> = {
  updateWallet: () => ({ lowBalanceThreshold: { amount: '1.00' } }),
  createPartnerKey: () => ({ name: 'matrix' }),
  createKey: () => ({ name: 'matrix', scope: 'live' }),
  invitePartnerAdmin: () => ({ email: 'matrix-admin@example.com', name: 'Matrix' }),
  provisionAccount: () => ({ accountName: 'Matrix', countryCode: 'US', planCode: 'scale' }),
  updateAccount: () => ({ accountName: 'Renamed by the matrix' }),
  createAccountKey: () => ({ name: 'matrix', scope: 'live' }),
  creditAccountWallet: () => ({ amount: '1.00' }),
  createContact: () => ({ phone: '+14155550190' }),
  updateContact: () => ({ name: 'Ann Patched' }),
  replaceContact: (w) => ({ phone: w.customerPhone, name: 'Ann Replaced', tags: ['vip'] }),
  tagContact: () => ({ tags: ['gold'] }),
  importContacts: () => ({ contacts: [{ phone: '+14155550191' }] }),
  // docs/messaging.md § Read receipts: '/messages/{id}' is A's sandbox customer's message (recorded only).
  markMessageRead: () => ({ typing: true }),
  sendBulkMessages: (w) => ({ type: 'text', text: 'Noted.', recipients: [{ to: w.customerPhone }] }),
  createWebhook: () => ({ url: 'http://127.0.0.1:9/hook', events: ['webhook.test'] }),
  updateWebhook: () => ({ events: ['webhook.test', 'contact.created'] }),
  rotateWebhookSecret: () => ({}),
  replayWebhookEvents: () => ({ since: '2000-01-01T00:00:00Z' }),
  replayPartnerWebhookEvents: () => ({ since: '2000-01-01T00:00:00Z' }),
  createPartnerWebhook: () => ({ url: 'http://127.0.0.1:9/hook', events: ['webhook.test'] }),
  updatePartnerWebhook: () => ({ events: ['webhook.test', 'contact.created'] }),
  rotatePartnerWebhookSecret: () => ({}),
  createTeamMember: () => ({ name: 'Di', email: 'di@example.com', role: 'agent' }),
  createRule: () => ({
    name: 'matrix',
    trigger: { event: 'contact.created' },
    actions: [{ type: 'add_tag', tag: 'new' }],
  }),
  updateRule: () => ({ status: 'paused' }),
  testRule: () => ({ event: { type: 'message.received', data: { text: 'hi', type: 'text' } } }),
  createSequence: () => ({
    name: 'matrix',
    steps: [{ delay: { after: 'PT1H' }, message: { type: 'text', text: 'Hi' } }],
  }),
  updateSequence: () => ({ name: 'Renamed by the matrix' }),
  createEnrollment: (w) => ({ contactId: w.contactId }),
  wakeSandbox: (w) => ({ enrollmentId: w.enrollmentId }),
  createJourney: () => ({
    name: 'matrix',
    entry: { trigger: 'api', start: 'end' },
    nodes: [{ id: 'end', type: 'end' }],
    edges: [],
  }),
  updateJourney: () => ({ name: 'Renamed by the matrix' }),
  triggerJourney: (w) => ({ contactId: w.contactId }),
  createVoiceScript: () => ({ name: 'matrix', type: 'tts', tts: { text: 'Hi' } }),
  updateVoiceScript: () => ({ name: 'Renamed by the matrix' }),
  createCall: (w) => ({ to: '+15005550001', scriptId: w.ids['/voice/scripts/{id}'] }),
  putVoiceChannel: () => ({ provider: 'sandbox' }),
  createVoiceCampaign: (w) => ({
    name: 'matrix',
    scriptId: w.ids['/voice/scripts/{id}'],
    audience: { contactIds: [w.contactId] },
  }),
  updateVoiceCampaign: () => ({ name: 'Renamed by the matrix' }),
  createCampaign: (w) => ({
    name: 'matrix',
    message: { templateName: 'isolation_broadcast', templateLanguage: 'en_US', parameters: ['x'] },
    audience: { contactIds: [w.contactId] },
  }),
  replaceCampaign: (w) => ({
    name: 'Replaced by the matrix',
    message: { templateName: 'isolation_broadcast', templateLanguage: 'en_US', parameters: ['y'] },
    audience: { contactIds: [w.contactId] },
  }),
  updateCampaign: () => ({ name: 'Renamed by the matrix' }),
  pressSandboxCallDigits: () => ({ digits: '1' }),
  createJourneyConfig: () => ({
    name: 'matrix',
    type: 'welcome_message',
    config: { on: 'first_inbound', message: { type: 'text', text: 'Welcome, {{ contact.name }}!' } },
  }),
  updateJourneyConfig: () => ({ name: 'Renamed by the matrix' }),
  putPartnerWhatsAppApp: () => ({
    appId: '101',
    appSecret: 'matrix-app-secret',
    verifyToken: 'matrix-verify',
  }),
  moveAccountChannel: (w) => ({ toAccountId: w.moves.to }),
  updateChannelProfile: () => ({ about: 'Changed by the matrix' }),
  // A fresh code each time (Meta's is good once), for A's own number: connecting it changes nothing else.
  completeEmbeddedSignup: (w) => {
    const signup = w.embeddedSignup();
    return { code: signup.code, wabaId: signup.wabaId, phoneNumberId: signup.phoneNumberId };
  },
  putChannel: (w) => ({
    provider: 'whatsapp_cloud',
    whatsapp: FakeWhatsAppCloud.channelSettings(w.business),
  }),
  createTemplate: () => ({
    name: 'isolation_new',
    language: 'en_US',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: 'Your order is ready for pickup today.' }],
  }),
  updateTemplate: () => ({ category: 'UTILITY' }),
  replaceTemplate: () => ({
    name: 'isolation_replaced',
    language: 'en_US',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: 'Your order is ready for pickup today.' }],
  }),
  sendMessage: (w) => ({ to: w.customerPhone, type: 'text', text: 'Noted.' }),
  estimateMessages: (w) => ({ to: w.customerPhone, type: 'text', text: 'Noted.' }),
  replyInConversation: () => ({ type: 'text', text: 'Thanks, on it.' }),
  assignConversation: (w) => ({ assigneeId: w.memberId }),
  updateTeamMember: () => ({ availability: 'online' }),
  createConversationNote: (w) => ({ text: 'Matrix note', mentions: [w.memberId] }),
  labelConversation: () => ({ labels: ['matrix'] }),
  // Waking an awake conversation: the success changes nothing the other rows read.
  snoozeConversation: () => ({ until: null }),
  createCannedResponse: () => ({ shortcut: 'matrix', title: 'Matrix', text: 'Hello' }),
  updateCannedResponse: () => ({ title: 'Matrix' }),
  createTeam: () => ({ name: 'Matrix' }),
  putCsat: () => ({ scale: 'faces', question: 'How did we do?' }),
  putBusinessHours: () => ({ timezone: 'UTC', weekly: [{ day: 'mon', from: '09:00', until: '17:00' }] }),
  updateTeam: () => ({ assignment: { capacity: 10 } }),
  createSlaPolicy: () => ({ name: 'Matrix', firstResponseMinutes: 30 }),
  updateSlaPolicy: () => ({ resolutionMinutes: 120 }),
  renderCannedResponse: (w) => ({ conversationId: w.ids['/conversations/{id}'] }),
  simulateInboundMessage: (w) => ({ from: w.customerPhone, text: 'Still there?' }),
  simulateNumberChange: () => ({ from: '+14155550188', to: '+14155550189' }),
};
