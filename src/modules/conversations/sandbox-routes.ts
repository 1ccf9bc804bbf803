// POST /sandbox/inbound-messages: a sandbox key plays the customer, so that replies, the customer
// service window and conversations can be exercised without a phone. The message goes through the
// same path as one from the WhatsApp Cloud API (inbound.ts).
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../../app-context.ts';
import { accountOf } from '../../kernel/access.ts';
import { ApiError } from '../../kernel/errors.ts';
import { normalizePhone } from '../../kernel/phones.ts';
import { invalidFields } from '../contacts/fields.ts';
import { MessageSchema } from '../messages/schemas.ts';
import { toMessage } from '../messages/view.ts';
import { receiveInbound } from './inbound.ts';

const InboundBody = Type.Object(
  {
    from: Type.String({
      minLength: 1,
      maxLength: 40,
      description: "The customer's number (E.164; without a country code, the account's country's).",
      examples: ['+14155550123'],
    }),
    text: Type.String({ minLength: 1, maxLength: 4096, description: 'What the customer writes.' }),
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The customer's profile name (a new contact's name).",
      }),
    ),
  },
  { additionalProperties: false },
);

export function sandboxRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/sandbox/inbound-messages',
      {
        config: { access: 'account', errors: ['FORBIDDEN'] },
        schema: {
          tags: ['conversations'],
          operationId: 'simulateInboundMessage',
          summary: 'Sandbox: a customer writes in',
          description:
            'Sandbox keys only (a live key gets 403). Stored as an inbound text message with status `received`, exactly as one from WhatsApp: the contact is made if the number is new, the customer service window opens for 24 hours, the contact’s conversation continues or opens, and `message.received` is emitted.',
          body: InboundBody,
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
        const now = ctx.now();
        const [received] = await receiveInbound(
          ctx,
          { accountId: account.id, provider: 'sandbox', sandbox: true },
          [
            {
              providerMessageId: `sandbox.in.${randomBytes(16).toString('hex')}`,
              from,
              profileName: request.body.name ?? null,
              sentAt: now,
              type: 'text',
              content: { text: { body: request.body.text } },
              replyTo: null,
            },
          ],
        );
        reply.status(201);
        return toMessage(received!.message);
      },
    );
  };
}
