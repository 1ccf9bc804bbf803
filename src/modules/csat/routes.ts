// GET|PUT /account/csat: the satisfaction survey sent when a conversation closes (service.ts).
// Admins set it; agents read it (the inbox shows the answers).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { CsatSchema, PutCsatBody } from './schemas.ts';
import { getCsat, putCsat } from './service.ts';

export function csatRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['account'];
  return async (app) => {
    app.get(
      '/account/csat',
      {
        config: { access: 'account', agents: true },
        schema: {
          tags,
          operationId: 'getCsat',
          summary: 'The satisfaction survey sent when a conversation closes',
          description: 'Never set (or turned off): `enabled: false`, no survey.',
          response: { 200: CsatSchema },
        },
      },
      async (request) => getCsat(ctx, accountOf(request).id),
    );
    app.put(
      '/account/csat',
      {
        config: { access: 'account' },
        schema: {
          tags,
          operationId: 'putCsat',
          summary: 'Set the satisfaction survey',
          description:
            'Each close sends the survey once, inside the customer service window, never to a contact who opted out (`marketingOptOut: true`); the answer (and a comment, when asked for) is stored on the conversation (`csat`) and told by `csat.received`. `{"enabled": false}` turns it off.',
          body: PutCsatBody,
          response: { 200: CsatSchema },
        },
      },
      async (request) => putCsat(ctx, accountOf(request).id, request.body),
    );
  };
}
