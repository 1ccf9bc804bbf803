// GET and PATCH /account/channel/profile (service.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOf } from '../../kernel/access/access.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { PatchProfileBody, ProfileSchema } from './schemas.ts';
import { changeProfile, type ProfileServices, readProfile } from './service.ts';

export function channelProfileRoutes(ctx: ProfileServices): FastifyPluginAsyncTypebox {
  const tags = ['account'];
  return async (app) => {
    app.get(
      '/account/channel/profile',
      {
        config: { access: 'account', errors: ['CONFLICT', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'getChannelProfile',
          summary: 'The business profile customers see for the number (read from Meta)',
          response: { 200: ProfileSchema },
        },
      },
      async (request) => readProfile(ctx, accountOf(request).id),
    );

    app.patch(
      '/account/channel/profile',
      {
        config: { access: 'account', errors: ['FORBIDDEN', 'CONFLICT', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'updateChannelProfile',
          summary:
            'Change the business profile: about, address, description, email, websites, vertical, photo',
          description:
            "Changed at Meta (the photo, an image uploaded with POST /media, through Meta's resumable upload), then read back. Meta's refusals: 400 with Meta's code and message; 409 when the channel's token is refused, when the photo needs the Meta app's id, or for a coexistence number (its profile is the WhatsApp Business app's); 503 when Meta cannot be reached. On the sandbox channel the profile is kept by Tidings. A sandbox key may not change it (403).",
          body: PatchProfileBody,
          response: { 200: ProfileSchema },
        },
      },
      async (request) => {
        if (request.principal?.mode === 'sandbox') {
          throw new ApiError(
            'FORBIDDEN',
            'A sandbox key may not change the business profile; use a live key.',
          );
        }
        return changeProfile(ctx, accountOf(request).id, request.body);
      },
    );
  };
}
