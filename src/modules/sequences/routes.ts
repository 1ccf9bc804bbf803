// /sequences: timed steps sent to enrolled contacts (docs/automation.md § Sequences), their
// enrollments and bulk enrollment jobs. Plans from Pro up. (POST /sandbox/wake: automation/wake-routes.ts.)
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { dueEverywhere } from '../automation/index.ts';
import { BulkJobParams, findJob, resultsOf } from '../bulk/index.ts';
import { acceptEnrollJob, toEnrollJob } from './bulk-enroll-job.ts';
import { endEnrollment, enroll } from './enroll.ts';
import { findEnrollment, listEnrollments, listSequences } from './repo.ts';
import {
  BulkEnrollmentJob,
  CreateSequenceBody,
  EnrollBody,
  EnrollmentListQuery,
  EnrollmentParams,
  EnrollmentSchema,
  SequenceIdParams,
  SequenceListQuery,
  SequenceSchema,
  toEnrollment,
  toSequence,
  UpdateSequenceBody,
} from './schemas.ts';
import { createSequence, getSequence, moveSequence, patchSequence, removeSequence } from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface SequencesContext extends KernelContext {
  /** The automation worker (automation-worker/), told when runs or steps are due now. */
  automation: { dueNow(): void };
}

const MOVE_SUMMARIES = {
  publish: 'Publish a draft: it becomes active (version 1) and enrols contacts',
  pause: 'Pause an active sequence: no step is sent and no contact enrolled until it is resumed',
  resume: 'Resume a paused sequence (steps more than an hour overdue are skipped as past_due)',
  archive: 'Archive a sequence: its active enrollments exit (reason archived); it can no longer change',
} as const;

export function sequenceRoutes(ctx: SequencesContext): FastifyPluginAsyncTypebox {
  const tags = ['sequences'];
  const account = { access: 'account', feature: 'automation' } as const;
  const found = { ...ON_RESOURCE, feature: 'automation' } as const;

  return async (app) => {
    app.post(
      '/sequences',
      {
        config: { ...account, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createSequence',
          summary: 'Create a sequence (a draft): 1–20 timed steps, how contacts enrol and exit',
          body: CreateSequenceBody,
          response: { 201: SequenceSchema },
        },
      },
      async (request, reply) => {
        const row = await createSequence(ctx, accountOf(request).id, request.body);
        reply.status(201);
        return toSequence(row);
      },
    );

    app.get(
      '/sequences',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listSequences',
          summary: 'List sequences, newest first',
          querystring: SequenceListQuery,
          response: { 200: listOf(SequenceSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        return pageOf(
          await listSequences(ctx.db, accountOf(request).id, page, request.query),
          page,
          toSequence,
        );
      },
    );

    app.get(
      '/sequences/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getSequence',
          summary: 'Get a sequence (its current version)',
          params: SequenceIdParams,
          response: { 200: SequenceSchema },
        },
      },
      async (request) => toSequence(await getSequence(ctx.db, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/sequences/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateSequence',
          summary:
            'Change a sequence: a draft in place; a published one gets a new version (enrollments keep theirs)',
          params: SequenceIdParams,
          body: UpdateSequenceBody,
          response: { 200: SequenceSchema },
        },
      },
      async (request) =>
        toSequence(await patchSequence(ctx, accountOf(request).id, request.params.id, request.body)),
    );

    app.delete(
      '/sequences/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'deleteSequence',
          summary: 'Delete a draft or archived sequence, with its enrollments (archive an active one first)',
          params: SequenceIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeSequence(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    for (const move of ['publish', 'pause', 'resume', 'archive'] as const) {
      app.post(
        `/sequences/:id/${move}`,
        {
          config: { ...found, errors: ['CONFLICT'] },
          schema: {
            tags,
            operationId: `${move}Sequence`,
            summary: MOVE_SUMMARIES[move],
            params: SequenceIdParams,
            response: { 200: SequenceSchema },
          },
        },
        async (request) =>
          toSequence(await moveSequence(ctx, accountOf(request).id, request.params.id, move)),
      );
    }

    app.post(
      '/sequences/:id/enrollments',
      {
        config: { ...found, errors: ['CONFLICT'], bodyRequired: true },
        schema: {
          tags,
          operationId: 'createEnrollment',
          summary: 'Enrol one contact (201), or up to 1,000 in the background (202 with a bulk job)',
          description:
            'The sequence must be active, the contact opted in, and the sequence’s `reenroll` must allow it (409 otherwise). Enrolled by a sandbox key, the contact’s steps go to the sandbox.',
          params: SequenceIdParams,
          body: EnrollBody,
          response: { 201: EnrollmentSchema, 202: BulkEnrollmentJob },
        },
      },
      async (request, reply) => {
        const { contactId, contactIds } = request.body;
        if ((contactId === undefined) === (contactIds === undefined))
          throw invalid('body', 'takes either contactId or contactIds');
        const accountId = accountOf(request).id;
        const sandbox = request.principal!.mode === 'sandbox';
        const sequence = await getSequence(ctx.db, accountId, request.params.id);
        if (contactIds) {
          if (sequence.status !== 'active') {
            throw conflict(`The sequence is ${sequence.status}: only an active sequence enrols contacts.`);
          }
          const job = await acceptEnrollJob(ctx, sequence, contactIds, sandbox);
          reply.status(202);
          return toEnrollJob(job, []);
        }
        let due = false;
        const row = await ctx.db.transaction((tx) =>
          enroll(tx, { ...ctx, runsDue: () => (due = true) }, sequence, contactId!, { sandbox }),
        );
        // A first step due at once (no delay, PT0S) is sent now, not at the timer's next look.
        if (due) await dueEverywhere(ctx);
        reply.status(201);
        return toEnrollment(row);
      },
    );

    app.get(
      '/sequences/:id/enrollments',
      {
        config: found,
        schema: {
          tags,
          operationId: 'listEnrollments',
          summary: "List a sequence's enrollments, newest first",
          params: SequenceIdParams,
          querystring: EnrollmentListQuery,
          response: { 200: listOf(EnrollmentSchema) },
        },
      },
      async (request) => {
        const accountId = accountOf(request).id;
        await getSequence(ctx.db, accountId, request.params.id);
        const page = readPage(request.query);
        const rows = await listEnrollments(ctx.db, accountId, request.params.id, page, request.query);
        return pageOf(rows, page, toEnrollment);
      },
    );

    app.get(
      '/sequences/:id/enrollments/:enrollmentId',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getEnrollment',
          summary: 'Get an enrollment: where it stands, step by step',
          params: EnrollmentParams,
          response: { 200: EnrollmentSchema },
        },
      },
      async (request) => {
        const { id, enrollmentId } = request.params;
        const row = await findEnrollment(ctx.db, accountOf(request).id, id, enrollmentId);
        if (!row) throw notFound('enrollment');
        return toEnrollment(row);
      },
    );

    app.delete(
      '/sequences/:id/enrollments/:enrollmentId',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'cancelEnrollment',
          summary: 'Cancel an active enrollment (kept, as canceled with exitReason manual)',
          params: EnrollmentParams,
          response: { 204: Type.Null({ description: 'Canceled.' }) },
        },
      },
      async (request, reply) => {
        const { id, enrollmentId } = request.params;
        await ctx.db.transaction(async (tx) => {
          const row = await findEnrollment(tx, accountOf(request).id, id, enrollmentId, { forUpdate: true });
          if (!row) throw notFound('enrollment');
          if (row.status !== 'active') throw conflict(`The enrollment has ended (${row.status}).`);
          await endEnrollment(tx, ctx, row, { status: 'canceled', exitReason: 'manual' });
        });
        reply.status(204);
      },
    );

    app.get(
      '/bulk/enrollments/:jobId',
      {
        config: { ...found, errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'getEnrollmentJob',
          summary: 'Get a bulk enrollment job: its status, counts and the outcome of every processed contact',
          params: BulkJobParams,
          response: { 200: BulkEnrollmentJob },
        },
      },
      async (request) => {
        const job = await findJob(ctx.db, accountOf(request).id, 'enrollments', request.params.jobId);
        if (!job) throw notFound('bulk enrollment job');
        return toEnrollJob(job, await resultsOf(ctx.db, job.id, job.processed));
      },
    );
  };
}
