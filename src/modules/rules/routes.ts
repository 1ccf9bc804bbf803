// /rules: automation that reacts to events (docs/automation.md). Plans from Pro up.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { invalid } from '../../kernel/http/errors.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import type { ActionResult, ActionTargets } from '../automation/index.ts';
import { type CallState, callStates } from '../automation/index.ts';
import { toRun } from './engine.ts';
import { listRules } from './repo.ts';
import { dryRun, listRuns } from './runs.ts';
import {
  CreateRuleBody,
  RuleIdParams,
  RuleListQuery,
  RuleSchema,
  RunListQuery,
  RunSchema,
  SavedRuleSchema,
  TestRuleBody,
  toRule,
  UpdateRuleBody,
} from './schemas.ts';
import { createRule, getRule, patchRule, removeRule } from './service.ts';

/** The kernel's context and what the rules' checks ask of modules above them. */
export interface RulesContext extends KernelContext {
  actionTargets: ActionTargets;
}

export function ruleRoutes(ctx: RulesContext): FastifyPluginAsyncTypebox {
  const tags = ['rules'];
  const account = { access: 'account', feature: 'automation' } as const;
  const found = { ...ON_RESOURCE, feature: 'automation' } as const;

  return async (app) => {
    app.post(
      '/rules',
      {
        config: { ...account, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createRule',
          summary: 'Create a rule: a trigger, conditions and up to 10 actions, at a position',
          body: CreateRuleBody,
          response: { 201: SavedRuleSchema },
        },
      },
      async (request, reply) => {
        const { row, signingSecret } = await createRule(ctx, accountOf(request).id, request.body);
        reply.status(201);
        return { ...toRule(row), signingSecret };
      },
    );

    app.get(
      '/rules',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listRules',
          summary: 'List rules in evaluation order',
          querystring: RuleListQuery,
          response: { 200: listOf(RuleSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listRules(ctx.db, accountOf(request).id, page, request.query);
        return pageOf(rows, page, toRule);
      },
    );

    app.get(
      '/rules/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getRule',
          summary: 'Get a rule with its stats',
          params: RuleIdParams,
          response: { 200: RuleSchema },
        },
      },
      async (request) => toRule(await getRule(ctx.db, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/rules/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'updateRule',
          summary: 'Change a rule: any of its fields, its status (active, paused) or its position',
          params: RuleIdParams,
          body: UpdateRuleBody,
          response: { 200: SavedRuleSchema },
        },
      },
      async (request) => {
        const saved = await patchRule(ctx, accountOf(request).id, request.params.id, request.body);
        return {
          ...toRule(saved.row),
          ...(saved.signingSecret ? { signingSecret: saved.signingSecret } : {}),
        };
      },
    );

    app.get(
      '/rules/:id/runs',
      {
        config: found,
        schema: {
          tags,
          operationId: 'listRuleRuns',
          summary:
            'List the run records of a rule, newest first: each evaluation, condition by condition and action by action',
          params: RuleIdParams,
          querystring: RunListQuery,
          response: { 200: listOf(RunSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listRuns(ctx.db, accountOf(request).id, request.params.id, page, request.query);
        const calls = await callStates(
          ctx.db,
          rows.flatMap((r) => r.actions.filter((a) => a.type === 'call_webhook' && a.ref).map((a) => a.ref!)),
        );
        return pageOf(rows, page, (row) => {
          const run = toRun(row);
          const actions = run.actions.map((a): ActionResult & { delivery?: CallState } => {
            const delivery = a.ref ? calls.get(a.ref) : undefined;
            return delivery ? { ...a, delivery } : a;
          });
          return { ...run, actions };
        });
      },
    );

    app.post(
      '/rules/:id/test',
      {
        config: { ...found, bodyRequired: true },
        schema: {
          tags,
          operationId: 'testRule',
          summary:
            'Dry run: the run record the rule would make for an event (stored, or given inline); nothing is executed or stored',
          params: RuleIdParams,
          body: TestRuleBody,
          response: { 200: RunSchema },
        },
      },
      async (request) => {
        const { eventId, event } = request.body;
        if ((eventId === undefined) === (event === undefined))
          throw invalid('body', 'takes either eventId or event');
        return toRun(await dryRun(ctx, accountOf(request).id, request.params.id, request.body));
      },
    );

    app.delete(
      '/rules/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'deleteRule',
          summary: 'Delete a rule (the rules after it move up)',
          params: RuleIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeRule(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );
  };
}
