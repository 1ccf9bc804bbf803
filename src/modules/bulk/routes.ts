import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../app-context.ts';
import { accountOf } from '../../kernel/access.ts';
import {
  BulkContactJob,
  BulkContactsBody,
  BulkJobParams,
  MAX_BULK_CONTACTS,
  toContactJob,
} from './schemas.ts';
import { acceptContactsJob, type BulkServices, getContactsJob } from './service.ts';

export function bulkRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const s: BulkServices = ctx;
  const tags = ['bulk'];
  return async (app) => {
    app.post(
      '/bulk/contacts',
      {
        config: { access: 'account' },
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
        config: { access: 'account', errors: ['RESOURCE_NOT_FOUND'] },
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
  };
}
