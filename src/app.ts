// buildApp(config, deps): the whole HTTP application, ready to inject requests into or to listen.
// It never listens itself (server.ts does), so tests drive it through app.inject.

import { randomBytes } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import secureJson from 'secure-json-parse';
import type { AppContext } from './app-context.ts';
import { Channels } from './channels/registry.ts';
import type { Config } from './config.ts';
import { installAccessPolicy } from './kernel/access/access.ts';
import { Authenticator } from './kernel/access/auth.ts';
import { ConsoleSessions } from './kernel/access/console-principal.ts';
import { RateLimits } from './kernel/access/rate-limits.ts';
import { UsageMeter } from './kernel/access/usage-meter.ts';
import { SecretBox } from './kernel/crypto/secrets.ts';
import type { Database } from './kernel/database/db.ts';
import { installErrorHandling, sendError, toApiError } from './kernel/http/error-handler.ts';
import { installIdempotency } from './kernel/http/idempotency.ts';
import { installInputGuard } from './kernel/http/input-guard.ts';
import { API_PREFIX, CALLBACKS_PREFIX } from './kernel/http/prefixes.ts';
import { RouteHints } from './kernel/http/route-hints.ts';
import { boundedValidators } from './kernel/http/validator.ts';
import { Jobs } from './kernel/jobs/jobs.ts';
import { lazyChildLogger } from './kernel/observability/lazy-logger.ts';
import { prettyDestination } from './kernel/observability/log-format.ts';
import { installMetrics, Metrics } from './kernel/observability/metrics.ts';
import { installOpenApi } from './kernel/openapi/openapi.ts';
import { Egress, type Resolver } from './kernel/outbound/egress.ts';
import { EventOutbox } from './kernel/outbox/events.ts';
import { accountRoutes, PLAN_RULES } from './modules/accounts/index.ts';
import { automationInbox } from './modules/automation/index.ts';
import { AutomationWorker, wakeRoutes } from './modules/automation-worker/index.ts';
import { walletRoutes } from './modules/billing/index.ts';
import { bulkContactsJob, bulkRoutes, subscribeBulkProgress } from './modules/bulk/index.ts';
import { businessHoursRoutes } from './modules/business-hours/index.ts';
import { whatsappCallbackRoutes } from './modules/callbacks/index.ts';
import {
  callActions,
  callRoutes,
  subscribeCallMerges,
  VoiceDialer,
  voiceCallbackRoutes,
} from './modules/calls/index.ts';
import {
  CampaignSender,
  campaignRoutes,
  subscribeCampaignFeedback,
  subscribeRecipientMerges,
} from './modules/campaigns/index.ts';
import { cannedResponseRoutes } from './modules/canned-responses/index.ts';
import { channelProfileRoutes } from './modules/channel-profile/index.ts';
import { consoleAppRoutes } from './modules/console-app/index.ts';
import { consoleAuthRoutes } from './modules/console-auth/index.ts';
import { contactRoutes } from './modules/contacts/index.ts';
import {
  conversationAgentRoutes,
  conversationRoutes,
  historyImportJob,
  sandboxRoutes,
  subscribeConversationCleanup,
} from './modules/conversations/index.ts';
import { csatRoutes } from './modules/csat/index.ts';
import { eventRoutes } from './modules/events/index.ts';
import { journeyConfigRoutes } from './modules/journey-configs/index.ts';
import {
  findJourney,
  journeyActions,
  journeyRoutes,
  subscribeJourneyCallResumes,
  subscribeJourneyRunMerges,
} from './modules/journeys/index.ts';
import { keyRoutes } from './modules/keys/index.ts';
import { MediaStore, mediaRoutes } from './modules/media/index.ts';
import {
  AcceptQueue,
  dispatchJob,
  findMessage,
  lanesFor,
  messageRoutes,
  releaseJob,
  sandboxStatusJob,
  subscribeMessageMerges,
} from './modules/messages/index.ts';
import { opsRoutes } from './modules/ops/index.ts';
import { partnerAccountRoutes, partnerRoutes, partnerWhatsAppAppRoutes } from './modules/partner/index.ts';
import { loadPrices } from './modules/pricing/index.ts';
import { RetentionPruner } from './modules/retention/index.ts';
import { ruleRoutes, subscribeRuleRunMerges } from './modules/rules/index.ts';
import {
  bulkEnrollJob,
  findSequence,
  sequenceActions,
  sequenceRoutes,
  subscribeEnrollmentMerges,
} from './modules/sequences/index.ts';
import { slaPolicyRoutes, subscribeSla } from './modules/sla/index.ts';
import { teamRoutes } from './modules/team/index.ts';
import { subscribeTeamAssignment, teamsRoutes } from './modules/teams/index.ts';
import {
  ApprovedTemplates,
  templateReviewJob,
  templateRoutes,
  templateSyncJob,
} from './modules/templates/index.ts';
import {
  advanceCampaigns,
  subscribeCampaignCallOutcomes,
  subscribeVoiceCampaignMerges,
  voiceCampaignRoutes,
} from './modules/voice-campaigns/index.ts';
import { voiceChannelRoutes } from './modules/voice-channel/index.ts';
import { voiceScriptRoutes } from './modules/voice-scripts/index.ts';
import {
  ACCOUNT_WEBHOOKS,
  PARTNER_WEBHOOKS,
  WebhookDispatcher,
  webhookFanOut,
  webhookRoutes,
} from './modules/webhooks/index.ts';
import {
  channelRefreshJob,
  channelRoutes,
  coexistenceSyncJob,
  embeddedSignupRoutes,
  onboardingResumeJob,
} from './modules/whatsapp-channel/index.ts';

export { API_PREFIX };

export interface AppDeps {
  db: Database;
  /** The job queue; one is made on `db` when not given (it is started by the server, not here). */
  jobs?: Jobs;
  /** Redis for rate-limit counters shared between processes; null → in-process counters. */
  redis?: Redis | null;
  now?: () => Date;
  /** Where JSON log lines go (standard output when not given). */
  logStream?: { write(line: string): void };
  /** Collect process-wide metrics (CPU, memory); off in tests that build many apps. */
  processMetrics?: boolean;
  /** Resolves webhook hosts (the system resolver unless a test gives another). */
  resolver?: Resolver;
}

export type App = FastifyInstance & { ctx: AppContext };

function validators() {
  // `discriminator`: a oneOf told apart by a property (an action's `type`) is checked against the
  // branch it names only, so its errors are that branch's. A refused request has every fault
  // listed, within bounds (kernel/http/validator.ts).
  const options = { useDefaults: true, removeAdditional: false, strict: false, discriminator: true } as const;
  // Bodies are JSON and must carry the right types; query strings and paths are text and are coerced.
  const body = boundedValidators({ ...options, coerceTypes: false });
  const text = boundedValidators({ ...options, coerceTypes: 'array' });
  return ({ schema, httpPart, contentType }: { schema: object; httpPart?: string; contentType?: string }) => {
    if (httpPart !== 'body') return text(schema);
    // A multipart body (POST /media) is read by its route as it streams in; its schema documents it.
    if (contentType === 'multipart/form-data') return () => true;
    const validate = body(schema);
    if (!validate.passes({})) return validate;
    // A body that {} satisfies (every field optional) may be left out entirely, as in a bare
    // `POST …/rotate-secret`: the handler then sees {} with its defaults, not undefined.
    const optional = (data: unknown) => {
      const value = data ?? {};
      const valid = validate(value);
      optional.errors = validate.errors;
      return valid ? { value } : false;
    };
    optional.errors = validate.errors;
    return optional;
  };
}

// Request ids take their random bytes from a pool filled 4 KiB at a time: a call to the system's
// generator for every request cost 3 % of a GET's CPU.
let randomPool = Buffer.alloc(0);
let randomAt = 0;
function requestIdRandom(): string {
  if (randomAt + 12 > randomPool.length) {
    randomPool = randomBytes(4096);
    randomAt = 0;
  }
  randomAt += 12;
  return randomPool.toString('base64url', randomAt - 12, randomAt);
}

export async function buildApp(config: Config, deps: AppDeps): Promise<App> {
  // Readable lines on a terminal, JSON elsewhere (TIDINGS_LOG_FORMAT decides when set).
  const logStream = deps.logStream ?? prettyDestination(config.logFormat);
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: {
        paths: [
          'req.headers["x-api-key"]',
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-csrf-token"]',
        ],
        censor: '[redacted]',
      },
      ...(logStream ? { stream: logStream } : {}),
    },
    bodyLimit: config.bodyLimitBytes,
    // A request's logger is made at its first line (lazy-logger.ts).
    childLoggerFactory: lazyChildLogger,
    genReqId: () => `req_${requestIdRandom()}`,
    requestIdHeader: false,
    return503OnClosing: true,
    // A URL the router cannot read (bad percent-encoding, an over-long parameter) is answered
    // before any hook runs; it gets the documented error body too.
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      return sendError(request, reply, toApiError(err), config.publicBaseUrl);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const now = deps.now ?? (() => new Date());
  const metrics = new Metrics(deps.processMetrics ?? true);
  const egress = new Egress(config.webhookAllowedHosts, {
    resolver: deps.resolver,
    timeoutMs: config.webhookTimeoutMs,
  });
  const secrets = new SecretBox(config.secretsKey);
  const sending = {
    db: deps.db,
    jobs: deps.jobs ?? new Jobs(deps.db, { superviseSeconds: config.jobSuperviseSeconds }),
    events: new EventOutbox(now, [webhookFanOut, automationInbox]),
    prices: loadPrices(config.pricesFile),
    approvedTemplates: new ApprovedTemplates(),
    now,
  };
  // What lower modules announce in their transactions (kernel/outbox/hooks.ts), and who reacts.
  const hooks = sending.events.hooks;
  subscribeBulkProgress(hooks, now);
  subscribeCampaignFeedback(hooks);
  subscribeConversationCleanup(hooks, now);
  subscribeTeamAssignment(hooks, now);
  subscribeSla(hooks);
  subscribeCampaignCallOutcomes(hooks, now);
  subscribeJourneyCallResumes(hooks, { now, prices: sending.prices });
  // Two contacts that are one customer: each module moves the merged one's rows (contacts/merge.ts).
  subscribeMessageMerges(hooks);
  subscribeEnrollmentMerges(hooks, now);
  subscribeJourneyRunMerges(hooks, now);
  subscribeRecipientMerges(hooks);
  subscribeVoiceCampaignMerges(hooks);
  subscribeCallMerges(hooks);
  subscribeRuleRunMerges(hooks);
  const ctx: AppContext = {
    ...sending,
    actionTargets: {
      sequenceExists: async (sql, accountId, id) => (await findSequence(sql, accountId, id)) !== null,
      journeyExists: async (sql, accountId, id) => (await findJourney(sql, accountId, id)) !== null,
    },
    config,
    auth: new Authenticator(deps.db, config.keyPrefix),
    sessions: new ConsoleSessions(deps.db, config.consoleIdleMinutes),
    rateLimits: new RateLimits(deps.redis ?? null),
    usage: new UsageMeter(deps.db, {
      flushMs: config.usageFlushMs,
      onError: (err) =>
        app.log.warn({ err }, 'could not write the counted API calls (kept for the next try)'),
    }),
    metrics,
    egress,
    secrets,
    acceptQueue: new AcceptQueue(sending, lanesFor(deps.db, config.dbPoolSize)),
    channels: new Channels({
      secrets,
      whatsappGraphUrl: config.whatsappGraphUrl,
      timeoutMs: config.providerTimeoutMs,
      twilioApiUrl: config.twilioApiUrl,
      secretsKey: config.secretsKey,
    }),
    dispatcher: new WebhookDispatcher({
      db: deps.db,
      egress,
      secrets,
      metrics,
      now,
      log: app.log.child({ component: 'webhooks' }),
      settings: {
        concurrency: config.webhookConcurrency,
        endpointConcurrency: config.webhookEndpointConcurrency,
        timeoutMs: config.webhookTimeoutMs,
        pollIntervalMs: config.webhookPollMs,
        retentionDays: config.eventRetentionDays,
      },
    }),
    routes: [],
    voice: undefined as never,
    campaigns: undefined as never,
    media: undefined as never,
    retention: new RetentionPruner({
      db: deps.db,
      config,
      metrics,
      now,
      log: app.log.child({ component: 'retention' }),
    }),
    automation: new AutomationWorker(
      {
        ...sending,
        egress,
        secrets,
        contactCapPerHour: config.automationContactCapPerHour,
        // The actions whose work is a module's above automation (automation/run-actions.ts).
        actions: { ...sequenceActions, ...journeyActions, ...callActions },
      },
      app.log,
      {
        pollIntervalMs: config.automationPollMs,
        scanIntervalMs: config.automationScanMs,
        lanes: config.automationLanes,
      },
    ),
  };
  ctx.voice = new VoiceDialer({
    ...sending,
    paceCampaigns: () => advanceCampaigns(sending),
    channels: ctx.channels,
    log: app.log.child({ component: 'voice' }),
    config,
    inject: async (request) => {
      const answer = await app.inject(request);
      return { statusCode: answer.statusCode, body: answer.body };
    },
  });
  ctx.campaigns = new CampaignSender({
    ...sending,
    log: app.log.child({ component: 'campaigns' }),
    pollMs: config.campaignPollMs,
    lanes: config.campaignLanes,
  });
  ctx.media = new MediaStore({
    db: deps.db,
    findMessage,
    jobs: ctx.jobs,
    channels: ctx.channels,
    now,
    log: app.log.child({ component: 'media' }),
    retentionDays: config.mediaRetentionDays,
  });
  // Attempts in flight finish (or time out) and are recorded before the database closes.
  app.addHook('onClose', async () => {
    await ctx.campaigns.stop();
    await ctx.media.stop();
    await ctx.voice.stop();
    await ctx.dispatcher.stop();
    await ctx.automation.stop();
    await egress.close();
    await ctx.channels.close();
    // Last: the calls of every answered request are written before the database closes.
    await ctx.usage.close();
  });
  app.decorate('ctx', ctx);
  ctx.jobs.define(
    bulkContactsJob({
      db: deps.db,
      events: ctx.events,
      now,
      log: app.log.child({ component: 'bulk' }),
      chunkSize: config.bulkChunkSize,
      expireInSeconds: config.bulkJobExpireSeconds,
    }),
  );
  ctx.jobs.define(
    bulkEnrollJob({
      db: deps.db,
      events: ctx.events,
      now,
      log: app.log.child({ component: 'bulk' }),
      expireInSeconds: config.bulkJobExpireSeconds,
    }),
  );
  ctx.jobs.define(templateReviewJob(ctx));
  ctx.jobs.define(channelRefreshJob(ctx));
  ctx.jobs.define(onboardingResumeJob(ctx));
  ctx.jobs.define(coexistenceSyncJob(ctx));
  ctx.jobs.define(historyImportJob(ctx));
  ctx.jobs.define(ctx.retention.job());
  ctx.jobs.define(templateSyncJob({ ...ctx, log: app.log.child({ component: 'templates' }) }));
  ctx.jobs.define(
    dispatchJob({
      ...ctx,
      log: app.log.child({ component: 'dispatch' }),
      concurrency: config.dispatchConcurrency,
      accountConcurrency: config.dispatchAccountConcurrency,
      providerTimeoutMs: config.providerTimeoutMs,
      retryLimit: config.dispatchRetryLimit,
      retryDelaySeconds: config.dispatchRetryDelaySeconds,
      inDoubtSeconds: config.dispatchInDoubtSeconds,
      expireInSeconds: config.dispatchJobExpireSeconds,
    }),
  );
  ctx.jobs.define(sandboxStatusJob(ctx));
  ctx.jobs.define(releaseJob(ctx));
  ctx.jobs.define(ctx.media.fetchJob());

  app.setValidatorCompiler(validators());
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // An empty body with a JSON content type (curl -H 'Content-Type: application/json' -X POST) means
  // "no body", not malformed JSON.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(
        null,
        secureJson.parse(body as string, undefined, { protoAction: 'remove', constructorAction: 'remove' }),
      );
    } catch {
      done(
        Object.assign(new Error('invalid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }),
        undefined,
      );
    }
  });
  // Synchronous hooks (done, not async) where nothing is awaited: every request runs them.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // During a graceful close, answers to requests still in flight tell keep-alive clients to
  // reconnect elsewhere; otherwise their idle connections would hold the close open.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  installErrorHandling(app, config.publicBaseUrl, new RouteHints(ctx.routes, API_PREFIX));
  await installOpenApi(app, config, ctx.routes);
  installMetrics(app, ctx.metrics);
  // Parses the console's session cookie before the access policy reads it.
  await app.register(cookie);
  installAccessPolicy(app, {
    config,
    plans: PLAN_RULES,
    sql: deps.db,
    auth: ctx.auth,
    sessions: ctx.sessions,
    rateLimits: ctx.rateLimits,
    usage: ctx.usage,
    now: ctx.now,
  });
  installInputGuard(app);
  installIdempotency(app, { db: deps.db, now: ctx.now });

  await app.register(opsRoutes(ctx));
  await app.register(consoleAppRoutes());
  await app.register(
    async (api) => {
      await api.register(accountRoutes(ctx));
      await api.register(walletRoutes(ctx));
      await api.register(partnerRoutes(ctx));
      await api.register(partnerAccountRoutes(ctx));
      await api.register(partnerWhatsAppAppRoutes(ctx));
      await api.register(contactRoutes(ctx));
      await api.register(bulkRoutes(ctx));
      await api.register(webhookRoutes(ctx, ACCOUNT_WEBHOOKS));
      await api.register(webhookRoutes(ctx, PARTNER_WEBHOOKS));
      await api.register(eventRoutes(ctx));
      await api.register(teamRoutes(ctx));
      await api.register(teamsRoutes(ctx));
      await api.register(businessHoursRoutes(ctx));
      await api.register(csatRoutes(ctx));
      await api.register(slaPolicyRoutes(ctx));
      await api.register(consoleAuthRoutes(ctx));
      await api.register(keyRoutes(ctx));
      await api.register(ruleRoutes(ctx));
      await api.register(sequenceRoutes(ctx));
      await api.register(journeyRoutes(ctx));
      await api.register(journeyConfigRoutes(ctx));
      await api.register(wakeRoutes(ctx));
      await api.register(voiceScriptRoutes(ctx));
      await api.register(voiceChannelRoutes(ctx));
      await api.register(callRoutes(ctx));
      await api.register(voiceCampaignRoutes(ctx));
      await api.register(campaignRoutes(ctx));
      await api.register(channelRoutes(ctx));
      await api.register(embeddedSignupRoutes(ctx));
      await api.register(channelProfileRoutes(ctx));
      await api.register(templateRoutes(ctx));
      await api.register(messageRoutes(ctx));
      await api.register(mediaRoutes(ctx));
      await api.register(conversationRoutes(ctx));
      await api.register(conversationAgentRoutes(ctx));
      await api.register(cannedResponseRoutes(ctx));
      await api.register(sandboxRoutes(ctx));
    },
    { prefix: API_PREFIX },
  );
  await app.register(whatsappCallbackRoutes(ctx), { prefix: CALLBACKS_PREFIX });
  await app.register(voiceCallbackRoutes(ctx), { prefix: CALLBACKS_PREFIX });
  return app as unknown as App;
}
