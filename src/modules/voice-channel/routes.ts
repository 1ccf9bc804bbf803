// GET and PUT /account/voice-channel: the provider that carries the account's calls.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Channels } from '../../channels/registry.ts';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { loadVoiceChannel } from './repo.ts';
import { PutVoiceChannelBody, toVoiceChannel, VoiceChannelSchema } from './schemas.ts';
import { configureVoiceChannel, type VoiceChannelInput } from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface VoiceChannelContext extends KernelContext {
  channels: Channels;
}

export function voiceChannelRoutes(ctx: VoiceChannelContext): FastifyPluginAsyncTypebox {
  const tags = ['voice'];
  const account = { access: 'account', feature: 'voice' } as const;
  return async (app) => {
    app.get(
      '/account/voice-channel',
      {
        config: account,
        schema: {
          tags,
          operationId: 'getVoiceChannel',
          summary: "The account's voice provider (the auth token is never shown)",
          response: { 200: VoiceChannelSchema },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        return toVoiceChannel(await loadVoiceChannel(ctx.db, accountId), ctx.config.publicBaseUrl, accountId);
      },
    );

    app.put(
      '/account/voice-channel',
      {
        config: { ...account, errors: ['FORBIDDEN', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'putVoiceChannel',
          summary: "Set the account's voice provider: the sandbox, or a Twilio account",
          description:
            'Twilio credentials are checked with Twilio before anything is saved (400 naming the field Twilio refused: `authToken`, `accountSid`, or `from` when it is not a number of the account), then the auth token is stored encrypted and never shown again. A sandbox key may not change it (403). Calls already made keep their provider.',
          body: PutVoiceChannelBody,
          response: { 200: VoiceChannelSchema },
        },
      },
      async (request) => {
        if (request.principal?.mode === 'sandbox') {
          throw new ApiError('FORBIDDEN', 'A sandbox key may not change the voice channel; use a live key.');
        }
        const accountId = accountOf(request).id;
        const channel = await configureVoiceChannel(ctx, accountId, request.body as VoiceChannelInput);
        return toVoiceChannel(channel, ctx.config.publicBaseUrl, accountId);
      },
    );
  };
}
