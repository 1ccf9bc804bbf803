// /journeys: graphs of steps a contact is taken through (docs/automation.md § Journeys), their runs
// with every step, and per-node statistics. Plans from Pro up.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { dueEverywhere, liquidDataIssue } from '../automation/index.ts';
import { contactIdNamedBy } from '../contacts/index.ts';
import { findRun, listJourneys, listRuns, stepsOf } from './repo.ts';
import { cancelRun, journeyStats } from './runs.ts';
import {
  CreateJourneyBody,
  JourneyIdParams,
  JourneyListQuery,
  JourneySchema,
  RunListQuery,
  RunParams,
  RunSchema,
  RunWithStepsSchema,
  StatsQuery,
  StatsSchema,
  TriggerBody,
  toJourney,
  toRun,
  toStep,
  UpdateJourneyBody,
} from './schemas.ts';
import {
  createJourney,
  getJourney,
  type JourneyInput,
  moveJourney,
  patchJourney,
  removeJourney,
} from './service.ts';
import { startRun } from './start.ts';

/** The kernel's context and the services these routes uses. */
export interface JourneysContext extends KernelContext {
  /** The automation worker (automation-worker/), told when runs or steps are due now. */
  automation: { dueNow(): void };
}

const MOVE_SUMMARIES = {
  publish:
    'Publish a draft (its graph is checked: 400 with a details entry per fault), or resume a paused journey',
  pause:
    'Pause a published journey: it starts no run, and its runs hold where they are until it is published again',
  archive: 'Archive a journey: its running and waiting runs are canceled; it can no longer change',
} as const;

export function journeyRoutes(ctx: JourneysContext): FastifyPluginAsyncTypebox {
  const tags = ['journeys'];
  const account = { access: 'account', feature: 'automation' } as const;
  const found = { ...ON_RESOURCE, feature: 'automation' } as const;

  return async (app) => {
    app.post(
      '/journeys',
      {
        config: { ...account, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createJourney',
          summary: 'Create a journey (a draft): an entry, nodes and the edges between them',
          description:
            'Every node’s config is checked now; the graph as a whole when it is published. The answer holds `signingSecret` (webhook nodes sign with it), shown this once.',
          body: CreateJourneyBody,
          response: { 201: JourneySchema },
        },
      },
      async (request, reply) => {
        const saved = await createJourney(ctx, accountOf(request).id, request.body as JourneyInput);
        reply.status(201);
        return toJourney(saved.row, saved.signingSecret);
      },
    );

    app.get(
      '/journeys',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listJourneys',
          summary: 'List journeys, newest first',
          querystring: JourneyListQuery,
          response: { 200: listOf(JourneySchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        return pageOf(await listJourneys(ctx.db, accountOf(request).id, page, request.query), page, (r) =>
          toJourney(r),
        );
      },
    );

    app.get(
      '/journeys/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getJourney',
          summary: 'Get a journey (its current version)',
          params: JourneyIdParams,
          response: { 200: JourneySchema },
        },
      },
      async (request) => toJourney(await getJourney(ctx.db, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/journeys/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateJourney',
          summary:
            'Change a journey: a draft in place; a published or paused one is checked as a publish is and gets a new version (runs keep theirs)',
          params: JourneyIdParams,
          body: UpdateJourneyBody,
          response: { 200: JourneySchema },
        },
      },
      async (request) =>
        toJourney(
          await patchJourney(
            ctx,
            accountOf(request).id,
            request.params.id,
            request.body as Partial<JourneyInput>,
          ),
        ),
    );

    app.delete(
      '/journeys/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'deleteJourney',
          summary: 'Delete a draft or archived journey, with its runs (archive a published one first)',
          params: JourneyIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeJourney(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    for (const move of ['publish', 'pause', 'archive'] as const) {
      app.post(
        `/journeys/:id/${move}`,
        {
          config: { ...found, errors: ['CONFLICT'] },
          schema: {
            tags,
            operationId: `${move}Journey`,
            summary: MOVE_SUMMARIES[move],
            params: JourneyIdParams,
            response: { 200: JourneySchema },
          },
        },
        async (request) => toJourney(await moveJourney(ctx, accountOf(request).id, request.params.id, move)),
      );
    }

    app.post(
      '/journeys/:id/trigger',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'triggerJourney',
          summary: 'Start a run for a contact (202 with the run; it proceeds in the background)',
          description:
            'The journey must be published and its `reentry` must allow it (409 otherwise). `to` names the contact by number and makes it when the account has none. Started by a sandbox key, the run’s messages go to the sandbox. Send an `Idempotency-Key` to start at most one run whatever is retried.',
          params: JourneyIdParams,
          body: TriggerBody,
          response: { 202: RunSchema },
        },
      },
      async (request, reply) => {
        const acct = accountOf(request);
        const tooMuch = liquidDataIssue(request.body.data, 'data');
        if (tooMuch) throw invalid(tooMuch.field, tooMuch.issue);
        const journey = await getJourney(ctx.db, acct.id, request.params.id);
        // Refused before a contact is made for `to` (startRun checks again, under its lock).
        if (journey.status !== 'published') {
          throw conflict(`The journey is ${journey.status}: only a published journey starts runs.`);
        }
        const contactId = await contactIdNamedBy(ctx, acct, request.body);
        const run = await ctx.db.transaction((tx) =>
          startRun(tx, ctx, journey, contactId, {
            sandbox: request.principal!.mode === 'sandbox',
            triggerData: request.body.data ?? {},
          }),
        );
        await dueEverywhere(ctx);
        reply.status(202);
        return toRun(run);
      },
    );

    app.get(
      '/journeys/:id/runs',
      {
        config: found,
        schema: {
          tags,
          operationId: 'listJourneyRuns',
          summary: "List a journey's runs, newest first",
          params: JourneyIdParams,
          querystring: RunListQuery,
          response: { 200: listOf(RunSchema) },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        await getJourney(ctx.db, accountId, request.params.id);
        const page = readPage(request.query);
        return pageOf(await listRuns(ctx.db, accountId, request.params.id, page, request.query), page, toRun);
      },
    );

    app.get(
      '/journeys/:id/runs/:runId',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getJourneyRun',
          summary: 'Get a run with its steps: every node it entered, how it left, what it did',
          params: RunParams,
          response: { 200: RunWithStepsSchema },
        },
      },
      async (request) => {
        const run = await findRun(ctx.db, accountOf(request).id, request.params.id, request.params.runId);
        if (!run) throw notFound('journey run');
        return { ...toRun(run), steps: (await stepsOf(ctx.db, run.id)).map(toStep) };
      },
    );

    app.post(
      '/journeys/:id/runs/:runId/cancel',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'cancelJourneyRun',
          summary: 'Cancel a running or waiting run (409 once it has ended)',
          params: RunParams,
          response: { 200: RunSchema },
        },
      },
      async (request) =>
        toRun(await cancelRun(ctx, accountOf(request).id, request.params.id, request.params.runId)),
    );

    app.get(
      '/journeys/:id/stats',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getJourneyStats',
          summary:
            'Per node: runs that entered, completed, failed and wait there, and the edges they left by',
          params: JourneyIdParams,
          querystring: StatsQuery,
          response: { 200: StatsSchema },
        },
      },
      async (request) => {
        const journey = await getJourney(ctx.db, accountOf(request).id, request.params.id);
        return journeyStats(ctx.db, journey, request.query.version ?? null);
      },
    );
  };
}
