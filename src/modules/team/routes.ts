// /team/members: the people of an account that conversations can be assigned to.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { listMembers } from './repo.ts';
import {
  CreateMemberBody,
  MemberIdParams,
  MemberListQuery,
  MemberSchema,
  toMember,
  UpdateMemberBody,
} from './schemas.ts';
import { addMember, changeAvailability, getMember, removeMember } from './service.ts';

export function teamRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['team'];
  const found = ON_RESOURCE;

  return async (app) => {
    app.post(
      '/team/members',
      {
        config: { access: 'account', errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createTeamMember',
          summary: 'Add a team member; an email already in the team is refused',
          body: CreateMemberBody,
          response: { 201: MemberSchema },
        },
      },
      async (request, reply) => {
        const row = await addMember(ctx.db, accountOf(request).id, request.body, ctx.now());
        reply.status(201);
        return toMember(row);
      },
    );

    app.get(
      '/team/members',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'listTeamMembers',
          summary: 'List team members, newest first',
          querystring: MemberListQuery,
          response: { 200: listOf(MemberSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listMembers(ctx.db, accountOf(request).id, page, request.query);
        return pageOf(rows, page, toMember);
      },
    );

    app.get(
      '/team/members/:id',
      {
        config: { ...found, agents: true },
        schema: {
          tags,
          operationId: 'getTeamMember',
          summary: 'Get a team member',
          params: MemberIdParams,
          response: { 200: MemberSchema },
        },
      },
      async (request) => toMember(await getMember(ctx.db, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/team/members/:id',
      {
        config: { access: 'account', agents: true, errors: ['RESOURCE_NOT_FOUND', 'FORBIDDEN'] },
        schema: {
          tags,
          operationId: 'updateTeamMember',
          summary: "Set a member's availability (online, away, offline)",
          description:
            'An agent’s console session sets its own member’s only (another’s is 403); an admin or an API key sets any.',
          params: MemberIdParams,
          body: UpdateMemberBody,
          response: { 200: MemberSchema },
        },
      },
      async (request) => {
        const console = request.principal?.console;
        const agentMemberId = console?.role === 'agent' ? console.memberId : null;
        const row = await changeAvailability(
          ctx,
          accountOf(request).id,
          request.params.id,
          request.body.availability,
          { agentMemberId },
          ctx.now(),
        );
        return toMember(row);
      },
    );

    app.delete(
      '/team/members/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'deleteTeamMember',
          summary: 'Remove a team member',
          params: MemberIdParams,
          response: { 204: Type.Null({ description: 'Removed.' }) },
        },
      },
      async (request, reply) => {
        await removeMember(ctx, accountOf(request).id, request.params.id);
        // The member's console login went with it (cascade): its sessions end here at once.
        ctx.sessions.forgetAll();
        reply.status(204);
      },
    );
  };
}
