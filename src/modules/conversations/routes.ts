// /conversations: list, get, history, reply, assign, close, reopen, delete.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE, ON_RESOURCE_OR_CONFLICT } from '../../kernel/access/access.ts';
import { conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { normalizeTag } from '../contacts/index.ts';
import type { SendContext } from '../messages/index.ts';
import { MessageSchema, sendForRequest, toMessage } from '../messages/index.ts';
import {
  activityCursor,
  findConversation,
  findConversationRow,
  listConversationMessages,
  listConversations,
  readActivityCursor,
  slaDueCursor,
} from './repo.ts';
import {
  AssignBody,
  ConversationIdParams,
  ConversationListQuery,
  ConversationMessagesQuery,
  ConversationSchema,
  ReplyBody,
  toConversation,
} from './schemas.ts';
import { assignConversation, closeConversation, deleteConversation, reopenConversation } from './service.ts';

export function conversationRoutes(ctx: SendContext): FastifyPluginAsyncTypebox {
  const tags = ['conversations'];
  const params = ConversationIdParams;
  const response = { 200: ConversationSchema };

  return async (app) => {
    app.get(
      '/conversations',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'listConversations',
          summary: 'List conversations, most recent activity first',
          description:
            'Ordered by the last message in either direction, then newest first. A conversation whose activity changes while you page moves to the top: it may then be missing from the pages still to come (it is on the first page again). `order=sla_due` (with `status=open`): the soonest SLA due time first.',
          querystring: ConversationListQuery,
          response: { 200: listOf(ConversationSchema) },
        },
      },
      async (request) => {
        const { status, assigneeId, unassigned, teamId, contactId, label, snoozed, order } = request.query;
        // The due-first order is the open inbox's (conversations_sla_due holds open ones).
        if (order === 'sla_due' && status !== 'open') throw invalid('order', '`sla_due` needs `status=open`');
        const page = readActivityCursor(request.query);
        const now = ctx.now();
        const filters = {
          status,
          assigneeId,
          unassigned,
          teamId,
          contactId,
          // A label no conversation can carry finds none.
          label: label === undefined ? undefined : (normalizeTag(label) ?? label.toLowerCase()),
          snoozed,
        };
        const rows = await listConversations(ctx.db, accountOf(request).id, page, filters, now);
        return pageOf(
          rows,
          page,
          (row) => toConversation(row, now),
          order === 'sla_due' ? slaDueCursor : activityCursor,
        );
      },
    );

    app.get(
      '/conversations/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'getConversation',
          summary: 'Get a conversation, with its customer service window, last message and unread count',
          params,
          response,
        },
      },
      async (request) => {
        const row = await findConversation(ctx.db, accountOf(request).id, request.params.id);
        if (!row) throw notFound('conversation');
        return toConversation(row, ctx.now());
      },
    );

    app.delete(
      '/conversations/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'deleteConversation',
          summary: 'Delete a conversation and its messages (the contact stays)',
          description:
            "Open or closed. Its messages in both directions go with it (GET /messages/{id} is then 404); the contact, its customer service window and the wallet's transactions stay. A message of it not yet handed to the provider is never sent, and its charge is refunded; one already handed over keeps its charge. The customer's next message opens a new conversation. No event is emitted.",
          params,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await deleteConversation(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    app.get(
      '/conversations/:id/messages',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'listConversationMessages',
          summary: "A conversation's messages in both directions, newest first",
          description:
            'Cursor-paginated by message id: messages that arrive while you page come before the first page and never shift the pages still to come.',
          params,
          querystring: ConversationMessagesQuery,
          response: { 200: listOf(MessageSchema) },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        const page = readPage(request.query);
        if (!(await findConversationRow(ctx.db, accountId, request.params.id)))
          throw notFound('conversation');
        const rows = await listConversationMessages(ctx.db, accountId, request.params.id, page);
        return pageOf(rows, page, (row) => toMessage(row));
      },
    );

    app.post(
      '/conversations/:id/messages',
      {
        config: {
          agents: true,
          access: 'account',
          errors: [
            'RESOURCE_NOT_FOUND',
            'CONFLICT',
            'INSUFFICIENT_BALANCE',
            'CSW_VIOLATION',
            'TEMPLATE_NOT_APPROVED',
          ],
        },
        schema: {
          tags,
          operationId: 'replyInConversation',
          summary: 'Reply to the contact of an open conversation',
          description:
            'The same send as POST /messages, to the conversation’s contact: a template at any time, free-form only inside the customer service window (422 `CSW_VIOLATION`), paid from the wallet. Answers 202 with the message, which joins the conversation. A closed conversation is 409: reopen it first.',
          params,
          body: ReplyBody,
          response: { 202: MessageSchema },
        },
      },
      async (request, reply) => {
        const row = await findConversationRow(ctx.db, accountOf(request).id, request.params.id);
        if (!row) throw notFound('conversation');
        if (row.status !== 'open') throw conflict('The conversation is closed; reopen it to reply.');
        // To the number it opened with; a customer without one, at their contact's user id.
        const recipient = row.phone ? { to: row.phone } : { contactId: row.contact_id };
        const message = await sendForRequest(ctx, request, { ...request.body, ...recipient });
        reply.status(202);
        return message;
      },
    );

    app.post(
      '/conversations/:id/assign',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'assignConversation',
          summary: 'Assign to a team member (or nobody), to a team, or both',
          description:
            '`{assigneeId}` changes the member (null: nobody); `{teamId}` moves it to a team, whose assignment picks an available member (or queues it); both set both; `teamId: null` takes it out of its team. Emits `conversation.assigned` (with `previousAssigneeId`, `previousTeamId` and `reason: manual`) when either changes. A member or team of another account is not found (404).',
          params,
          body: AssignBody,
          response,
        },
      },
      async (request) => assignConversation(ctx, accountOf(request).id, request.params.id, request.body),
    );

    app.post(
      '/conversations/:id/close',
      {
        config: { ...ON_RESOURCE_OR_CONFLICT, agents: true },
        schema: {
          tags,
          operationId: 'closeConversation',
          summary: 'Close an open conversation',
          description:
            'Emits `conversation.closed`. The customer service window is the contact’s and stays as it is; the customer’s next message opens a new conversation. Closing a closed conversation is 409.',
          params,
          response,
        },
      },
      async (request) =>
        closeConversation(
          ctx,
          accountOf(request).id,
          request.params.id,
          request.principal?.console?.memberId ?? null,
        ),
    );

    app.post(
      '/conversations/:id/reopen',
      {
        config: { ...ON_RESOURCE_OR_CONFLICT, agents: true },
        schema: {
          tags,
          operationId: 'reopenConversation',
          summary: 'Reopen a closed conversation',
          description:
            'Emits `conversation.opened` (with `previousStatus: closed`). 409 if it is open, or if the contact has another open conversation (its id in `details`).',
          params,
          response,
        },
      },
      async (request) => reopenConversation(ctx, accountOf(request).id, request.params.id),
    );
  };
}
