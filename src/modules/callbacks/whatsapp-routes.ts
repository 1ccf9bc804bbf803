// The WhatsApp Cloud API's callbacks for one account, /api/v1/callbacks/whatsapp/{accountId}:
//   GET  Meta's subscription handshake (hub.mode, hub.verify_token, hub.challenge);
//   POST status updates of messages and templates, and customers' messages, signed with the Meta
//        app's secret.
// Not under /public and without an API key: the provider's signature is the authentication. The
// raw body is kept, since the signature covers the exact bytes. Everything a POST reports is
// applied in one transaction, so Meta's retry of a callback that failed half-way repeats nothing
// (statuses only move forward, and a repeated one is moot).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.ts';
import {
  parseCallback,
  readCallbackBody,
  verifyCallbackSignature,
  verifyHandshake,
} from '../../channels/whatsapp-cloud/callbacks.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { loadChannel } from '../channel/repo.ts';
import type { ChannelConfig } from '../channel/settings.ts';
import { applyProviderUpdates } from './apply.ts';

export const CALLBACKS_PREFIX = '/api/v1/callbacks';

const Params = Type.Object({ accountId: Type.String({ maxLength: 100 }) });

export function whatsappCallbackRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const tags = ['callbacks'];

  /** The account's WhatsApp channel, or 404: the URL names an account not set up for WhatsApp. */
  async function channelOf(accountId: string): Promise<ChannelConfig> {
    const channel = /^acc_[0-9a-z]{26}$/.test(accountId) ? await loadChannel(ctx.db, accountId) : null;
    if (channel?.provider !== 'whatsapp_cloud' || !channel.secretsSealed) {
      throw notFound('WhatsApp channel for this account');
    }
    return channel;
  }

  return async (app) => {
    // The signature is over the bytes as sent: keep them instead of parsing JSON here.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser(['application/json', '*'], { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
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
          querystring: Type.Object(
            {
              'hub.mode': Type.Optional(Type.String()),
              'hub.verify_token': Type.Optional(Type.String()),
              'hub.challenge': Type.Optional(Type.String()),
            },
            { additionalProperties: true },
          ),
          response: { 200: Type.String({ description: 'The challenge, echoed.' }) },
        },
      },
      async (request, reply) => {
        const channel = await channelOf(request.params.accountId);
        const challenge = verifyHandshake(request.query, ctx.channels.secretsOf(channel).verifyToken);
        if (challenge === null) {
          request.log.warn(
            { accountId: request.params.accountId },
            'WhatsApp callback handshake refused: wrong verify token',
          );
          throw new ApiError(
            'FORBIDDEN',
            'The verify token does not match the one configured for this channel.',
          );
        }
        return reply.type('text/plain; charset=utf-8').send(challenge);
      },
    );

    app.post(
      '/whatsapp/:accountId',
      {
        config: { errors: ['RESOURCE_NOT_FOUND', 'INVALID_SIGNATURE', 'INVALID_REQUEST'] },
        schema: {
          tags,
          operationId: 'receiveWhatsAppCallback',
          summary:
            'Status updates and customers’ messages from the WhatsApp Cloud API (signed with X-Hub-Signature-256)',
          description:
            'Message statuses (sent, delivered, read, failed) and template status updates, applied and emitted as `message.*` and `template.status_changed` events; customers’ messages, stored once each (`message.received`, their conversation and customer service window). A missing or wrong signature is refused with 401 and logged; nothing is applied.',
          params: Params,
          response: {
            200: Type.Object({
              applied: Type.Integer({
                description: 'Updates that changed something, and new messages stored.',
              }),
            }),
          },
        },
      },
      async (request) => {
        const { accountId } = request.params;
        const channel = await channelOf(accountId);
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const header = request.headers['x-hub-signature-256'];
        const signature = Array.isArray(header) ? header[0] : header;
        if (!verifyCallbackSignature(raw, signature, ctx.channels.secretsOf(channel).appSecret)) {
          request.log.warn(
            { accountId, reason: signature ? 'mismatch' : 'missing', bytes: raw.length },
            'WhatsApp callback refused: bad X-Hub-Signature-256',
          );
          throw new ApiError('INVALID_SIGNATURE');
        }
        let payload: unknown;
        try {
          payload = readCallbackBody(raw);
        } catch {
          throw new ApiError('INVALID_REQUEST', 'The callback body is not valid JSON.', {
            details: [{ field: 'body', issue: 'is not valid JSON' }],
          });
        }
        const updates = parseCallback(payload);
        for (const u of updates) {
          if (u.kind === 'unknown')
            request.log.info({ accountId, field: u.field }, 'WhatsApp callback field ignored');
        }
        return {
          applied: await applyProviderUpdates(ctx, { accountId, provider: 'whatsapp_cloud' }, updates),
        };
      },
    );
  };
}
