// The WhatsApp Cloud API's callbacks:
//   /api/v1/callbacks/whatsapp/{accountId}  one account's URL, checked with its channel's app secret;
//   /api/v1/callbacks/whatsapp              a partner's Meta app's one URL, for all its clients'
//                                           numbers, each entry routed to its number's account.
// On each, GET is Meta's subscription handshake (hub.mode, hub.verify_token, hub.challenge), and
// POST brings status updates of messages and templates, and customers' messages, signed with the
// Meta app's secret.
// Not under /public and without an API key: the provider's signature is the authentication. The
// raw body is kept, since the signature covers the exact bytes. What to do with a callback is
// service.ts's: these routes turn HTTP into a CallbackRequest and the outcome back into HTTP.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { CallbackRequest } from '../../channels/types.ts';
import { MetaWebhookEnvelope } from './envelope-schema.ts';
import type { CallbacksContext } from './service.ts';
import {
  answerAccountHandshake,
  answerAppHandshake,
  receiveAccountCallback,
  receiveAppCallback,
} from './service.ts';

const Params = Type.Object({ accountId: Type.String({ maxLength: 100 }) });

const HandshakeQuery = Type.Object(
  {
    'hub.mode': Type.Optional(Type.String()),
    'hub.verify_token': Type.Optional(Type.String()),
    'hub.challenge': Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

const CallbackAnswer = Type.Object(
  {
    applied: Type.Integer({ description: 'Updates that changed something, and new messages stored.' }),
    dropped: Type.Integer({
      description:
        "Entries for no account here (another number than the account's channel; on the app-level URL, no account of the partner): stored nowhere (logged and counted), still answered 200 so that Meta does not retry them.",
    }),
  },
  { title: 'CallbackAnswer', description: 'Received and applied; the counts say what happened.' },
);

/**
 * A callback's largest body: a coexistence number's history comes in webhooks of thousands of
 * messages (Meta: "store it first, process it asynchronously"), well past the API's 1 MiB.
 */
const CALLBACK_BODY_LIMIT = 8 * 1024 * 1024;

export function callbackRequestOf(request: FastifyRequest): CallbackRequest {
  return {
    rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    headers: request.headers,
    query: (request.query ?? {}) as Record<string, unknown>,
  };
}

const Challenge = Type.String({ description: 'The challenge, echoed.', examples: ['1158201444'] });

export function whatsappCallbackRoutes(ctx: CallbacksContext): FastifyPluginAsyncTypebox {
  const tags = ['callbacks'];
  const rawBody = { schema: MetaWebhookEnvelope, contentType: 'application/json' };

  return async (app) => {
    // The signature is over the bytes as sent: keep them instead of parsing JSON here.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser(['application/json', '*'], { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );

    app.get(
      '/whatsapp',
      {
        config: { errors: ['FORBIDDEN'] },
        schema: {
          tags,
          operationId: 'verifyWhatsAppAppCallback',
          summary: "Meta's callback verification handshake for a partner's app",
          description:
            'Meta calls this when the app-level callback URL is saved in a partner’s Meta app: with `hub.mode=subscribe` and the verify token set in PUT /partner/whatsapp-app, the answer is `hub.challenge` as plain text; otherwise 403.',
          querystring: HandshakeQuery,
          produces: ['text/plain'],
          response: { 200: Challenge },
        },
      },
      async (request, reply) => {
        const challenge = await answerAppHandshake(
          ctx,
          'whatsapp_cloud',
          callbackRequestOf(request),
          request.log,
        );
        return reply.type('text/plain; charset=utf-8').send(challenge);
      },
    );

    app.post(
      '/whatsapp',
      {
        config: { errors: ['INVALID_SIGNATURE', 'INVALID_REQUEST'], rawBody },
        bodyLimit: CALLBACK_BODY_LIMIT,
        schema: {
          tags,
          operationId: 'receiveWhatsAppAppCallback',
          summary:
            "Every client number's callbacks from a partner's Meta app (signed with X-Hub-Signature-256 by the app's secret)",
          description:
            "The same payloads as an account's callback URL, for all the numbers of a partner's Meta app: the signature says which partner's app sent it (PUT /partner/whatsapp-app), and each entry is applied to that partner's account whose channel has its `metadata.phone_number_id` (and WABA id); a template update, which names only the WABA, to each of the partner's accounts on that WABA. An entry for no account of the partner stores nothing, is logged and counted, and is answered 200. A missing or wrong signature is refused with 401 and logged.",
          response: { 200: CallbackAnswer },
        },
      },
      async (request) => receiveAppCallback(ctx, 'whatsapp_cloud', callbackRequestOf(request), request.log),
    );

    app.get(
      '/whatsapp/:accountId',
      {
        config: { errors: ['RESOURCE_NOT_FOUND', 'FORBIDDEN'] },
        schema: {
          tags,
          operationId: 'verifyWhatsAppCallback',
          summary: "Meta's callback verification handshake",
          description:
            'Meta calls this when the callback URL is saved in the app: with `hub.mode=subscribe` and the verify token configured in PUT /account/channel, the answer is `hub.challenge` as plain text; otherwise 403.',
          params: Params,
          querystring: HandshakeQuery,
          produces: ['text/plain'],
          response: { 200: Challenge },
        },
      },
      async (request, reply) => {
        const challenge = await answerAccountHandshake(
          ctx,
          'whatsapp_cloud',
          request.params.accountId,
          callbackRequestOf(request),
          request.log,
        );
        return reply.type('text/plain; charset=utf-8').send(challenge);
      },
    );

    app.post(
      '/whatsapp/:accountId',
      {
        config: { errors: ['RESOURCE_NOT_FOUND', 'INVALID_SIGNATURE', 'INVALID_REQUEST'], rawBody },
        bodyLimit: CALLBACK_BODY_LIMIT,
        schema: {
          tags,
          operationId: 'receiveWhatsAppCallback',
          summary:
            'Status updates and customers’ messages from the WhatsApp Cloud API (signed with X-Hub-Signature-256)',
          description:
            'Message statuses (sent, delivered, read, failed) and template status, quality and category updates, applied and emitted as `message.*`, `template.status_changed`, `template.quality_changed` and `template.category_changed` events; customers’ messages, stored once each (`message.received`, their conversation and customer service window). A missing or wrong signature is refused with 401 and logged; nothing is applied. An entry for another number than the account’s channel (`metadata.phone_number_id`, or the WABA id of a template update) stores nothing, is logged and counted, and is answered 200.',
          params: Params,
          response: { 200: CallbackAnswer },
        },
      },
      async (request) =>
        receiveAccountCallback(
          ctx,
          'whatsapp_cloud',
          request.params.accountId,
          callbackRequestOf(request),
          request.log,
        ),
    );
  };
}
