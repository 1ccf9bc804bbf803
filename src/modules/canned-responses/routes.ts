// /canned-responses: replies saved once, found by `/shortcut` in the inbox, rendered for the
// customer before they are sent (service.ts). Every route is the inbox's: agents use and keep them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { listCanned } from './repo.ts';
import {
  CannedIdParams,
  CannedListQuery,
  CannedResponseSchema,
  CreateCannedBody,
  RenderBody,
  RenderedSchema,
  toCanned,
  UpdateCannedBody,
} from './schemas.ts';
import { createCanned, getCanned, patchCanned, removeCanned, renderCanned } from './service.ts';

export function cannedResponseRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['canned-responses'];
  const params = CannedIdParams;
  const response = { 200: CannedResponseSchema };

  return async (app) => {
    app.post(
      '/canned-responses',
      {
        config: { access: 'account', agents: true, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createCannedResponse',
          summary: 'Save a canned response',
          description:
            'Its text (and a template’s parameters) are Liquid, checked now (a syntax error is a 400 at its field). A shortcut the account has is 409, naming the other; so is a 1,001st canned response.',
          body: CreateCannedBody,
          response: { 201: CannedResponseSchema },
        },
      },
      async (request, reply) => {
        const row = await createCanned(ctx, accountOf(request).id, request.body);
        reply.status(201);
        return toCanned(row);
      },
    );

    app.get(
      '/canned-responses',
      {
        config: { access: 'account', agents: true },
        schema: {
          tags,
          operationId: 'listCannedResponses',
          summary: 'List canned responses, newest first; `q` finds them by shortcut or title',
          querystring: CannedListQuery,
          response: { 200: listOf(CannedResponseSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listCanned(ctx.db, accountOf(request).id, page, request.query.q);
        return pageOf(rows, page, toCanned);
      },
    );

    app.get(
      '/canned-responses/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'getCannedResponse',
          summary: 'Get a canned response',
          params,
          response,
        },
      },
      async (request) => toCanned(await getCanned(ctx, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/canned-responses/:id',
      {
        config: { ...ON_RESOURCE, agents: true, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateCannedResponse',
          summary: 'Change a canned response',
          description:
            'The fields given change; `media` or `template` null removes it. A shortcut the account has is 409.',
          params,
          body: UpdateCannedBody,
          response,
        },
      },
      async (request) =>
        toCanned(await patchCanned(ctx, accountOf(request).id, request.params.id, request.body)),
    );

    app.delete(
      '/canned-responses/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'deleteCannedResponse',
          summary: 'Delete a canned response',
          params,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeCanned(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    app.post(
      '/canned-responses/:id/render',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'renderCannedResponse',
          summary: "Render a canned response for a conversation's customer (nothing is sent)",
          description:
            "`message` is the body to send with POST /conversations/{id}/messages: the text (with its media) while the customer service window is open, the template once it has closed (when there is one). A variable the customer lacks is a `problems` entry, not an error. `{{ agent.name }}` is the console member's who asks (an API key's render has no agent). Another account's canned response or conversation is 404.",
          params,
          body: RenderBody,
          response: { 200: RenderedSchema },
        },
      },
      async (request) =>
        renderCanned(
          ctx,
          accountOf(request).id,
          request.params.id,
          request.body.conversationId,
          request.principal?.console?.memberId ?? null,
        ),
    );
  };
}
