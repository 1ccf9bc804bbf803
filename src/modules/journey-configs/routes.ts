// /journey-configs: ready-made journeys (docs/automation.md § Journey configs): an appointment
// reminder, a welcome message, a re-engagement. Each owns a journey built from it, whose runs and
// statistics are read through /journeys/{journeyId}. Plans from Pro up.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { listConfigs } from './repo.ts';
import {
  ConfigIdParams,
  ConfigListQuery,
  CreateConfigBody,
  JourneyConfigSchema,
  toConfig,
  UpdateConfigBody,
} from './schemas.ts';
import { createJourneyConfig, getJourneyConfig, patchJourneyConfig, removeJourneyConfig } from './service.ts';

export function journeyConfigRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['journey-configs'];
  const account = { access: 'account', feature: 'automation' } as const;
  const found = { ...ON_RESOURCE, feature: 'automation' } as const;

  return async (app) => {
    app.post(
      '/journey-configs',
      {
        config: { ...account, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createJourneyConfig',
          summary: 'Create a journey config: its journey is built from it and published at once',
          description:
            'A fault of the config, or of the journey it makes (a message’s content, a Liquid template, a tag), is a 400 with a `details` entry at the config’s field. 409 when the account has as many journeys as it may.',
          body: CreateConfigBody,
          response: { 201: JourneyConfigSchema },
        },
      },
      async (request, reply) => {
        const row = await createJourneyConfig(ctx, accountOf(request).id, request.body);
        reply.status(201);
        return toConfig(row);
      },
    );

    app.get(
      '/journey-configs',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listJourneyConfigs',
          summary: 'List journey configs, newest first',
          querystring: ConfigListQuery,
          response: { 200: listOf(JourneyConfigSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        return pageOf(await listConfigs(ctx.db, accountOf(request).id, page, request.query), page, toConfig);
      },
    );

    app.get(
      '/journey-configs/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getJourneyConfig',
          summary: 'Get a journey config',
          params: ConfigIdParams,
          response: { 200: JourneyConfigSchema },
        },
      },
      async (request) => toConfig(await getJourneyConfig(ctx.db, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/journey-configs/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'updateJourneyConfig',
          summary:
            'Change a journey config: a new name or config makes the next version of its journey (runs keep theirs); status pauses or resumes it',
          description:
            '`config` is given whole, of the config’s type (the type cannot change). Paused, its journey starts no run and its runs hold where they are until it is active again.',
          params: ConfigIdParams,
          body: UpdateConfigBody,
          response: { 200: JourneyConfigSchema },
        },
      },
      async (request) =>
        toConfig(await patchJourneyConfig(ctx, accountOf(request).id, request.params.id, request.body)),
    );

    app.delete(
      '/journey-configs/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'deleteJourneyConfig',
          summary:
            'Delete a journey config and its journey (its running and waiting runs are canceled first)',
          params: ConfigIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeJourneyConfig(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );
  };
}
