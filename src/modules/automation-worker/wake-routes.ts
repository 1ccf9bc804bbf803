// POST /sandbox/wake: sandbox time for automation. The current wait of a sandbox enrollment or
// journey run ends now, so a sequence or journey of days can be tried in seconds; send windows still
// apply. Sandbox keys only: a live key gets 403, and a live enrollment or run is refused (409), as
// waking it would send real messages early.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError, invalid } from '../../kernel/http/errors.ts';
import { dueEverywhere } from '../automation/index.ts';
import { RunSchema, toRun, wakeRun } from '../journeys/index.ts';
import { EnrollmentSchema, toEnrollment, WakeBody, wakeEnrollment } from '../sequences/index.ts';
import type { AutomationWorker } from './worker.ts';

/** The kernel's context and the services these routes uses. */
export interface WakeContext extends KernelContext {
  automation: AutomationWorker;
}

export function wakeRoutes(ctx: WakeContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/sandbox/wake',
      {
        config: {
          access: 'account',
          feature: 'automation',
          errors: ['FORBIDDEN', 'RESOURCE_NOT_FOUND', 'CONFLICT'],
        },
        schema: {
          tags: ['sequences', 'journeys'],
          operationId: 'wakeSandbox',
          summary: 'Sandbox: end the current wait of an enrollment or a journey run now',
          description:
            'Sandbox keys only (a live key gets 403). `enrollmentId`: the enrollment’s current step is due at once (answered with the enrollment). `runId`: the journey run’s wait ends at once: a wait leaves by next, a wait_for_reply by timeout (answered with the run). A send window still applies, and a webhook node still waits for its call.',
          body: WakeBody,
          response: {
            200: Type.Union([EnrollmentSchema, RunSchema], {
              description: 'The enrollment, or the run, as it stands now.',
            }),
          },
        },
      },
      async (request) => {
        if (request.principal!.mode !== 'sandbox') {
          throw new ApiError('FORBIDDEN', 'Only a sandbox key can wake an enrollment or a run.');
        }
        const { enrollmentId, runId } = request.body;
        if ((enrollmentId === undefined) === (runId === undefined))
          throw invalid('body', 'takes either enrollmentId or runId');
        const accountId = accountOf(request).id;
        const answer =
          runId !== undefined
            ? toRun(await wakeRun(ctx, accountId, runId))
            : toEnrollment(await wakeEnrollment(ctx, accountId, enrollmentId!));
        await dueEverywhere(ctx);
        return answer;
      },
    );
  };
}
