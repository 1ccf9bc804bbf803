// One tenant holding one of every kind of resource, made through the public API, plus the callers
// that must not reach it: for the tenant isolation matrix (test/security/isolation-matrix.test.ts).
//
// Tenant A is on the fake WhatsApp Cloud API, so that a sandbox key's live-only refusals (submitting
// or deleting a template Meta holds) are reachable. Nothing here needs the job workers: queued jobs
// and pending deliveries simply stay put, which keeps A's rows still while the matrix compares them.
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import type { FakeSignup } from '../fakes/meta-onboarding.ts';
import { type FakeBusiness, FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, otherPartner, type Partner, provision, tenant } from './client.ts';
import { memberSession, partnerAdminSession, type Session } from './console.ts';
import { credit, INSTANT_SANDBOX } from './messaging.ts';
import type { TestEnv } from './setup.ts';
import { sleep } from './wait.ts';

export interface World {
  app: App;
  /** A's partner (the installation's) and a partner of no relation to A. */
  partner: Partner;
  unrelatedPartner: Partner;
  revokedPartnerKey: string;
  accountId: string;
  business: FakeBusiness;
  /**
   * A fresh Embedded Signup of A's own number on A's partner's app (a code is good once): the owner
   * row of completeEmbeddedSignup connects the number A already has.
   */
  embeddedSignup: () => FakeSignup;
  /** Two more accounts of A's partner: one with a number (moved by moveAccountChannel's owner row), one without. */
  moves: { from: string; to: string };
  keys: {
    live: string;
    sandbox: string;
    revoked: string;
    expired: string;
    /** Tenant B: another account of the same partner. */
    otherTenant: string;
  };
  /** A's resources, by the path template up to the parameter they fill ('/contacts/{id}'). */
  ids: Record<string, string>;
  /** Resources the success rows of DELETE routes may destroy, by the route's full path template. */
  spares: Record<string, Record<string, string>>;
  /** A template Meta holds (submitted through the WhatsApp Cloud API). */
  submittedTemplateId: string;
  /** A DRAFT template of its own for the owner row of replaceTemplate (the submit row moves the usual one). */
  replaceableTemplateId: string;
  /** The signing secret of A's webhook endpoint (ids['/webhooks/{id}']), shown once at creation. */
  webhookSecret: string;
  /** A team member (the assignee of assignConversation). */
  memberId: string;
  /** A's contact's phone, which wrote in (its service window is open). */
  customerPhone: string;
  /** A's sequences in each state a move applies to (the owner rows of publish, pause, resume, archive). */
  sequences: { draft: string; active: string; paused: string; archivable: string };
  /** A's contact (enrolled by the owner rows of createEnrollment). */
  contactId: string;
  /** An enrollment made with A's sandbox key (the one /sandbox/wake may wake). */
  enrollmentId: string;
  /** A's journeys in each state a move applies to (the owner rows of publish, pause, archive). */
  journeys: { draft: string; published: string; archivable: string };
  /** A's voice script still a draft (the owner row of publishVoiceScript). */
  draftScriptId: string;
  /** A queued sandbox call of A that the sandbox digits row presses keys on. */
  keysCallId: string;
  /** A's voice campaigns in the state each move leaves from (the owner rows of start, pause, …). */
  campaigns: { draft: string; startable: string; running: string; paused: string; cancelable: string };
  /** A's broadcast campaigns in the state each move leaves from (the owner rows of start, pause, …). */
  broadcasts: { draft: string; startable: string; running: string; paused: string; cancelable: string };
  /** A customer's message carrying a file (an upload of A's, sent by A's sandbox customer). */
  mediaMessageId: string;
  /**
   * Console sessions: A's agent, account admin and partner admin (of A's partner), B's account admin
   * and agent, an unrelated partner's admin.
   */
  sessions: Record<
    'agent' | 'admin' | 'partnerAdmin' | 'otherTenantAdmin' | 'otherTenantAgent' | 'unrelatedPartnerAdmin',
    Session
  >;
  /** An event an agent may read (the customer's first message, message.received). */
  inboxEventId: string;
  /** A's messages scheduled (send later), one for each caller whose cancelMessage row succeeds. */
  scheduledMessageIds: Record<'owner' | 'ownPartner' | 'sandbox' | 'agent', string>;
}

/** POST /media with a small PNG (multipart: the client helper writes JSON only). */
async function uploadPng(app: App, key: string): Promise<{ id: string }> {
  const boundary = 'world-boundary';
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="w.png"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/public/media',
    headers: { 'x-api-key': key, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const HOOK_URL = 'http://127.0.0.1:9/hook';
const TAG = 'vip';
const LABEL = 'refund';

async function ok(res: Promise<{ status: number; body: any }>, status: number): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

export async function buildWorld(env: TestEnv, fake: FakeWhatsAppCloud): Promise<World> {
  const { app } = env;
  const partnerKey = env.partner.partnerKey;
  const p = (method: 'POST' | 'DELETE', path: string, body?: unknown) =>
    call(app, method, path, { key: partnerKey, body });
  const p2 = (method: 'PUT', path: string, body?: unknown) =>
    call(app, method, path, { key: partnerKey, body });

  // The expired key first: it must be in the future when made, and past by the time it is used.
  const account = await provision(app, partnerKey);
  const accountId = account.accountId;
  const expiresAt = Date.now() + 2000;
  const expired = await createAccountKey(app, partnerKey, accountId, {
    expiresAt: new Date(expiresAt).toISOString(),
  });
  const live = await createAccountKey(app, partnerKey, accountId);
  const sandbox = await createAccountKey(app, partnerKey, accountId, { scope: 'sandbox' });
  const a = (method: 'POST' | 'GET', path: string, body?: unknown, key = live.apiKey) =>
    call(app, method, path, { key, body });

  // The partner's Meta app is the fake's app "101", as putPartnerWhatsAppApp's body sets it, so that
  // the rows that set it change nothing; A's number is of that app (signed with its secret).
  const metaApp = fake.onboarding.createApp({ appId: '101', appSecret: 'matrix-app-secret' });
  await ok(
    p2('PUT', '/partner/whatsapp-app', {
      appId: metaApp.appId,
      appSecret: metaApp.appSecret,
      verifyToken: 'matrix-verify',
      configurationId: metaApp.configurationId,
    }),
    200,
  );
  const business = fake.createBusiness({ appSecret: metaApp.appSecret });
  await ok(
    call(app, 'PUT', '/account/channel', {
      key: live.apiKey,
      body: {
        provider: 'whatsapp_cloud',
        whatsapp: FakeWhatsAppCloud.channelSettings(business),
        sandbox: INSTANT_SANDBOX,
      },
    }),
    200,
  );
  await credit(app, partnerKey, accountId, '10.00');

  // Revoked after one use, so that the key is in the key cache when it is revoked: the revoking
  // process drops its cache at once (docs/decisions.md, "Caching and revocation").
  const revoked = await createAccountKey(app, partnerKey, accountId);
  await ok(a('GET', '/account', undefined, revoked.apiKey), 200);
  await ok(p('DELETE', `/partner/accounts/${accountId}/keys/${revoked.id}`), 204);
  const extraKey = await createAccountKey(app, partnerKey, accountId);
  const spareKey = await createAccountKey(app, partnerKey, accountId);

  const customerPhone = '+14155550101';
  const contact = await ok(a('POST', '/contacts', { phone: customerPhone, name: 'Ann', tags: [TAG] }), 201);
  const spareContact = await ok(a('POST', '/contacts', { phone: '+14155550102', tags: [TAG] }), 201);
  const inbound = await ok(
    a('POST', '/sandbox/inbound-messages', { from: customerPhone, text: 'Hello?' }, sandbox.apiKey),
    201,
  );
  // Uploads stay in Tidings with a sandbox key (a live key's would go to Meta too).
  const upload = await uploadPng(app, sandbox.apiKey);
  const spareUpload = await uploadPng(app, sandbox.apiKey);
  const mediaMessage = await ok(
    a(
      'POST',
      '/sandbox/inbound-messages',
      { from: customerPhone, media: { kind: 'image', id: upload.id } },
      sandbox.apiKey,
    ),
    201,
  );
  // Send later: a message scheduled a day ahead per caller that cancels one (cancelMessage).
  const scheduled = async () =>
    (
      await ok(
        a('POST', '/messages', {
          to: customerPhone,
          type: 'text',
          text: 'Tomorrow',
          sendAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
        }),
        202,
      )
    ).id as string;
  const scheduledMessageIds = {
    owner: await scheduled(),
    ownPartner: await scheduled(),
    sandbox: await scheduled(),
    agent: await scheduled(),
  };
  // Another customer's conversation: the one deleteConversation's success row deletes.
  const spareInbound = await ok(
    a('POST', '/sandbox/inbound-messages', { from: '+14155550105', text: 'Hi?' }, sandbox.apiKey),
    201,
  );
  const member = await ok(
    a('POST', '/team/members', { name: 'Bo', email: 'bo@example.com', role: 'agent' }),
    201,
  );
  const spareMember = await ok(
    a('POST', '/team/members', { name: 'Cy', email: 'cy@example.com', role: 'agent' }),
    201,
  );
  const canned = (shortcut: string) =>
    ok(
      a('POST', '/canned-responses', { shortcut, title: 'Thanks', text: 'Thanks, {{ contact.name }}!' }),
      201,
    );
  const cannedA = await canned('thanks');
  const teamA = await ok(a('POST', '/teams', { name: 'Support', members: [member.id] }), 201);
  const spareTeam = await ok(a('POST', '/teams', { name: 'Spare' }), 201);
  const slaA = await ok(a('POST', '/sla-policies', { name: 'Standard', firstResponseMinutes: 60 }), 201);
  const spareSla = await ok(a('POST', '/sla-policies', { name: 'Spare', resolutionMinutes: 60 }), 201);
  const spareCanned = await canned('spare');
  // A label on A's conversation: the one unlabelConversation's rows name.
  await ok(a('POST', `/conversations/${inbound.conversationId}/labels`, { labels: [LABEL] }), 200);

  const rule = (name: string) => ({
    name,
    trigger: { event: 'message.received' },
    actions: [{ type: 'add_tag', tag: 'replied' }],
  });
  const ruleA = await ok(a('POST', '/rules', rule('isolation rule')), 201);
  const spareRule = await ok(a('POST', '/rules', rule('isolation spare rule')), 201);

  const sequence = async (name: string, moves: string[] = []) => {
    const made = await ok(
      a('POST', '/sequences', {
        name,
        steps: [{ delay: { after: 'P1D' }, message: { type: 'text', text: 'Hello {{ contact.name }}' } }],
        enrollment: { reenroll: 'always' },
      }),
      201,
    );
    for (const move of moves) await ok(a('POST', `/sequences/${made.id}/${move}`), 200);
    return made.id as string;
  };
  const sequenceA = await sequence('isolation sequence', ['publish']);
  const sequences = {
    draft: await sequence('isolation draft'),
    active: await sequence('isolation active', ['publish']),
    paused: await sequence('isolation paused', ['publish', 'pause']),
    archivable: await sequence('isolation archivable', ['publish']),
  };
  const spareSequence = await sequence('isolation spare');
  const enrol = (contactId: string, key?: string) =>
    ok(a('POST', `/sequences/${sequenceA}/enrollments`, { contactId }, key), 201);
  const enrollment = await enrol(contact.id, sandbox.apiKey);
  const spareEnrollment = await enrol(spareContact.id);
  const enrollmentJob = await ok(
    a('POST', `/sequences/${sequenceA}/enrollments`, { contactIds: [spareContact.id] }),
    202,
  );

  const journey = async (name: string, moves: string[] = []) => {
    const made = await ok(
      a('POST', '/journeys', {
        name,
        entry: { trigger: 'api', reentry: 'always', start: 'pause' },
        nodes: [
          { id: 'pause', type: 'wait', config: { duration: 'P1D' } },
          {
            id: 'hello',
            type: 'send_message',
            config: { message: { type: 'text', text: 'Hello {{ contact.name }}' } },
          },
        ],
        edges: [{ from: 'pause', to: 'hello' }],
      }),
      201,
    );
    for (const move of moves) await ok(a('POST', `/journeys/${made.id}/${move}`), 200);
    return made.id as string;
  };
  const journeyA = await journey('isolation journey', ['publish']);
  const journeys = {
    draft: await journey('isolation draft journey'),
    published: await journey('isolation published journey', ['publish']),
    archivable: await journey('isolation archivable journey', ['publish']),
  };
  const spareJourney = await journey('isolation spare journey');
  const journeyRun = await ok(a('POST', `/journeys/${journeyA}/trigger`, { contactId: contact.id }), 202);
  // Journey configs own a journey each (read-only through /journeys): an appointment reminder is
  // started by the API only, so the world's later events start nothing.
  const journeyConfig = (name: string) =>
    ok(
      a('POST', '/journey-configs', {
        name,
        type: 'appointment_reminder',
        config: {
          appointmentAt: 'contact.attributes.appointmentAt',
          remindBefore: ['P1D'],
          message: { templateName: 'isolation_reminder', templateLanguage: 'en_US' },
        },
      }),
      201,
    );
  const journeyConfigA = await journeyConfig('isolation journey config');
  const spareJourneyConfig = await journeyConfig('isolation spare journey config');

  const script = async (name: string, publish: boolean) => {
    const made = await ok(
      a('POST', '/voice/scripts', { name, type: 'tts', tts: { text: 'Hello {{ contact.name }}' } }),
      201,
    );
    if (publish) await ok(a('POST', `/voice/scripts/${made.id}/publish`), 200);
    return made.id as string;
  };
  const scriptA = await script('isolation script', true);
  const draftScript = await script('isolation draft script', false);
  const spareScript = await script('isolation spare script', false);
  // No worker runs here: the calls stay queued (cancel takes one, the sandbox's keys another).
  const placeCall = () => ok(a('POST', '/voice/calls', { to: '+15005550001', scriptId: scriptA }), 202);
  const callA = await placeCall();
  const keysCall = await placeCall();
  const campaign = async (name: string, moves: string[] = []) => {
    const made = await ok(
      a('POST', '/voice/campaigns', { name, scriptId: scriptA, audience: { contactIds: [contact.id] } }),
      201,
    );
    for (const step of moves) await ok(a('POST', `/voice/campaigns/${made.id}/${step}`), 200);
    return made.id as string;
  };
  const campaigns = {
    draft: await campaign('isolation campaign'),
    startable: await campaign('isolation startable campaign'),
    running: await campaign('isolation running campaign', ['start']),
    paused: await campaign('isolation paused campaign', ['start', 'pause']),
    cancelable: await campaign('isolation cancelable campaign', ['start']),
  };
  const spareCampaign = await campaign('isolation spare campaign');

  // Broadcast campaigns of an approved template (approved in the database: no review job runs here).
  const broadcastTemplate = await ok(
    a('POST', '/templates', {
      name: 'isolation_broadcast',
      language: 'en_US',
      category: 'MARKETING',
      components: [{ type: 'BODY', text: 'News for {{1}} today.', example: { body_text: [['Ann']] } }],
    }),
    201,
  );
  await env.tdb.db.query(`UPDATE templates SET status = 'APPROVED' WHERE id = $1`, [broadcastTemplate.id]);
  const broadcast = async (name: string, moves: string[] = []) => {
    const made = await ok(
      a('POST', '/campaigns', {
        name,
        message: {
          templateName: 'isolation_broadcast',
          templateLanguage: 'en_US',
          parameters: ['{{ contact.name }}'],
        },
        audience: { contactIds: [contact.id] },
      }),
      201,
    );
    for (const step of moves) await ok(a('POST', `/campaigns/${made.id}/${step}`), 200);
    return made.id as string;
  };
  const broadcasts = {
    draft: await broadcast('isolation broadcast'),
    startable: await broadcast('isolation startable broadcast'),
    running: await broadcast('isolation running broadcast', ['start']),
    paused: await broadcast('isolation paused broadcast', ['start', 'pause']),
    cancelable: await broadcast('isolation cancelable broadcast', ['start']),
  };
  const spareBroadcast = await broadcast('isolation spare broadcast');

  const template = (name: string) => ({
    name,
    language: 'en_US',
    category: 'UTILITY',
    components: [
      {
        type: 'BODY',
        text: 'Hi {{1}}, your appointment is on {{2}}. Reply to confirm.',
        example: { body_text: [['Ann', 'Monday 10:00']] },
      },
    ],
  });
  const draft = await ok(a('POST', '/templates', template('isolation_draft')), 201);
  const spareTemplate = await ok(a('POST', '/templates', template('isolation_spare')), 201);
  const replaceable = await ok(a('POST', '/templates', template('isolation_replaceable')), 201);
  const submitted = await ok(a('POST', '/templates', template('isolation_submitted')), 201);
  await ok(a('POST', `/templates/${submitted.id}/submit`), 200);

  const webhook = await ok(a('POST', '/webhooks', { url: HOOK_URL, events: ['webhook.test'] }), 201);
  const spareWebhook = await ok(a('POST', '/webhooks', { url: HOOK_URL, events: ['webhook.test'] }), 201);
  const delivery = await ok(a('POST', `/webhooks/${webhook.id}/test`), 202);

  const partnerHook = await ok(
    p('POST', '/partner/webhooks', { url: HOOK_URL, events: ['webhook.test'] }),
    201,
  );
  const sparePartnerHook = await ok(
    p('POST', '/partner/webhooks', { url: HOOK_URL, events: ['webhook.test'] }),
    201,
  );
  const partnerDelivery = await ok(p('POST', `/partner/webhooks/${partnerHook.id}/test`), 202);
  const partnerExtraKey = await ok(p('POST', '/partner/keys', { name: 'extra' }), 201);
  const partnerSpareKey = await ok(p('POST', '/partner/keys', { name: 'spare' }), 201);
  const partnerRevoked = await ok(p('POST', '/partner/keys', { name: 'revoked' }), 201);
  await ok(call(app, 'GET', '/partner/keys', { key: partnerRevoked.apiKey }), 200);
  await ok(p('DELETE', `/partner/keys/${partnerRevoked.id}`), 204);
  const spareAccount = await provision(app, partnerKey);

  const contactsJob = await ok(a('POST', '/bulk/contacts', { contacts: [{ phone: '+14155550103' }] }), 202);
  const messagesJob = await ok(
    a(
      'POST',
      '/bulk/messages',
      { type: 'text', text: 'Noted.', recipients: [{ to: customerPhone }] },
      sandbox.apiKey,
    ),
    202,
  );

  const other = await tenant(app, partnerKey);
  const moveFrom = await tenant(app, partnerKey);
  await ok(
    call(app, 'PUT', '/account/channel', {
      key: moveFrom.apiKey,
      body: {
        provider: 'whatsapp_cloud',
        whatsapp: FakeWhatsAppCloud.channelSettings(fake.createBusiness()),
      },
    }),
    200,
  );
  const moveTo = await provision(app, partnerKey);
  const unrelatedPartner = await otherPartner(app.ctx.db);
  const sessionOnly = ({ cookie, csrf }: Session) => ({ cookie, csrf }) as Session;
  const sessions = {
    agent: sessionOnly(await memberSession(app, live.apiKey, 'agent')),
    admin: sessionOnly(await memberSession(app, live.apiKey, 'admin')),
    partnerAdmin: sessionOnly(await partnerAdminSession(app, partnerKey)),
    otherTenantAdmin: sessionOnly(await memberSession(app, other.apiKey, 'admin')),
    otherTenantAgent: sessionOnly(await memberSession(app, other.apiKey, 'agent')),
    unrelatedPartnerAdmin: sessionOnly(await partnerAdminSession(app, unrelatedPartner.partnerKey)),
  };
  const received = await ok(
    a('GET', `/events?type=message.received&since=${new Date(0).toISOString()}`),
    200,
  );
  const inboxEvent = received.data.find((e: any) => e.data.id === inbound.id);
  const ownKey = await createAccountKey(app, partnerKey, accountId);
  const spareOwnKey = await createAccountKey(app, partnerKey, accountId);
  await sleep(Math.max(0, expiresAt - Date.now() + 50));

  return {
    app,
    partner: env.partner,
    unrelatedPartner,
    revokedPartnerKey: partnerRevoked.apiKey,
    accountId,
    business,
    embeddedSignup: () => fake.onboarding.signup(metaApp, { business }),
    moves: { from: moveFrom.accountId, to: moveTo.accountId },
    keys: {
      live: live.apiKey,
      sandbox: sandbox.apiKey,
      revoked: revoked.apiKey,
      expired: expired.apiKey,
      otherTenant: other.apiKey,
    },
    webhookSecret: webhook.secret,
    ids: {
      '/contacts/{id}': contact.id,
      '/contacts/{id}/tags/{tag}': TAG,
      '/templates/{id}': draft.id,
      '/messages/{id}': inbound.id,
      '/conversations/{id}': inbound.conversationId,
      '/conversations/{id}/labels/{label}': LABEL,
      '/canned-responses/{id}': cannedA.id,
      '/teams/{id}': teamA.id,
      '/sla-policies/{id}': slaA.id,
      '/webhooks/{id}': webhook.id,
      '/webhooks/{id}/deliveries/{deliveryId}': delivery.id,
      '/events/{id}': delivery.eventId,
      '/partner/webhooks/{id}': partnerHook.id,
      '/partner/webhooks/{id}/deliveries/{deliveryId}': partnerDelivery.id,
      '/team/members/{id}': member.id,
      '/rules/{id}': ruleA.id,
      '/sequences/{id}': sequenceA,
      '/sequences/{id}/enrollments/{enrollmentId}': enrollment.id,
      '/bulk/enrollments/{jobId}': enrollmentJob.jobId,
      '/journeys/{id}': journeyA,
      '/journeys/{id}/runs/{runId}': journeyRun.id,
      '/voice/scripts/{id}': scriptA,
      '/voice/calls/{id}': callA.id,
      '/voice/campaigns/{id}': campaigns.draft,
      '/campaigns/{id}': broadcasts.draft,
      '/media/{id}': upload.id,
      '/sandbox/calls/{id}': keysCall.id,
      '/journey-configs/{id}': journeyConfigA.id,
      '/bulk/contacts/{jobId}': contactsJob.jobId,
      '/bulk/messages/{jobId}': messagesJob.jobId,
      '/partner/keys/{keyId}': partnerExtraKey.id,
      '/partner/accounts/{accountId}': accountId,
      '/partner/accounts/{accountId}/keys/{keyId}': extraKey.id,
      '/keys/{id}': ownKey.id,
    },
    spares: {
      '/contacts/{id}': { id: spareContact.id },
      '/contacts/{id}/tags/{tag}': { id: spareContact.id },
      '/templates/{id}': { id: spareTemplate.id },
      '/conversations/{id}': { id: spareInbound.conversationId },
      // Removing a label is idempotent: the success row may take A's own.
      '/conversations/{id}/labels/{label}': {},
      '/canned-responses/{id}': { id: spareCanned.id },
      '/teams/{id}': { id: spareTeam.id },
      '/sla-policies/{id}': { id: spareSla.id },
      '/webhooks/{id}': { id: spareWebhook.id },
      '/partner/webhooks/{id}': { id: sparePartnerHook.id },
      '/team/members/{id}': { id: spareMember.id },
      '/rules/{id}': { id: spareRule.id },
      '/sequences/{id}': { id: spareSequence },
      '/sequences/{id}/enrollments/{enrollmentId}': { enrollmentId: spareEnrollment.id },
      '/journeys/{id}': { id: spareJourney },
      '/voice/scripts/{id}': { id: spareScript },
      '/voice/campaigns/{id}': { id: spareCampaign },
      '/campaigns/{id}': { id: spareBroadcast },
      '/media/{id}': { id: spareUpload.id },
      '/journey-configs/{id}': { id: spareJourneyConfig.id },
      '/partner/keys/{keyId}': { keyId: partnerSpareKey.id },
      '/partner/accounts/{accountId}': { accountId: spareAccount.accountId },
      '/partner/accounts/{accountId}/keys/{keyId}': { keyId: spareKey.id },
      '/keys/{id}': { id: spareOwnKey.id },
    },
    submittedTemplateId: submitted.id,
    replaceableTemplateId: replaceable.id,
    memberId: member.id,
    customerPhone,
    sequences,
    contactId: contact.id,
    enrollmentId: enrollment.id,
    journeys,
    draftScriptId: draftScript,
    keysCallId: keysCall.id as string,
    campaigns,
    broadcasts,
    mediaMessageId: mediaMessage.id,
    scheduledMessageIds,
    sessions,
    inboxEventId: inboxEvent.id,
  };
}
