// POST /messages, POST /messages/estimate, GET /messages, GET /messages/{id}, POST /messages/{id}/read,
// POST /messages/{id}/cancel (send later),
// GET /account/pricing/adjustments (what settling against Meta's billing moved, per price-book rule).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Channels } from '../../channels/registry.ts';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { notFound } from '../../kernel/http/errors.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { PeriodQuery, periodOf } from '../../kernel/http/period.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import { money } from '../billing/index.ts';
import { invalidFields } from '../contacts/index.ts';
import type { MediaStore } from '../media/index.ts';
import { type PriceTable, ruleView } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import type { AcceptQueue } from './accept-queue.ts';
import { adjustmentsByRule } from './adjustments.ts';
import { estimate } from './estimate.ts';
import { markMessageRead } from './mark-read.ts';
import { findMessage, listMessages } from './repo.ts';
import { cancelMessage } from './schedule.ts';
import {
  AdjustmentsReportSchema,
  EstimateBody,
  EstimateSchema,
  MarkReadBody,
  MessageIdParams,
  MessageListQuery,
  MessageSchema,
  SendMessageBody,
} from './schemas.ts';
import { sendForRequest } from './send-request.ts';
import { toMessage } from './view.ts';

/** The kernel's context and the services these routes uses. */
export interface MessagesContext extends KernelContext {
  approvedTemplates: ApprovedTemplates;
  channels: Channels;
  prices: PriceTable;
  acceptQueue: AcceptQueue;
  media: MediaStore;
}

export function messageRoutes(ctx: MessagesContext): FastifyPluginAsyncTypebox {
  const tags = ['messages'];
  return async (app) => {
    app.post(
      '/messages',
      {
        config: {
          agents: true,
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'INSUFFICIENT_BALANCE', 'CSW_VIOLATION', 'TEMPLATE_NOT_APPROVED'],
        },
        schema: {
          tags,
          operationId: 'sendMessage',
          summary: 'Send a message: an approved template, or free-form inside the customer service window',
          description:
            'Answers 202 with the message `queued`: it is paid for (live sends through a real provider) and will be handed to the provider; follow it with `message.*` events or GET /messages/{id}. An unknown number gets a contact. Send an `Idempotency-Key` to retry safely: one key makes one message and one charge. With `sendAt` (at most 30 days ahead) the message is `scheduled` instead: checked now, priced, charged and checked against the customer service window when it goes (`failed` with `CSW_VIOLATION` if the window has closed by then), cancellable until then (POST /messages/{id}/cancel).',
          body: SendMessageBody,
          response: { 202: MessageSchema },
        },
      },
      async (request, reply) => {
        const message = await sendForRequest(ctx, request, request.body);
        reply.status(202);
        return message;
      },
    );

    app.post(
      '/messages/estimate',
      {
        config: {
          agents: true,
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'CSW_VIOLATION', 'TEMPLATE_NOT_APPROVED'],
        },
        schema: {
          tags,
          operationId: 'estimateMessages',
          summary: 'Price a message, or a list of recipients, without sending',
          description:
            'Each recipient is priced by its country and the category (the template’s, or service for free-form), with the free rules the send applies (utility templates and service messages inside an open customer service window, and anything in the sandbox, cost nothing). The send then charges exactly this, unless a customer writes in or the balance changes in between.',
          body: EstimateBody,
          response: { 200: EstimateSchema },
        },
      },
      async (request) => {
        const e = await estimate(ctx, accountOf(request), request.principal!.mode, request.body);
        return {
          recipients: e.lines.map((l) => ({
            index: l.index,
            to: l.to,
            country: l.country,
            category: l.category,
            unitPrice: money(l.listPriceMicros, e.currency),
            charge: money(l.chargeMicros, e.currency),
            liveCharge: money(l.liveChargeMicros, e.currency),
            freeReason: l.freeReason,
            rule: l.error ? null : ruleView(l.rule),
            error: l.error as never,
          })),
          total: money(e.totalMicros, e.currency),
          liveTotal: money(e.liveTotalMicros, e.currency),
          balance: money(e.balanceMicros, e.currency),
          sufficient: e.balanceMicros >= e.totalMicros,
          channel: e.provider,
        };
      },
    );

    app.get(
      '/messages',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'listMessages',
          summary: 'Messages in both directions, newest first',
          querystring: MessageListQuery,
          response: { 200: listOf(MessageSchema) },
        },
      },
      async (request) => {
        const account = accountOf(request);
        const { to, createdAfter, createdBefore, status, direction } = request.query;
        const phone = to === undefined ? undefined : normalizePhone(to, account.countryCode);
        if (phone === null) throw invalidFields([{ field: 'to', issue: 'is not a valid phone number' }]);
        const page = readPage(request.query);
        const rows = await listMessages(ctx.db, account.id, page, {
          phone,
          status,
          direction,
          createdAfter: createdAfter ? new Date(createdAfter) : undefined,
          createdBefore: createdBefore ? new Date(createdBefore) : undefined,
        });
        return pageOf(rows, page, (row) => toMessage(row));
      },
    );

    app.get(
      '/messages/:id',
      {
        config: { agents: true, access: 'account', errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'getMessage',
          summary: 'Get a message, with its status timestamps, price and error',
          params: MessageIdParams,
          response: { 200: MessageSchema },
        },
      },
      async (request) => {
        const row = await findMessage(ctx.db, accountOf(request).id, request.params.id);
        if (!row) throw notFound('message');
        return toMessage(row);
      },
    );

    app.post(
      '/messages/:id/read',
      {
        config: {
          agents: true,
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'],
        },
        schema: {
          tags,
          operationId: 'markMessageRead',
          summary: "Mark a customer's message read, and optionally show the typing indicator",
          description:
            'On WhatsApp the customer sees blue ticks on this message and the earlier ones of the chat, and with `typing: true` "typing…" until your next message or 25 seconds; the sandbox records it only. The message then shows `markedReadAt` (and `typingShownAt`). Repeating it is harmless. An outbound message is 409 `CONFLICT`; a refusal by WhatsApp is 409 with its reason in `details`, WhatsApp unreachable 503: nothing is recorded then. A sandbox key may not mark a WhatsApp message read (403).',
          params: MessageIdParams,
          body: Type.Optional(MarkReadBody),
          response: { 200: MessageSchema },
        },
      },
      async (request) => {
        const row = await markMessageRead(
          ctx,
          accountOf(request).id,
          request.principal!.mode,
          request.params.id,
          request.body?.typing ?? false,
        );
        return toMessage(row);
      },
    );

    app.post(
      '/messages/:id/cancel',
      {
        config: { agents: true, access: 'account', errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'cancelMessage',
          summary: 'Cancel a scheduled message (send later) before it goes',
          description:
            'A message sent with `sendAt` is `scheduled` until its time: this makes it `canceled` (final; never sent, never charged) and emits `message.canceled`. Once it went (queued, sent, failed, …) or was canceled already it is 409 `CONFLICT`.',
          params: MessageIdParams,
          response: { 200: MessageSchema },
        },
      },
      async (request) => toMessage(await cancelMessage(ctx, accountOf(request).id, request.params.id)),
    );

    app.get(
      '/account/pricing/adjustments',
      {
        config: { access: 'account' },
        schema: {
          tags: ['account'],
          operationId: 'getPricingAdjustments',
          summary: "What settling charges against Meta's billing moved over a period, per price-book rule",
          description:
            "Meta's `pricing` on a status callback is the final word on what a message costs (docs/messaging.md § Prices and the wallet): each difference from the book's charge is an `adjustment` wallet transaction. This sums them by when they were made, per rule of the messages they settled. `from` defaults to the start of the month (UTC), `to` to now; 400 when `from` is not before `to`.",
          querystring: PeriodQuery,
          response: { 200: AdjustmentsReportSchema },
        },
      },
      async (request) => {
        const { from, to } = periodOf(request.query, ctx.now());
        return adjustmentsByRule(ctx.db, accountOf(request).id, from, to, ctx.prices.currency);
      },
    );
  };
}
