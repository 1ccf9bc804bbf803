// POST /sandbox/inbound-messages: a sandbox key plays the customer, so that replies, the customer
// service window, conversations (and, on them, rules and journeys) can be exercised without a
// phone. Every kind of message a customer can send (sandbox-inbound.ts) goes through the same path
// as one from the WhatsApp Cloud API (inbound.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import { invalidFields } from '../contacts/index.ts';
import { MessageSchema, toMessage } from '../messages/index.ts';
import { receiveInbound } from './inbound.ts';
import { SandboxInboundBody, simulatedInbound } from './sandbox-inbound.ts';

export function sandboxRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/sandbox/inbound-messages',
      {
        config: { access: 'account', errors: ['FORBIDDEN', 'RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags: ['conversations'],
          operationId: 'simulateInboundMessage',
          summary: 'Sandbox: a customer writes in',
          description:
            'Sandbox keys only (a live key gets 403). Whatever a customer can send: a text, a tap on a reply button or list row of one of your interactive messages (`interactive` with `replyTo`), a tap on a template’s quick-reply button (`button` with `replyTo`), media, a location, contact cards, or a reaction to one of your messages. Stored and emitted exactly as the same message from WhatsApp: the contact is made if the number is new, the customer service window opens for 24 hours, the contact’s conversation continues or opens, and `message.received` is emitted. The message answered (or reacted to) must be yours, sent to this number (404 for another account’s id), and already sent (409).',
          body: SandboxInboundBody,
          response: { 201: MessageSchema },
        },
      },
      async (request, reply) => {
        if (request.principal!.mode !== 'sandbox') {
          throw new ApiError('FORBIDDEN', 'Only a sandbox key can simulate inbound messages.');
        }
        const account = accountOf(request);
        const from = normalizePhone(request.body.from, account.countryCode);
        if (!from) throw invalidFields([{ field: 'from', issue: 'is not a valid phone number' }]);
        const message = await simulatedInbound(ctx.db, account.id, from, request.body, ctx.now());
        const [received] = await receiveInbound(
          ctx,
          { accountId: account.id, provider: 'sandbox', sandbox: true },
          [message],
        );
        reply.status(201);
        return toMessage(received!.message);
      },
    );
  };
}
