// Operations: liveness, readiness, Prometheus metrics, and the error documentation page.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { readErrorDocs, renderErrorDocs } from './error-docs.ts';

export function opsRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const errorPage = renderErrorDocs(readErrorDocs());
  const Status = Type.Object(
    { status: Type.String({ description: '`ok` (liveness) or `ready` (readiness).', examples: ['ok'] }) },
    { title: 'HealthStatus' },
  );

  return async (app) => {
    app.get(
      '/healthz',
      {
        schema: {
          tags: ['operations'],
          operationId: 'healthz',
          summary: 'Liveness: the process answers',
          response: { 200: { ...Status, description: 'The process is up.' } },
        },
      },
      async () => ({ status: 'ok' }),
    );

    app.get(
      '/readyz',
      {
        schema: {
          tags: ['operations'],
          operationId: 'readyz',
          summary: 'Readiness: the database answers',
          response: { 200: { ...Status, description: 'The database answers: ready for traffic.' } },
        },
      },
      async () => {
        try {
          await ctx.db.query('SELECT 1');
        } catch {
          throw new ApiError('SERVICE_UNAVAILABLE', 'The database is unreachable.', {
            headers: { 'retry-after': '5' },
          });
        }
        return { status: 'ready' };
      },
    );

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.type(ctx.metrics.registry.contentType);
      return ctx.metrics.registry.metrics();
    });

    app.get('/docs/errors', { schema: { hide: true } }, async (_request, reply) => {
      reply.type('text/html; charset=utf-8');
      return errorPage;
    });
  };
}
