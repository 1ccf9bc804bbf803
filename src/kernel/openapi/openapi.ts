// The OpenAPI 3.1 document is generated from the route schemas (never written by hand) and served at
// /api/v1/public/openapi.json, with a docs UI at /docs. An onRoute hook completes every route's
// schema with what its access level implies: security, the X-Account-Id header, and every error
// response it can produce (its access level's, its input's, and the codes of its own logic that it
// lists in `config.errors`), so no route can forget to document them.
import swagger from '@fastify/swagger';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import type { Access } from '../access/access.ts';
import type { RouteInfo } from '../context.ts';
import type { ErrorCode } from '../http/errors.ts';
import { ErrorBody, errorResponses } from '../http/schemas.ts';
import { EVENT_TYPES } from '../outbox/events.ts';
import { installDocsUi } from './docs-ui.ts';
import { finishDocument } from './openapi-document.ts';
import { introduction } from './openapi-intro.ts';

/** What each webhook delivery looks like, for the document's OpenAPI 3.1 `webhooks` section. */
const EVENT_DELIVERY = {
  post: {
    operationId: 'receiveEvent',
    // Tagged, so that the docs UI shows it inside the one Webhooks group.
    tags: ['webhooks'],
    summary: 'An event, as POSTed to your webhook URL',
    security: [],
    description:
      'Verify it with the `standardwebhooks` package and the secret shown when the webhook was created. Delivered at least once; `webhook-id` is the event id, the same on every retry. Answer 2xx within 10 s; 410 disables the webhook.',
    parameters: [
      { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' } },
      {
        name: 'webhook-timestamp',
        in: 'header',
        required: true,
        schema: { type: 'string' },
        description: 'Seconds since the epoch when this attempt was signed.',
      },
      {
        name: 'webhook-signature',
        in: 'header',
        required: true,
        schema: { type: 'string' },
        description: 'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.',
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['id', 'type', 'createdAt', 'accountId', 'data'],
            properties: {
              id: { type: 'string', example: 'evt_01jv…' },
              type: { type: 'string', enum: [...EVENT_TYPES] },
              createdAt: { type: 'string', format: 'date-time' },
              accountId: { type: ['string', 'null'] },
              data: {
                type: 'object',
                additionalProperties: true,
                description:
                  'The resource as the API shows it; a status change adds `previousStatus`, `template.quality_changed` adds `previousQualityScore`, `template.category_changed` adds `previousCategory` and `upcoming` (`{category, at}` when Meta only announces a recategorisation, the category unchanged; else null).',
              },
              causedBy: {
                type: 'object',
                description:
                  'Present when automation caused the event: the rule (sequence, journey), its run, and how many automation runs led to it.',
                required: ['kind', 'id', 'runId', 'depth'],
                properties: {
                  kind: { type: 'string', enum: ['rule', 'sequence', 'journey'] },
                  id: { type: 'string' },
                  runId: { type: 'string' },
                  depth: { type: 'integer', minimum: 1 },
                },
              },
            },
          },
        },
      },
    },
    responses: { '200': { description: 'Any 2xx answer acknowledges the delivery.' } },
  },
};

export const OPENAPI_PATH = '/api/v1/public/openapi.json';

/**
 * The docs UI: it opens on the document's introduction (a quickstart), with the account key as the
 * authentication to fill in, and without Scalar's hosted-service buttons (its API client upsell,
 * AI agent, MCP, developer toolbar with "deploy"), which mean nothing on a self-hosted server.
 */
export const DOCS_UI = {
  url: OPENAPI_PATH,
  title: 'Tidings API',
  authentication: { preferredSecurityScheme: 'ApiKey' },
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  telemetry: false,
} as const;

const COMMON: ErrorCode[] = ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
const WITH_BODY: ErrorCode[] = ['INVALID_REQUEST', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
const BY_ACCESS: Record<Access, ErrorCode[]> = {
  public: [],
  bootstrap: ['INVALID_BOOTSTRAP_TOKEN'],
  // FORBIDDEN: a change without the session's CSRF token, or from another site's Origin.
  session: ['INVALID_SESSION', 'FORBIDDEN'],
  partner: ['INVALID_API_KEY', 'INVALID_SESSION', 'FORBIDDEN', 'RATE_LIMITED'],
  account: [
    'INVALID_REQUEST',
    'INVALID_API_KEY',
    'INVALID_SESSION',
    'PLAN_UPGRADE_REQUIRED',
    'FORBIDDEN',
    'ACCOUNT_SUSPENDED',
    'RESOURCE_NOT_FOUND',
    'RATE_LIMITED',
    'QUOTA_EXCEEDED',
  ],
};

const SECURITY: Record<Access, Record<string, string[]>[]> = {
  public: [],
  bootstrap: [{ BootstrapToken: [] }],
  session: [{ ConsoleSession: [] }],
  partner: [{ PartnerKey: [] }, { ConsoleSession: [] }],
  account: [{ ApiKey: [] }, { PartnerKey: [] }, { ConsoleSession: [] }],
};

function completeRoute(route: RouteOptions, table: RouteInfo[]): void {
  route.schema ??= {};
  const schema = route.schema as Record<string, unknown>;
  const access = route.config?.access ?? 'public';
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  for (const method of methods) {
    if (method !== 'HEAD')
      table.push({
        method,
        url: route.url,
        access,
        documented: !schema.hide,
        agents: Boolean(route.config?.agents),
      });
  }
  if (schema.hide) return;
  // 413 and 415 come from reading a body: only an operation that takes one can answer them (a body
  // sent where none is taken is a 400, input-guard.ts).
  const hasBody = Boolean(schema.body || route.config?.rawBody);
  const idempotent = methods.includes('POST') && (access === 'account' || access === 'partner');
  const codes: ErrorCode[] = [
    ...(idempotent ? (['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED'] as ErrorCode[]) : []),
    ...BY_ACCESS[access],
    ...(hasBody ? WITH_BODY : []),
    // Every operation refuses what it does not take: unknown query parameters, a body where none is
    // taken (input-guard.ts).
    'INVALID_REQUEST',
    ...COMMON,
  ];
  const own = route.config?.errors ?? [];
  const notes = {
    INVALID_REQUEST: [schema.querystring ? UNKNOWN_QUERY : '', hasBody ? '' : NO_BODY].join(' ').trim(),
  };
  schema.response = {
    ...((schema.response as object) ?? {}),
    ...errorResponses([...own, ...codes], notes),
  };
  schema.security = SECURITY[access];
  if (route.config?.agents) {
    const note = 'A console agent’s session may call this operation.';
    schema.description = schema.description ? `${schema.description}\n\n${note}` : note;
  }
  // A change made with a console session carries its CSRF token (console-principal.ts).
  const csrf =
    (access === 'account' || access === 'partner' || access === 'session') &&
    methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE');
  if (!schema.headers && (access === 'account' || idempotent || csrf)) {
    schema.headers = Type.Object({
      ...(access === 'account' ? { 'x-account-id': ACCOUNT_HEADER } : {}),
      ...(idempotent ? { 'idempotency-key': IDEMPOTENCY_HEADER } : {}),
      ...(csrf ? { 'x-csrf-token': CSRF_HEADER } : {}),
    });
  }
}

const UNKNOWN_QUERY =
  'INVALID_REQUEST also answers a query parameter this operation does not list: unknown parameters are refused, not ignored.';

const NO_BODY =
  'This operation takes no body: a body sent to it (other than an empty one or `{}`) is refused with INVALID_REQUEST, not ignored.';

const ACCOUNT_HEADER = Type.Optional(
  Type.String({ description: 'The account to act on: required with a partner key, optional otherwise.' }),
);

const CSRF_HEADER = Type.Optional(
  Type.String({
    description:
      'With a console session (the `tidings_session` cookie) instead of an API key: the session’s `csrfToken`, required on every change (403 otherwise).',
  }),
);

const IDEMPOTENCY_HEADER = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 255,
    description:
      'Makes the request safe to retry: for 24 hours the same key with the same request replays the first answer (with `Idempotent-Replayed: true`) and has no second effect.',
  }),
);

function withoutDiscriminators(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDiscriminators);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'discriminator')
      .map(([key, v]) => [key, withoutDiscriminators(v)]),
  );
}

export async function installOpenApi(
  app: FastifyInstance,
  config: Config,
  table: RouteInfo[],
): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tidings API',
        version: '1.0.0',
        description: introduction(config.publicBaseUrl),
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: {
          ApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Api-Key',
            description: 'tdg_live_… or tdg_sandbox_… (sandbox keys issued as tdg_test_… keep working)',
          },
          PartnerKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'tdg_partner_…' },
          BootstrapToken: { type: 'http', scheme: 'bearer', description: 'The one-time bootstrap token.' },
          ConsoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'tidings_session',
            description:
              'A console session (POST /console/sessions), sent without X-Api-Key; every change also needs X-CSRF-Token (docs/console.md).',
          },
        },
      },
      tags: [
        { name: 'account', description: 'The account, its usage and wallet.' },
        {
          name: 'team',
          description: 'Team members: the people conversations are assigned to, and their availability.',
        },
        {
          name: 'canned-responses',
          description:
            'Saved replies the inbox offers on `/shortcut`: Liquid over the customer and the conversation, rendered for them before they are sent.',
        },
        {
          name: 'rules',
          description:
            'Automation (Pro plan and above): rules run actions on events, in order, with a run record of every evaluation.',
        },
        {
          name: 'sequences',
          description:
            'Automation (Pro plan and above): timed steps sent to enrolled contacts, each enrollment step by step.',
        },
        {
          name: 'journeys',
          description:
            'Automation (Pro plan and above): graphs of steps a contact is taken through, checked when published, each run step by step, with per-node statistics.',
        },
        {
          name: 'journey-configs',
          description:
            'Automation (Pro plan and above): appointment reminders, welcome messages and re-engagement, each compiled into a read-only journey whose runs are ordinary journey runs.',
        },
        {
          name: 'voice',
          description:
            'Voice (Business plan and above): scripts (text-to-speech or an IVR menu) published as TwiML.',
        },
        {
          name: 'campaigns',
          description:
            'Broadcasts of an approved template to an audience (a tag, tags, contact ids or conditions), estimated, paced and sent exactly once per contact, with per-recipient results.',
        },
        {
          name: 'media',
          description:
            'Files to send by id (uploaded as multipart/form-data, kept in the database, given to Meta on a live channel), per kind within WhatsApp’s types and limits.',
        },
        {
          name: 'events',
          description: 'The account’s events: listed, read, and streamed live (server-sent events).',
        },
        { name: 'partner', description: 'Partner provisioning of client sub-accounts.' },
        {
          name: 'console',
          description:
            'Signing in to the console: logins, sessions (a cookie and a CSRF token), invitations, and the account’s own keys.',
        },
        {
          name: 'webhooks',
          description:
            'Signed event deliveries to your URLs (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). The body of each delivery is described under `webhooks` in this document.',
        },
        {
          name: 'contacts',
          description: 'The people an account messages: phone, name, email, tags and attributes.',
        },
        {
          name: 'bulk',
          description:
            'Asynchronous batches: accepted at once (202), processed in the background, polled by job id.',
        },
        {
          name: 'templates',
          description:
            "Message templates in the WhatsApp Cloud API's own JSON: created as DRAFT and checked against Meta's rules, submitted for review (the sandbox reviews by Meta's rules after `sandbox.reviewAfterMs`), then APPROVED or REJECTED with Meta's reason; later PAUSED or DISABLED by the provider. Only APPROVED templates can be sent. Status changes arrive as `template.status_changed`; Meta's quality ratings and recategorisations as `template.quality_changed` and `template.category_changed`. `POST /templates/sync` brings in the WhatsApp Business Account's templates from Meta (also hourly). NAMED templates take `parameters` by name; a send may set quick-reply payloads (`buttonPayloads`).",
        },
        {
          name: 'messages',
          description:
            'Sending messages (approved templates anywhere; text, media and interactive inside the 24-hour customer service window), their statuses and prices.',
        },
        {
          name: 'callbacks',
          description:
            "Where providers report back: the WhatsApp Cloud API's signed callbacks for each account. Not for API clients.",
        },
        {
          name: 'conversations',
          description:
            'Threads with each contact: their messages, assignment to a team member, and the 24-hour customer service window.',
        },
        {
          name: 'sandbox',
          description:
            'Sandbox keys only: make a customer reply to your sandbox number, to try inbound flows without a phone.',
        },
        { name: 'operations', description: 'Health, readiness and metrics.' },
      ],
      // The plugin's types predate OpenAPI 3.1 `webhooks`; the document itself carries them.
      webhooks: { event: EVENT_DELIVERY } as never,
    },
    // A body a route reads as bytes is documented from its config (access.ts, `rawBody`).
    // A body whose handler needs one of its optional fields is documented as not empty.
    transform: ({ schema, url, route }) => {
      const raw = route.config?.rawBody;
      if (raw)
        return { schema: { ...schema, body: raw.schema, consumes: [raw.contentType] } as typeof schema, url };
      const body = (schema as { body?: object } | undefined)?.body;
      if (route.config?.bodyRequired && body)
        return { schema: { ...schema, body: { ...body, minProperties: 1 } }, url };
      return { schema, url };
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    // A `discriminator` tells our validator which branch of a oneOf to check (an action's `type`);
    // OpenAPI's own discriminator selects named schemas only, and each branch already says its type
    // as a constant, so the document leaves it out.
    transformObject: (document) =>
      finishDocument(
        withoutDiscriminators(
          'openapiObject' in document ? document.openapiObject : document.swaggerObject,
        ) as Record<string, unknown>,
      ),
  });
  app.addHook('onRoute', (route) => completeRoute(route, table));
  installDocsUi(app, DOCS_UI);
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
}
