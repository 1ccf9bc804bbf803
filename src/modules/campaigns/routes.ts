// /campaigns: broadcasts of an approved template to an audience, paced, with per-recipient results
// (docs/messaging.md § Campaigns). Any API plan.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE, ON_RESOURCE_OR_CONFLICT } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import type { ErrorCode } from '../../kernel/http/errors.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { money } from '../billing/index.ts';
import { type PriceTable, ruleView } from '../pricing/index.ts';
import { countersOf, listCampaigns, listRecipients } from './repo.ts';
import {
  CampaignIdParams,
  CampaignListQuery,
  CampaignSchema,
  CreateCampaignBody,
  EstimateSchema,
  RecipientListQuery,
  RecipientSchema,
  toCampaign,
  toRecipient,
  UpdateCampaignBody,
} from './schemas.ts';
import type { CampaignSender } from './sender.ts';
import {
  type CampaignActor,
  type CampaignInput,
  cancelCampaign,
  changeCampaign,
  createCampaign,
  estimateCampaign,
  getCampaign,
  pauseCampaign,
  removeCampaign,
  resumeCampaign,
  startCampaign,
  viewOf,
} from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface CampaignsContext extends KernelContext {
  campaigns: CampaignSender;
  prices: PriceTable;
}

function actorOf(request: FastifyRequest): CampaignActor {
  const account = accountOf(request);
  return { id: account.id, channelProvider: account.channelProvider, mode: request.principal!.mode };
}

export function campaignRoutes(ctx: CampaignsContext): FastifyPluginAsyncTypebox {
  const tags = ['campaigns'];
  const account = { access: 'account' } as const;
  const found = ON_RESOURCE;
  const conflicting = ON_RESOURCE_OR_CONFLICT;

  return async (app) => {
    app.post(
      '/campaigns',
      {
        config: { ...account, errors: ['CONFLICT'] as ErrorCode[] },
        schema: {
          tags,
          operationId: 'createCampaign',
          summary: 'Create a campaign (a draft): a template, an audience, a schedule, a pace',
          description:
            'Every field is checked at once (400 with each fault at its field): the template must exist in the language (it must be APPROVED by the time the campaign starts), the parameters must be as many as it takes and be valid Liquid, contact ids must be the account’s, conditions must read `contact.*` fields.',
          body: CreateCampaignBody,
          response: { 201: CampaignSchema },
        },
      },
      async (request, reply) => {
        const row = await createCampaign(ctx, accountOf(request).id, request.body as CampaignInput);
        reply.status(201);
        return viewOf(ctx, row);
      },
    );

    app.get(
      '/campaigns',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listCampaigns',
          summary: 'List campaigns, newest first',
          querystring: CampaignListQuery,
          response: { 200: listOf(CampaignSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listCampaigns(ctx.db, accountOf(request).id, page, request.query.status);
        const counted = await countersOf(
          ctx.db,
          rows.map((r) => r.id),
        );
        return pageOf(rows, page, (r) => {
          const { counters, chargedMicros } = counted.get(r.id)!;
          return toCampaign(r, counters, chargedMicros, ctx.prices.currency);
        });
      },
    );

    app.get(
      '/campaigns/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getCampaign',
          summary: 'Get a campaign with its live counters and cost',
          params: CampaignIdParams,
          response: { 200: CampaignSchema },
        },
      },
      async (request) => viewOf(ctx, await getCampaign(ctx, accountOf(request).id, request.params.id)),
    );

    app.put(
      '/campaigns/:id',
      {
        config: conflicting,
        schema: {
          tags,
          operationId: 'replaceCampaign',
          summary: 'Replace a draft campaign whole (409 once started)',
          description: 'Fields left out take their defaults; the stored estimate is cleared.',
          params: CampaignIdParams,
          body: CreateCampaignBody,
          response: { 200: CampaignSchema },
        },
      },
      async (request) =>
        viewOf(
          ctx,
          await changeCampaign(ctx, accountOf(request).id, request.params.id, {
            replace: request.body as CampaignInput,
          }),
        ),
    );

    app.patch(
      '/campaigns/:id',
      {
        config: conflicting,
        schema: {
          tags,
          operationId: 'updateCampaign',
          summary: 'Change fields of a draft campaign (409 once started)',
          description:
            'A field given replaces that field whole (`schedule`, `pacing` included); the stored estimate is cleared.',
          params: CampaignIdParams,
          body: UpdateCampaignBody,
          response: { 200: CampaignSchema },
        },
      },
      async (request) =>
        viewOf(
          ctx,
          await changeCampaign(ctx, accountOf(request).id, request.params.id, {
            patch: request.body as Partial<CampaignInput>,
          }),
        ),
    );

    app.delete(
      '/campaigns/:id',
      {
        config: conflicting,
        schema: {
          tags,
          operationId: 'deleteCampaign',
          summary: 'Delete a draft, completed or canceled campaign (its messages stay in the history)',
          params: CampaignIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeCampaign(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    app.post(
      '/campaigns/:id/estimate',
      {
        config: {
          ...found,
          errors: ['RESOURCE_NOT_FOUND', 'CONFLICT', 'TEMPLATE_NOT_APPROVED'] as ErrorCode[],
        },
        schema: {
          tags,
          operationId: 'estimateCampaign',
          summary: 'Estimate a draft: what its audience would cost now, by country and category',
          description:
            'Priced exactly as each send will be (the price table, the template’s category, each contact’s service window as it stands now, a sandbox key’s sends free), with the wallet’s balance and the shortfall, if any. Stored as `cost.estimated`. Nothing is sent or charged.',
          params: CampaignIdParams,
          response: { 200: EstimateSchema },
        },
      },
      async (request) => {
        const e = await estimateCampaign(ctx, actorOf(request), request.params.id);
        const m = (micros: number) => money(micros, ctx.prices.currency);
        return {
          campaignId: e.campaignId,
          recipients: e.recipients,
          skipped: e.skipped,
          cost: m(e.totalMicros),
          liveCost: m(e.liveTotalMicros),
          lines: e.lines.map((l) => ({
            country: l.country,
            category: l.category,
            rule: ruleView(l.rule)!,
            unitPrice: m(l.unitMicros),
            count: l.count,
            amount: m(l.amountMicros),
            liveAmount: m(l.liveAmountMicros),
            free: l.free,
          })),
          balance: m(e.balanceMicros),
          shortfall: m(Math.max(0, e.totalMicros - e.balanceMicros)),
          estimatedAt: e.estimatedAt.toISOString(),
        };
      },
    );

    const move = (
      path: string,
      operationId: string,
      summary: string,
      act: (request: FastifyRequest, id: string) => Promise<Parameters<typeof viewOf>[1]>,
      errors: ErrorCode[] = ['RESOURCE_NOT_FOUND', 'CONFLICT'],
      description?: string,
    ) =>
      app.post(
        `/campaigns/:id/${path}`,
        {
          config: { ...found, errors },
          schema: {
            tags,
            operationId,
            summary,
            ...(description ? { description } : {}),
            params: CampaignIdParams,
            response: { 200: CampaignSchema },
          },
        },
        async (request) => {
          const row = await act(request, (request.params as { id: string }).id);
          ctx.campaigns.wake();
          return viewOf(ctx, row);
        },
      );
    move(
      'start',
      'startCampaign',
      'Start a draft: its audience fixed, running now or scheduled for startAt',
      (request, id) => startCampaign(ctx, actorOf(request), id),
      ['RESOURCE_NOT_FOUND', 'CONFLICT', 'INSUFFICIENT_BALANCE', 'TEMPLATE_NOT_APPROVED'],
      'The audience is fixed (a recipient per contact; contacts opted out of marketing are skipped when the template is MARKETING) and priced as the estimate prices it; the wallet must hold the estimate (402 `INSUFFICIENT_BALANCE` with `requiredMicros`, `balanceMicros` and `shortfallMicros`; nothing is started). A sandbox key’s campaign sends through the sandbox, free. Each message is charged when it is sent.',
    );
    move('pause', 'pauseCampaign', 'Pause: nobody more is messaged until it resumes', (request, id) =>
      pauseCampaign(ctx, accountOf(request).id, id),
    );
    move('resume', 'resumeCampaign', 'Resume a paused campaign', (request, id) =>
      resumeCampaign(ctx, accountOf(request).id, id),
    );
    move(
      'cancel',
      'cancelCampaign',
      'Cancel: nobody more is messaged (those waiting are skipped); messages sent go on',
      (request, id) => cancelCampaign(ctx, accountOf(request).id, id),
    );

    app.get(
      '/campaigns/:id/recipients',
      {
        config: found,
        schema: {
          tags,
          operationId: 'listCampaignRecipients',
          summary: "A campaign's recipients: each contact's message, status, error and reply",
          params: CampaignIdParams,
          querystring: RecipientListQuery,
          response: { 200: listOf(RecipientSchema) },
        },
      },
      async (request) => {
        const campaign = await getCampaign(ctx, accountOf(request).id, request.params.id);
        const page = readPage(request.query);
        const rows = await listRecipients(ctx.db, campaign.id, page, {
          ...(request.query.status ? { status: request.query.status } : {}),
          ...(request.query.replied === undefined ? {} : { replied: request.query.replied }),
        });
        return pageOf(rows, page, toRecipient);
      },
    );
  };
}
