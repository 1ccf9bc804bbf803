import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Channels } from '../../channels/registry.ts';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import type { AcceptQueue } from '../messages/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import { BulkMessageJob, BulkMessagesBody, MAX_BULK_RECIPIENTS, toMessageJob } from './messages-schemas.ts';
import { acceptBulkSend, getBulkSend } from './messages-service.ts';
import {
  BulkContactJob,
  BulkContactsBody,
  BulkJobParams,
  MAX_BULK_CONTACTS,
  toContactJob,
} from './schemas.ts';
import { acceptContactsJob, type BulkServices, getContactsJob } from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface BulkContext extends KernelContext {
  approvedTemplates: ApprovedTemplates;
  prices: PriceTable;
  acceptQueue: AcceptQueue;
  channels: Channels;
}

export function bulkRoutes(ctx: BulkContext): FastifyPluginAsyncTypebox {
  const s: BulkServices = ctx;
  const tags = ['bulk'];
  return async (app) => {
    app.post(
      '/bulk/contacts',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'importContacts',
          summary: `Import 1–${MAX_BULK_CONTACTS} contacts in the background`,
          description:
            'Answers 202 at once with the queued job; poll GET /bulk/contacts/{jobId}, or subscribe to `bulk_job.completed`. Rows are applied in order; a row that fails (validation, or CONFLICT in create mode) fails alone. Send an Idempotency-Key to retry safely.',
          body: BulkContactsBody,
          response: { 202: BulkContactJob },
        },
      },
      async (request, reply) => {
        const job = await acceptContactsJob(s, accountOf(request).id, request.body);
        reply.status(202);
        return toContactJob(job, []);
      },
    );

    app.get(
      '/bulk/contacts/:jobId',
      {
        config: { agents: true, access: 'account', errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'getContactImport',
          summary: 'Get a bulk contact job: its status, counts and the outcome of every processed item',
          params: BulkJobParams,
          response: { 200: BulkContactJob },
        },
      },
      async (request) => {
        const { job, results } = await getContactsJob(s, accountOf(request).id, request.params.jobId);
        return toContactJob(job, results);
      },
    );

    app.post(
      '/bulk/messages',
      {
        config: {
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'TEMPLATE_NOT_APPROVED', 'INSUFFICIENT_BALANCE'],
        },
        schema: {
          tags,
          operationId: 'sendBulkMessages',
          summary: `Send one message to each of 1–${MAX_BULK_RECIPIENTS} recipients`,
          description:
            'The wallet must pay for the whole batch, or nothing is sent (402). Recipients refused on their own (a bad number, wrong parameters, a closed service window) are listed with their error; the others are accepted at once and sent in the background. Answers 202 with the job; poll GET /bulk/messages/{jobId} or subscribe to `bulk_job.completed` and `message.*`.',
          body: BulkMessagesBody,
          response: { 202: BulkMessageJob },
        },
      },
      async (request, reply) => {
        const { job, outcomes } = await acceptBulkSend(
          ctx,
          { account: accountOf(request), mode: request.principal!.mode },
          request.body,
        );
        reply.status(202);
        return toMessageJob(job, outcomes);
      },
    );

    app.get(
      '/bulk/messages/:jobId',
      {
        config: { access: 'account', errors: ['RESOURCE_NOT_FOUND'] },
        schema: {
          tags,
          operationId: 'getBulkMessages',
          summary: "Get a bulk send: its status, counts, and each recipient's message and status",
          params: BulkJobParams,
          response: { 200: BulkMessageJob },
        },
      },
      async (request) => {
        const { job, outcomes, live } = await getBulkSend(ctx, accountOf(request).id, request.params.jobId);
        return toMessageJob(job, outcomes, live);
      },
    );
  };
}
