// GET and PUT /account/channel: the account's messaging number.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Channels } from '../../channels/registry.ts';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { disconnectChannel } from './lifecycle.ts';
import { loadChannel } from './repo.ts';
import { ChannelSchema, DisconnectionSchema, PutChannelBody, toChannel } from './schemas.ts';
import { configureChannel } from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface ChannelContext extends KernelContext {
  channels: Channels;
}

export function channelRoutes(ctx: ChannelContext): FastifyPluginAsyncTypebox {
  const tags = ['account'];
  return async (app) => {
    app.get(
      '/account/channel',
      {
        config: { access: 'account' },
        schema: {
          tags,
          operationId: 'getChannel',
          summary: "The account's messaging channel (credentials are never shown)",
          response: { 200: ChannelSchema },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        return toChannel(await loadChannel(ctx.db, accountId), ctx.config.publicBaseUrl, accountId);
      },
    );

    app.put(
      '/account/channel',
      {
        config: { access: 'account', errors: ['FORBIDDEN', 'SERVICE_UNAVAILABLE', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'putChannel',
          summary: "Set the account's messaging channel: the sandbox, or a WhatsApp Cloud API number",
          description:
            'WhatsApp credentials are checked with Meta before anything is saved (400 if refused), then stored encrypted and never shown again. A number is one account’s channel (409 if another account has it). When the account’s partner has set its Meta app (PUT /partner/whatsapp-app), `appSecret` and `verifyToken` may be left out: the partner’s app checks the callbacks. A sandbox key may not change the channel (403). The change applies to messages accepted from now on.',
          body: PutChannelBody,
          response: { 200: ChannelSchema },
        },
      },
      async (request) => {
        if (request.principal?.mode === 'sandbox') {
          throw new ApiError('FORBIDDEN', 'A sandbox key may not change the channel; use a live key.');
        }
        const accountId = accountOf(request).id;
        const channel = await configureChannel(ctx, accountId, request.body);
        // Sends read the provider from the cached account: this process sees the change at once,
        // the others within the cache's second.
        ctx.auth.forgetAccount(accountId);
        return toChannel(channel, ctx.config.publicBaseUrl, accountId);
      },
    );

    app.delete(
      '/account/channel',
      {
        config: { access: 'account', errors: ['FORBIDDEN', 'CONFLICT', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'disconnectChannel',
          summary: 'Disconnect the WhatsApp number: the account goes back to the sandbox, its history stays',
          description:
            'A number Tidings registered (Embedded Signup, mode cloud_api) is deregistered at Meta, so that another provider can register it, and the partner’s app is unsubscribed from the WABA once no other account uses it; a number connected with a token given to PUT is only forgotten. Meta refusing a step (an expired token, say) does not keep the number: `release.metaError` says what Meta said. 503 (nothing changed) when Meta cannot be reached; 409 when no number is connected. Messages, contacts and conversations stay; messages still queued for the number fail and are refunded. `channel.disconnected`.',
          response: { 200: DisconnectionSchema },
        },
      },
      async (request) => {
        if (request.principal?.mode === 'sandbox') {
          throw new ApiError('FORBIDDEN', 'A sandbox key may not change the channel; use a live key.');
        }
        const accountId = accountOf(request).id;
        const { channel, release } = await disconnectChannel(ctx, accountId);
        ctx.auth.forgetAccount(accountId);
        return { channel: toChannel(channel, ctx.config.publicBaseUrl, accountId), release };
      },
    );
  };
}
