// POST /sandbox/inbound-messages: a sandbox key plays the customer, so that replies, the customer
// service window, conversations (and, on them, rules and journeys) can be exercised without a
// phone. Every kind of message a customer can send (sandbox-inbound.ts) goes through the same path
// as one from the WhatsApp Cloud API (inbound.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sandboxUserId, sandboxUsername } from '../../channels/sandbox/user-ids.ts';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError, notFound } from '../../kernel/http/errors.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import {
  applyIdentityChange,
  ContactSchema,
  findCustomer,
  invalidFields,
  toContact,
} from '../contacts/index.ts';
import { MessageSchema, toMessage } from '../messages/index.ts';
import { receiveInbound } from './inbound.ts';
import { type SandboxCustomer, SandboxInboundBody, simulatedInbound } from './sandbox-inbound.ts';

/**
 * The customer a simulated message comes from: its number (normalised), its user id (the sandbox's
 * for the number, unless given), its username; a withholding test number's message has no number.
 */
function sandboxCustomer(
  account: { id: string; countryCode: string },
  body: { from?: string; whatsappUserId?: string; username?: string },
): SandboxCustomer {
  if (body.from === undefined && body.whatsappUserId === undefined)
    throw invalidFields([{ field: 'from', issue: 'name the customer by from, whatsappUserId, or both' }]);
  const phone = body.from === undefined ? null : normalizePhone(body.from, account.countryCode);
  if (body.from !== undefined && !phone)
    throw invalidFields([{ field: 'from', issue: 'is not a valid phone number' }]);
  const userId = body.whatsappUserId ?? (phone ? sandboxUserId(account.id, phone) : null);
  const withheldAs = phone ? sandboxUsername(phone) : null;
  return {
    phone: withheldAs ? null : phone,
    userId,
    username: body.username ?? withheldAs,
    addresses: [phone, userId].filter((a): a is string => a !== null),
  };
}

const NumberChangeBody = Type.Object(
  {
    from: Type.String({ minLength: 1, maxLength: 40, description: 'The number the customer had.' }),
    to: Type.String({ minLength: 1, maxLength: 40, description: 'Their new number.' }),
  },
  { additionalProperties: false },
);

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
        const customer = sandboxCustomer(account, request.body);
        const message = await simulatedInbound(ctx.db, account.id, customer, request.body, ctx.now());
        const [received] = await receiveInbound(
          ctx,
          { accountId: account.id, provider: 'sandbox', sandbox: true },
          [message],
        );
        reply.status(201);
        return toMessage(received!.message);
      },
    );

    app.post(
      '/sandbox/number-changes',
      {
        config: { access: 'account', errors: ['FORBIDDEN', 'RESOURCE_NOT_FOUND'] },
        schema: {
          tags: ['contacts'],
          operationId: 'simulateNumberChange',
          summary: 'Sandbox: a customer changes their number',
          description:
            "Sandbox keys only (a live key gets 403). Plays WhatsApp's `user_changed_number` system message: the customer at `from` now writes from `to`, under a new user id (Meta gives one with every new number). Their contact takes the new number and user id (`contact.updated`, with `previous`); a contact already at `to` is the same customer and is merged into it (`contact.merged`). 404 when no contact is at `from`.",
          body: NumberChangeBody,
          response: { 200: ContactSchema },
        },
      },
      async (request) => {
        if (request.principal!.mode !== 'sandbox') {
          throw new ApiError('FORBIDDEN', 'Only a sandbox key can simulate a number change.');
        }
        const account = accountOf(request);
        const number = (field: 'from' | 'to') => {
          const phone = normalizePhone(request.body[field], account.countryCode);
          if (!phone) throw invalidFields([{ field, issue: 'is not a valid phone number' }]);
          return phone;
        };
        const from = number('from');
        const to = number('to');
        const previous = { phone: from, userId: sandboxUserId(account.id, from) };
        const current = {
          phone: to,
          waId: to.slice(1),
          userId: sandboxUserId(account.id, to),
          parentUserId: null,
        };
        const contact = await ctx.db.transaction(async (tx) => {
          const events = await applyIdentityChange(ctx, tx, account.id, { previous, current });
          await ctx.events.emitMany(tx, events);
          return findCustomer(tx, account.id, current);
        });
        if (!contact) throw notFound('contact');
        return toContact(contact);
      },
    );
  };
}
