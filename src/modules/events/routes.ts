// /events: the account's events as a resource (the envelopes its webhooks receive), listed, read
// one by one, and streamed as server-sent events.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import { KEY_CACHE_MS } from '../../kernel/access/auth.ts';
import { SESSION_CACHE_MS } from '../../kernel/access/console-principal.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { idAt } from '../../kernel/values/ids.ts';
import { type StreamCaller, StreamHub } from './hub.ts';
import { listEvents } from './repo.ts';
import {
  EventIdParams,
  EventListQuery,
  EventSchema,
  StreamHeaders,
  StreamQuery,
  toEvent,
} from './schemas.ts';
import { checkFilter, getEvent, streamFilters, streamStart } from './service.ts';
import { EventStream, type StreamTarget } from './stream.ts';
import { EventVisibility, routeLookup } from './visibility.ts';

const STREAM_FORMAT = `A \`text/event-stream\` (server-sent events) that stays open. Each event is one message:

\`\`\`
id: evt_01jv…
event: message.delivered
data: {"id":"evt_01jv…","type":"message.delivered","createdAt":"…","accountId":"acc_…","data":{…}}
\`\`\`

\`data\` is the event envelope exactly as webhooks deliver it (one line of JSON). A line starting with \`:\` is a comment (\`: keep-alive\`, sent when there is nothing else to send). Reconnect with the last \`id\` received as the \`Last-Event-ID\` header (browsers' EventSource does it) to get what happened meanwhile and nothing twice.`;

// visibility.ts: the rule these describe.
const WHO_SEES =
  'A caller sees the events whose resources its own routes show it: API keys (live and sandbox), partner keys and admins see every event; a console agent sees those of the inbox (messages, conversations, contacts, templates, contact imports), not the wallet’s, calls’, campaigns’, the channel’s or the account’s status, whose routes answer it 403.';

const STREAM_ENDS =
  'The stream ends within a second of its caller losing access (its key revoked or expired, its console session signed out, expired or its member removed, the account suspended), whichever server process made the change, and sends nothing created after it; the reconnection gets the refusal.';

export function eventRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['events'];
  const retention = `Events are kept ${ctx.config.eventRetentionDays} days (\`TIDINGS_EVENT_RETENTION_DAYS\`); older ones are gone.`;

  return async (app) => {
    const hub = new StreamHub({ auth: ctx.auth, sessions: ctx.sessions, now: ctx.now, log: app.log });
    // Resolved against the route table, complete once the app is ready.
    const visibility = new EventVisibility(routeLookup(ctx.routes, app.prefix));
    app.addHook('onReady', async () => visibility.check());
    // An open stream would hold a graceful close (and a server's shutdown) forever.
    app.addHook('preClose', async () => hub.closeAll());

    app.get(
      '/events',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'listEvents',
          summary: 'List the account’s events, newest first',
          description: `The events of the account, each the envelope its webhooks receive. ${retention} ${WHO_SEES} The filter is applied before the page is cut, so every page but the last is full.`,
          querystring: EventListQuery,
          response: { 200: listOf(EventSchema) },
        },
      },
      async (request) => {
        const { type, since, until } = request.query;
        if (type !== undefined) checkFilter('type', type);
        const page = readPage(request.query);
        const rows = await listEvents(
          ctx.db,
          accountOf(request).id,
          page,
          visibility.of(request.principal!),
          {
            type: type === '*' ? undefined : type,
            fromId: since ? idAt('event', new Date(since)) : undefined,
            beforeId: until ? idAt('event', new Date(until)) : undefined,
          },
        );
        return pageOf(rows, page, toEvent);
      },
    );

    app.get(
      '/events/stream',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'streamEvents',
          summary: 'Receive the account’s events as they happen (server-sent events)',
          description: `A long-lived stream of the account's events, the one \`tidings webhooks listen\` uses. Without \`Last-Event-ID\` or \`since\` it starts now; with one, it first sends what came after it (oldest first), then goes live. ${retention} An event is sent about a second after it happens. The stream counts as one request against the rate limits. ${WHO_SEES} ${STREAM_ENDS}`,
          querystring: StreamQuery,
          headers: StreamHeaders,
          response: {
            200: {
              description: STREAM_FORMAT,
              content: { 'text/event-stream': { schema: Type.String({ description: STREAM_FORMAT }) } },
            },
          },
        },
      },
      async (request, reply) => {
        const filters = streamFilters(request.query.types);
        const lastEventId = request.headers['last-event-id'];
        const start = streamStart(
          typeof lastEventId === 'string' ? lastEventId : undefined,
          request.query.since,
        );
        const account = accountOf(request);
        const principal = request.principal!;
        // The key or session that admitted the request was read up to a cache lifetime ago: until
        // the hub's first check, nothing newer than that is sent.
        const verified = { at: Date.now() - Math.max(KEY_CACHE_MS, SESSION_CACHE_MS) };
        const caller: StreamCaller = principal.console
          ? {
              kind: 'session',
              sessionId: principal.console.sessionId,
              role: principal.console.role,
              accountId: account.id,
            }
          : { kind: 'key', keyId: principal.keyId, accountId: account.id };

        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          // Proxies such as nginx would otherwise buffer the stream.
          'x-accel-buffering': 'no',
        });
        // How long EventSource waits before reconnecting, and a first line so headers go out now.
        res.write('retry: 2000\n: connected\n\n');
        const target: StreamTarget = {
          write: (chunk) => !res.destroyed && res.write(chunk),
          drained: () =>
            new Promise<void>((resolve) => {
              if (res.destroyed) return resolve();
              const done = () => {
                res.off('drain', done);
                res.off('close', done);
                resolve();
              };
              res.on('drain', done);
              res.on('close', done);
            }),
          end: () => {
            if (!res.destroyed && !res.writableEnded) res.end();
          },
        };
        // light-my-request (app.inject) cannot stream: it gets what is there and the end.
        const once = (request.raw as { isLightMyRequest?: boolean }).isLightMyRequest === true;
        const stream = new EventStream({
          db: ctx.db,
          accountId: account.id,
          filters,
          visible: visibility.of(principal),
          start,
          target,
          settings: { pollMs: ctx.config.eventStreamPollMs, heartbeatMs: ctx.config.eventStreamHeartbeatMs },
          log: request.log,
          once,
          verified: once ? undefined : verified,
        });
        hub.add(stream, once ? undefined : { caller, verified });
        // The client went away (or the server is closing its socket).
        res.on('close', () => stream.stop());
      },
    );

    app.get(
      '/events/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'getEvent',
          summary: 'Get an event',
          description: `${retention} ${WHO_SEES} An event the caller may not see is not found (404), like another account’s.`,
          params: EventIdParams,
          response: { 200: EventSchema },
        },
      },
      async (request) =>
        toEvent(
          await getEvent(ctx.db, accountOf(request).id, request.params.id, visibility.of(request.principal!)),
        ),
    );
  };
}
