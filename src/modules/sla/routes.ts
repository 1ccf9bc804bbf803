// /sla-policies: an account's service level targets for its conversations (service.ts, due.ts).
// Admins make and change them; agents read them (the inbox shows due times).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf } from '../../kernel/http/pagination.ts';
import { listPolicies } from './repo.ts';
import {
  CreateSlaPolicyBody,
  SlaPolicyIdParams,
  SlaPolicySchema,
  toSlaPolicy,
  UpdateSlaPolicyBody,
} from './schemas.ts';
import { createPolicy, getPolicy, MAX_POLICIES, patchPolicy, removePolicy } from './service.ts';

const APPLIES =
  'A policy applies to conversations as they open or reopen and when their labels or team change; one made or changed meanwhile applies to a running conversation at its next such change.';

export function slaPolicyRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['conversations'];
  const params = SlaPolicyIdParams;
  const response = { 200: SlaPolicySchema };

  return async (app) => {
    app.post(
      '/sla-policies',
      {
        config: { access: 'account', errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createSlaPolicy',
          summary: 'Make an SLA policy: first response and resolution targets',
          description: `${APPLIES} A name the account has is 409, naming the other; so is a policy past ${MAX_POLICIES}. A team that is not the account's is 400.`,
          body: CreateSlaPolicyBody,
          response: { 201: SlaPolicySchema },
        },
      },
      async (request, reply) => {
        const row = await createPolicy(ctx, accountOf(request).id, request.body);
        reply.status(201);
        return toSlaPolicy(row);
      },
    );

    app.get(
      '/sla-policies',
      {
        config: { access: 'account', agents: true },
        schema: {
          tags,
          operationId: 'listSlaPolicies',
          summary: 'List SLA policies in the order they are tried',
          description: `All of them (at most ${MAX_POLICIES}), lowest position first, then oldest: the first that holds applies.`,
          response: { 200: listOf(SlaPolicySchema) },
        },
      },
      async (request) => ({
        data: (await listPolicies(ctx.db, accountOf(request).id)).map(toSlaPolicy),
        nextCursor: null,
      }),
    );

    app.get(
      '/sla-policies/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: { tags, operationId: 'getSlaPolicy', summary: 'Get an SLA policy', params, response },
      },
      async (request) => toSlaPolicy(await getPolicy(ctx, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/sla-policies/:id',
      {
        config: { ...ON_RESOURCE, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateSlaPolicy',
          summary: 'Change an SLA policy',
          description: APPLIES,
          params,
          body: UpdateSlaPolicyBody,
          response,
        },
      },
      async (request) =>
        toSlaPolicy(await patchPolicy(ctx, accountOf(request).id, request.params.id, request.body)),
    );

    app.delete(
      '/sla-policies/:id',
      {
        config: ON_RESOURCE,
        schema: {
          tags,
          operationId: 'deleteSlaPolicy',
          summary: 'Delete an SLA policy (its open conversations keep no due times; their breaches stay)',
          params,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removePolicy(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );
  };
}
