// /teams: an account's members grouped to receive conversations, with their assignment (assign.ts).
// Admins make and change them; agents read them (the inbox's team queues).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { listTeams } from './repo.ts';
import {
  CreateTeamBody,
  TeamIdParams,
  TeamListQuery,
  TeamSchema,
  toTeam,
  UpdateTeamBody,
} from './schemas.ts';
import { createTeam, getTeam, patchTeam, removeTeam } from './service.ts';

export function teamsRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['team'];
  const params = TeamIdParams;
  const response = { 200: TeamSchema };

  return async (app) => {
    app.post(
      '/teams',
      {
        config: { access: 'account', errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createTeam',
          summary: 'Make a team that receives conversations',
          description:
            'Its members must be the account’s (400 naming each other one). A name the account has is 409, naming the other; so is a 101st team. `default: true` takes the default from the team that had it.',
          body: CreateTeamBody,
          response: { 201: TeamSchema },
        },
      },
      async (request, reply) => {
        const row = await createTeam(ctx, accountOf(request).id, request.body);
        reply.status(201);
        return toTeam(row);
      },
    );

    app.get(
      '/teams',
      {
        config: { access: 'account', agents: true },
        schema: {
          tags,
          operationId: 'listTeams',
          summary: 'List teams, newest first',
          querystring: TeamListQuery,
          response: { 200: listOf(TeamSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        return pageOf(await listTeams(ctx.db, accountOf(request).id, page), page, toTeam);
      },
    );

    app.get(
      '/teams/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: { tags, operationId: 'getTeam', summary: 'Get a team', params, response },
      },
      async (request) => toTeam(await getTeam(ctx, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/teams/:id',
      {
        config: { ...ON_RESOURCE, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateTeam',
          summary: 'Change a team (members replaced whole)',
          description:
            'A change that gives the team room (members added, capacity raised, assignment turned on) gives out its waiting conversations at once.',
          params,
          body: UpdateTeamBody,
          response,
        },
      },
      async (request) => toTeam(await patchTeam(ctx, accountOf(request).id, request.params.id, request.body)),
    );

    app.delete(
      '/teams/:id',
      {
        config: ON_RESOURCE,
        schema: {
          tags,
          operationId: 'deleteTeam',
          summary: 'Delete a team (its conversations keep their assignees, in no team)',
          params,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeTeam(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );
  };
}
