// /keys: an account's own API keys, managed without its partner (an account admin in the console,
// or the account's live key). A sandbox key may not manage keys, nor may a console agent.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { listOf, PageQuery, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { ApiKeyInfo, CreateAccountKeyBody, CreatedApiKey, toCreatedKey, toKeyInfo } from './schemas.ts';
import { createKey, listKeys, revokeKey } from './service.ts';

const tags = ['account'];

function notSandbox(request: FastifyRequest): void {
  if (request.principal!.mode === 'sandbox')
    throw new ApiError('FORBIDDEN', 'A sandbox key may not manage API keys: use a live key or the console.');
}

export function keyRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/keys',
      {
        config: { access: 'account', errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createKey',
          summary: 'Create an API key of this account (shown once); the plan limits how many',
          body: CreateAccountKeyBody,
          response: { 201: CreatedApiKey },
        },
      },
      async (request, reply) => {
        notSandbox(request);
        const { row, apiKey } = await ctx.db.transaction((tx) =>
          createKey(
            tx,
            { accountId: accountOf(request).id },
            { ...request.body, scope: request.body.scope ?? 'live' },
            { keyPrefix: ctx.config.keyPrefix, now: ctx.now() },
          ),
        );
        reply.status(201);
        return toCreatedKey(row, apiKey);
      },
    );

    app.get(
      '/keys',
      {
        config: { access: 'account' },
        schema: {
          tags,
          operationId: 'listKeys',
          summary: 'List the API keys of this account, newest first',
          querystring: Type.Object(PageQuery, { additionalProperties: false }),
          response: { 200: listOf(ApiKeyInfo) },
        },
      },
      async (request) => {
        notSandbox(request);
        const page = readPage(request.query);
        return pageOf(await listKeys(ctx.db, { accountId: accountOf(request).id }, page), page, toKeyInfo);
      },
    );

    app.delete(
      '/keys/:id',
      {
        config: { access: 'account', errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'revokeKey',
          summary: 'Revoke an API key of this account (revoking the key making the call is allowed)',
          params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
          response: { 204: Type.Null({ description: 'Revoked.' }) },
        },
      },
      async (request, reply) => {
        notSandbox(request);
        await revokeKey(ctx.db, { accountId: accountOf(request).id }, request.params.id, ctx.now());
        ctx.auth.forgetKeys();
        reply.status(204);
      },
    );
  };
}
