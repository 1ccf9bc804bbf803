// /partner/bootstrap and /partner/keys: the installation's partner and its keys.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { partnerOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { conflict } from '../../kernel/http/errors.ts';
import { listOf, PageQuery, pageOf, readPage } from '../../kernel/http/pagination.ts';
import {
  ApiKeyInfo,
  CreatedApiKey,
  CreatePartnerKeyBody,
  createKey,
  listKeys,
  revokeKey,
  toCreatedKey,
  toKeyInfo,
} from '../keys/index.ts';
import { bootstrap } from './bootstrap.ts';
import { BootstrapResult, KeyIdParams } from './schemas.ts';

const tags = ['partner'];
const partner = { access: 'partner' } as const;

export function partnerRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const keyOptions = () => ({ keyPrefix: ctx.config.keyPrefix, now: ctx.now() });

  return async (app) => {
    app.post(
      '/partner/bootstrap',
      {
        config: { access: 'bootstrap', errors: ['ALREADY_BOOTSTRAPPED'] },
        schema: {
          tags,
          operationId: 'bootstrapPartner',
          summary: 'Create the first partner key with the bootstrap token (once)',
          response: { 201: BootstrapResult },
        },
      },
      async (request, reply) => {
        const result = await bootstrap(ctx.db, ctx.config, request.headers.authorization, ctx.now());
        reply.status(201);
        return { ...toCreatedKey(result.row, result.apiKey), partnerId: result.partnerId };
      },
    );

    // Partner keys.
    app.post(
      '/partner/keys',
      {
        config: partner,
        schema: {
          tags,
          operationId: 'createPartnerKey',
          summary: 'Create a partner key (shown once)',
          body: CreatePartnerKeyBody,
          response: { 201: CreatedApiKey },
        },
      },
      async (request, reply) => {
        const { row, apiKey } = await ctx.db.transaction((tx) =>
          createKey(
            tx,
            { partnerId: partnerOf(request) },
            { ...request.body, scope: 'partner' },
            keyOptions(),
          ),
        );
        reply.status(201);
        return toCreatedKey(row, apiKey);
      },
    );

    app.get(
      '/partner/keys',
      {
        config: partner,
        schema: {
          tags,
          operationId: 'listPartnerKeys',
          summary: 'List partner keys',
          querystring: Type.Object(PageQuery, { additionalProperties: false }),
          response: { 200: listOf(ApiKeyInfo) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        return pageOf(await listKeys(ctx.db, { partnerId: partnerOf(request) }, page), page, toKeyInfo);
      },
    );

    app.delete(
      '/partner/keys/:keyId',
      {
        config: { ...partner, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'revokePartnerKey',
          summary: 'Revoke a partner key (the last active one cannot be revoked)',
          params: KeyIdParams,
          response: { 204: Type.Null({ description: 'Revoked.' }) },
        },
      },
      async (request, reply) => {
        const partnerId = partnerOf(request);
        await ctx.db.transaction(async (tx) => {
          // Serialise revocations of one partner, so two at once cannot both pass the check below.
          await tx.query('SELECT id FROM partners WHERE id = $1 FOR UPDATE', [partnerId]);
          const { rows } = await tx.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM api_keys WHERE partner_id = $1 AND scope = 'partner'
               AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3) AND id <> $2`,
            [partnerId, request.params.keyId, ctx.now()],
          );
          await revokeKey(tx, { partnerId }, request.params.keyId, ctx.now());
          if (rows[0].n === 0)
            throw conflict('This is the last active partner key; create another one first.');
        });
        ctx.auth.forgetKeys();
        reply.status(204);
      },
    );
  };
}
