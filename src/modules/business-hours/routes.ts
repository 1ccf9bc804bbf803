// GET|PUT /account/business-hours: when the account answers, and what it tells customers who write
// outside them (service.ts). Admins set them; agents read them (the inbox shows whether it is open).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { BusinessHoursSchema, PutBusinessHoursBody } from './schemas.ts';
import { getHours, putHours } from './service.ts';

export function businessHoursRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['account'];
  return async (app) => {
    app.get(
      '/account/business-hours',
      {
        config: { access: 'account', agents: true },
        schema: {
          tags,
          operationId: 'getBusinessHours',
          summary: 'The account’s business hours, its away message and greeting',
          description: 'Never set (or turned off): `enabled: false`, always open, no replies.',
          response: { 200: BusinessHoursSchema },
        },
      },
      async (request) => getHours(ctx, accountOf(request).id),
    );

    app.put(
      '/account/business-hours',
      {
        config: { access: 'account' },
        schema: {
          tags,
          operationId: 'putBusinessHours',
          summary: 'Set the business hours, the away message and the greeting',
          description:
            'Closed, a customer who writes gets the away message, at most once per conversation per `awayEvery`; open, the first customer message of a conversation gets the greeting. Both are sent and charged as any message (a template outside the window). `{"enabled": false}` turns them off.',
          body: PutBusinessHoursBody,
          response: { 200: BusinessHoursSchema },
        },
      },
      async (request) => putHours(ctx, accountOf(request).id, request.body),
    );
  };
}
