// /voice/campaigns: calling a list of contacts with a published script (docs/voice.md § Campaigns).
// Plans from Business up.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { planOf } from '../accounts/index.ts';
import type { VoiceDialer } from '../calls/index.ts';
import { CallSchema, listCalls, toCall } from '../calls/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { countersOf, listCampaigns } from './repo.ts';
import {
  CampaignCallsQuery,
  CampaignIdParams,
  CampaignListQuery,
  CampaignSchema,
  CreateCampaignBody,
  toCampaign,
  UpdateCampaignBody,
} from './schemas.ts';
import {
  type CampaignInput,
  cancelCampaign,
  createCampaign,
  getCampaign,
  patchCampaign,
  pauseCampaign,
  removeCampaign,
  resumeCampaign,
  startCampaign,
  viewOf,
} from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface VoiceCampaignsContext extends KernelContext {
  prices: PriceTable;
  voice: VoiceDialer;
}

export function voiceCampaignRoutes(ctx: VoiceCampaignsContext): FastifyPluginAsyncTypebox {
  const tags = ['voice'];
  const account = { access: 'account', feature: 'voice' } as const;
  const found = { ...ON_RESOURCE, feature: 'voice' } as const;
  const planned = (request: Parameters<typeof accountOf>[0]) => {
    const acct = accountOf(request);
    return { id: acct.id, planCps: planOf(acct.planCode).voiceCallsPerSecond };
  };

  return async (app) => {
    app.post(
      '/voice/campaigns',
      {
        config: { ...account, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createVoiceCampaign',
          summary:
            'Create a voice campaign (a draft): a published script, an audience, calling hours, pacing, retries',
          description:
            'Every field is checked at once (400 with each fault): the script must be published, contact ids the account’s, calling hours within 08:00–21:00, calls per second within the plan’s. `estimatedCost` is what the audience’s calls would cost at most (each contact’s voice rate × the calls’ `maxDurationSeconds` in started minutes; unanswered calls cost nothing).',
          body: CreateCampaignBody,
          response: { 201: CampaignSchema },
        },
      },
      async (request, reply) => {
        const row = await createCampaign(ctx, planned(request), request.body as CampaignInput);
        reply.status(201);
        return viewOf(ctx, row);
      },
    );

    app.get(
      '/voice/campaigns',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listVoiceCampaigns',
          summary: 'List voice campaigns, newest first',
          querystring: CampaignListQuery,
          response: { 200: listOf(CampaignSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listCampaigns(ctx.db, accountOf(request).id, page, request.query.status);
        const counters = await countersOf(
          ctx.db,
          rows.map((r) => r.id),
        );
        return pageOf(rows, page, (r) => toCampaign(r, counters.get(r.id)!, ctx.prices.currency));
      },
    );

    app.get(
      '/voice/campaigns/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getVoiceCampaign',
          summary: 'Get a voice campaign with its live counters',
          params: CampaignIdParams,
          response: { 200: CampaignSchema },
        },
      },
      async (request) => viewOf(ctx, await getCampaign(ctx, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/voice/campaigns/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateVoiceCampaign',
          summary: 'Change a draft campaign (409 once started)',
          params: CampaignIdParams,
          body: UpdateCampaignBody,
          response: { 200: CampaignSchema },
        },
      },
      async (request) =>
        viewOf(
          ctx,
          await patchCampaign(
            ctx,
            planned(request),
            request.params.id,
            request.body as Partial<CampaignInput>,
          ),
        ),
    );

    app.delete(
      '/voice/campaigns/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'deleteVoiceCampaign',
          summary: 'Delete a draft, completed or canceled campaign (its calls stay in the history)',
          params: CampaignIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeCampaign(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    const move = (
      path: string,
      operationId: string,
      summary: string,
      act: (accountId: string, id: string, sandbox: boolean) => Promise<Parameters<typeof viewOf>[1]>,
    ) =>
      app.post(
        `/voice/campaigns/:id/${path}`,
        {
          config: { ...found, errors: ['CONFLICT'] },
          schema: { tags, operationId, summary, params: CampaignIdParams, response: { 200: CampaignSchema } },
        },
        async (request) => {
          const row = await act(
            accountOf(request).id,
            request.params.id,
            request.principal!.mode === 'sandbox',
          );
          ctx.voice.wake();
          return viewOf(ctx, row);
        },
      );
    move(
      'start',
      'startVoiceCampaign',
      'Start a draft: its audience fixed (a contact each), running now or scheduled for startAt; a sandbox key’s campaign calls the sandbox',
      (accountId, id, sandbox) => startCampaign(ctx, accountId, id, sandbox),
    );
    move('pause', 'pauseVoiceCampaign', 'Pause: no new call is placed until it resumes', (accountId, id) =>
      pauseCampaign(ctx, accountId, id),
    );
    move('resume', 'resumeVoiceCampaign', 'Resume a paused campaign', (accountId, id) =>
      resumeCampaign(ctx, accountId, id),
    );
    move(
      'cancel',
      'cancelVoiceCampaign',
      'Cancel: no new call; calls not yet placed are canceled, calls under way end as they will',
      (accountId, id) => cancelCampaign(ctx, accountId, id),
    );

    app.get(
      '/voice/campaigns/:id/calls',
      {
        config: found,
        schema: {
          tags,
          operationId: 'listVoiceCampaignCalls',
          summary: "A campaign's calls (every attempt), newest first",
          params: CampaignIdParams,
          querystring: CampaignCallsQuery,
          response: { 200: listOf(CallSchema) },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        await getCampaign(ctx, accountId, request.params.id);
        const page = readPage(request.query);
        return pageOf(
          await listCalls(ctx.db, accountId, page, { campaignId: request.params.id }),
          page,
          (row) => toCall(row, ctx.prices.currency),
        );
      },
    );
  };
}
