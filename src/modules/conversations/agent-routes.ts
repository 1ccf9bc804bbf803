// The agent's own tools on a conversation: notes, labels, snooze (docs/conversations.md § The team
// inbox). Every route is the inbox's: a console agent calls them as an admin does.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE, ON_RESOURCE_OR_CONFLICT } from '../../kernel/access/access.ts';
import { invalid, notFound } from '../../kernel/http/errors.ts';
import { listOf, PageQuery, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { addLabels, removeLabel } from './labels.ts';
import { addNote, listNotes, toNote } from './notes.ts';
import { findConversationRow } from './repo.ts';
import {
  ConversationIdParams,
  ConversationLabelParams,
  ConversationSchema,
  CreateNoteBody,
  LabelsBody,
  NoteSchema,
  SnoozeBody,
} from './schemas.ts';
import type { ConversationServices } from './service.ts';
import { snoozeConversation } from './snooze.ts';

/** Who writes a note: a member's console session writes as that member; an API key names one, or nobody. */
function authorOf(request: FastifyRequest, named: string | undefined): string | null {
  const own = request.principal?.console?.memberId ?? null;
  if (own === null) return named ?? null;
  if (named !== undefined && named !== own)
    throw invalid('authorId', 'is yours: a console session writes as its own team member');
  return own;
}

export function conversationAgentRoutes(ctx: ConversationServices): FastifyPluginAsyncTypebox {
  const tags = ['conversations'];
  const params = ConversationIdParams;

  return async (app) => {
    app.post(
      '/conversations/:id/notes',
      {
        config: { ...ON_RESOURCE_OR_CONFLICT, agents: true },
        schema: {
          tags,
          operationId: 'createConversationNote',
          summary: 'Leave a private note on a conversation (never sent to the customer)',
          description:
            'Open or closed. Not a message: it is not in any message list or count, and the conversation’s last activity does not move. Each member in `mentions` is told by a `conversation.mentioned` event (the console shows it as a notification). 409 when the conversation holds 1,000 notes.',
          params,
          body: CreateNoteBody,
          response: { 201: NoteSchema },
        },
      },
      async (request, reply) => {
        const { text, mentions, authorId } = request.body;
        const note = await addNote(ctx, accountOf(request).id, request.params.id, {
          text,
          mentions,
          authorId: authorOf(request, authorId),
        });
        reply.status(201);
        return note;
      },
    );

    app.get(
      '/conversations/:id/notes',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'listConversationNotes',
          summary: "A conversation's notes, newest first",
          description:
            'Shown between the messages by their `createdAt` (the console merges this list with GET /conversations/{id}/messages).',
          params,
          querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
          response: { 200: listOf(NoteSchema) },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        const page = readPage(request.query);
        if (!(await findConversationRow(ctx.db, accountId, request.params.id)))
          throw notFound('conversation');
        return pageOf(await listNotes(ctx.db, accountId, request.params.id, page), page, toNote);
      },
    );

    app.post(
      '/conversations/:id/labels',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'labelConversation',
          summary: 'Add labels to a conversation (labels it already carries are ignored)',
          description:
            'A conversation carries at most 20. Emits `conversation.labeled` with `labelsAdded` when one is new.',
          params,
          body: LabelsBody,
          response: { 200: ConversationSchema },
        },
      },
      async (request) => addLabels(ctx, accountOf(request).id, request.params.id, request.body.labels),
    );

    app.delete(
      '/conversations/:id/labels/:label',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'unlabelConversation',
          summary: 'Remove a label from a conversation (the conversation also when it did not carry it)',
          description: 'Emits `conversation.labeled` with `labelsRemoved` when it carried the label.',
          params: ConversationLabelParams,
          response: { 200: ConversationSchema },
        },
      },
      async (request) => removeLabel(ctx, accountOf(request).id, request.params.id, request.params.label),
    );

    app.post(
      '/conversations/:id/snooze',
      {
        config: { ...ON_RESOURCE_OR_CONFLICT, agents: true },
        schema: {
          tags,
          operationId: 'snoozeConversation',
          summary: 'Hide an open conversation from the open list until a time, or wake it (null)',
          description:
            'Until then `GET /conversations?status=open` leaves it out; it comes back at `until` or when the customer writes, whichever is first (`conversation.unsnoozed`, `reason` `time`, `customer` or `agent`). Emits `conversation.snoozed`. A closed conversation is 409.',
          params,
          body: SnoozeBody,
          response: { 200: ConversationSchema },
        },
      },
      async (request) => {
        const { until } = request.body;
        return snoozeConversation(
          ctx,
          accountOf(request).id,
          request.params.id,
          until ? new Date(until) : null,
        );
      },
    );
  };
}
