// /webhooks (an account's own events) and /partner/webhooks (the events of all a partner's
// accounts, each carrying its accountId): the same resource for two kinds of owner.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, partnerOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { ReplayBody, ReplaySchema } from '../events/index.ts';
import { MAX_REPLAY_EVENTS, replayEvents } from './replay.ts';
import { attemptsOf, type DeliveryRow, listDeliveries, listEndpoints, type Owner } from './repo.ts';
import {
  CreateWebhookBody,
  DeliveryListQuery,
  DeliveryParams,
  DeliverySchema,
  RotateSecretBody,
  toDelivery,
  toWebhook,
  UpdateWebhookBody,
  WebhookIdParams,
  WebhookListQuery,
  WebhookSchema,
  WebhookWithSecret,
} from './schemas.ts';
import {
  changeEndpoint,
  createEndpoint,
  getEndpoint,
  removeEndpoint,
  retryDelivery,
  rotateSecret,
  sendTestEvent,
  type WebhookServices,
} from './service.ts';

interface Scope {
  access: 'account' | 'partner';
  base: string;
  /** Prefix of operation ids, so the two sets stay distinct in the OpenAPI document. */
  op: string;
  noun: string;
  owner: (request: FastifyRequest) => Owner;
}

export const ACCOUNT_WEBHOOKS: Scope = {
  access: 'account',
  base: '/webhooks',
  op: '',
  noun: 'webhook',
  owner: (request) => ({ kind: 'account', id: accountOf(request).id }),
};

export const PARTNER_WEBHOOKS: Scope = {
  access: 'partner',
  base: '/partner/webhooks',
  op: 'Partner',
  noun: 'partner webhook',
  owner: (request) => ({ kind: 'partner', id: partnerOf(request) }),
};

export function webhookRoutes(ctx: KernelContext, scope: Scope): FastifyPluginAsyncTypebox {
  const s: WebhookServices = ctx;
  const { base, op, noun } = scope;
  const tags = [scope.access === 'account' ? 'webhooks' : 'partner'];
  const found = { access: scope.access, errors: ['RESOURCE_NOT_FOUND' as const] };
  const showDeliveries = async (rows: DeliveryRow[]) => {
    const attempts = await attemptsOf(
      ctx.db,
      rows.map((r) => r.id),
    );
    return (row: DeliveryRow) => toDelivery(row, attempts.get(row.id) ?? []);
  };

  return async (app) => {
    app.post(
      base,
      {
        config: { access: scope.access, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: `create${op}Webhook`,
          summary: `Register a ${noun}; the answer shows its signing secret, once`,
          // modules/events/visibility.ts: webhooks are not filtered by who made them.
          description:
            'It receives every event its filters take, whoever made it (it is configuration, not a person’s): only callers that see every event may make one (API keys, partner keys and admins; a console agent gets 403).',
          body: CreateWebhookBody,
          response: { 201: WebhookWithSecret },
        },
      },
      async (request, reply) => {
        const { row, secret } = await createEndpoint(s, scope.owner(request), request.body);
        reply.status(201);
        return { ...toWebhook(row, ctx.now()), secret };
      },
    );

    app.get(
      base,
      {
        config: { access: scope.access },
        schema: {
          tags,
          operationId: `list${op}Webhooks`,
          summary: `List ${noun}s, newest first`,
          querystring: WebhookListQuery,
          response: { 200: listOf(WebhookSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const rows = await listEndpoints(ctx.db, scope.owner(request), page, request.query);
        return pageOf(rows, page, (row) => toWebhook(row, ctx.now()));
      },
    );

    app.get(
      `${base}/:id`,
      {
        config: found,
        schema: {
          tags,
          operationId: `get${op}Webhook`,
          summary: `Get a ${noun}`,
          params: WebhookIdParams,
          response: { 200: WebhookSchema },
        },
      },
      async (request) => toWebhook(await getEndpoint(s, scope.owner(request), request.params.id), ctx.now()),
    );

    app.patch(
      `${base}/:id`,
      {
        config: found,
        schema: {
          tags,
          operationId: `update${op}Webhook`,
          summary: `Change a ${noun}: url, events, description, enabled`,
          params: WebhookIdParams,
          body: UpdateWebhookBody,
          response: { 200: WebhookSchema },
        },
      },
      async (request) =>
        toWebhook(await changeEndpoint(s, scope.owner(request), request.params.id, request.body), ctx.now()),
    );

    app.delete(
      `${base}/:id`,
      {
        config: found,
        schema: {
          tags,
          operationId: `delete${op}Webhook`,
          summary: `Delete a ${noun} and its delivery log`,
          params: WebhookIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await removeEndpoint(s, scope.owner(request), request.params.id);
        reply.status(204);
      },
    );

    app.post(
      `${base}/:id/rotate-secret`,
      {
        config: found,
        schema: {
          tags,
          operationId: `rotate${op}WebhookSecret`,
          summary: 'Replace the signing secret; the old one also signs for 24 hours',
          params: WebhookIdParams,
          body: RotateSecretBody,
          response: { 201: WebhookWithSecret },
        },
      },
      async (request, reply) => {
        const { row, secret } = await rotateSecret(s, scope.owner(request), request.params.id, request.body);
        reply.status(201);
        return { ...toWebhook(row, ctx.now()), secret };
      },
    );

    app.post(
      `${base}/:id/test`,
      {
        config: { ...found, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: `test${op}Webhook`,
          summary: 'Send a webhook.test event to this webhook only',
          params: WebhookIdParams,
          response: { 202: DeliverySchema },
        },
      },
      async (request, reply) => {
        const delivery = await sendTestEvent(s, scope.owner(request), request.params.id);
        reply.status(202);
        return (await showDeliveries([delivery]))(delivery);
      },
    );

    app.post(
      `${base}/:id/replay`,
      {
        config: { ...found, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: `replay${op}WebhookEvents`,
          summary: 'Deliver past events to this webhook again, with their original webhook-id',
          description: `Makes a new delivery to this webhook for every past event ${
            scope.access === 'account' ? 'of the account' : 'of the partner’s accounts'
          } created in [since, until) that the webhook’s filters (and \`types\`, when given) take, in addition to any delivery it already had: for a receiver that was down or answered wrongly. Each carries the stored payload and the event id as \`webhook-id\`, so a receiver that drops duplicates by it stays correct. At most ${MAX_REPLAY_EVENTS} events per call (400 beyond: split the period). Only events still kept can be replayed (\`TIDINGS_EVENT_RETENTION_DAYS\`, ${ctx.config.eventRetentionDays} days here); \`webhook.test\` events are not. A disabled webhook answers 409.`,
          params: WebhookIdParams,
          body: ReplayBody,
          response: { 202: ReplaySchema },
        },
      },
      async (request, reply) => {
        const result = await replayEvents(s, scope.owner(request), request.params.id, request.body);
        reply.status(202);
        return {
          replayed: result.replayed,
          since: result.since.toISOString(),
          until: result.until.toISOString(),
        };
      },
    );

    app.get(
      `${base}/:id/deliveries`,
      {
        config: found,
        schema: {
          tags,
          operationId: `list${op}WebhookDeliveries`,
          summary: 'Deliveries to this webhook with every attempt, newest first',
          params: WebhookIdParams,
          querystring: DeliveryListQuery,
          response: { 200: listOf(DeliverySchema) },
        },
      },
      async (request) => {
        const endpoint = await getEndpoint(s, scope.owner(request), request.params.id);
        const page = readPage(request.query);
        const rows = await listDeliveries(ctx.db, endpoint.id, page, request.query);
        return pageOf(rows, page, await showDeliveries(rows));
      },
    );

    app.post(
      `${base}/:id/deliveries/:deliveryId/retry`,
      {
        config: { ...found, errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: `retry${op}WebhookDelivery`,
          summary: 'Attempt a delivery again now (a failed one gets one more attempt)',
          params: DeliveryParams,
          response: { 202: DeliverySchema },
        },
      },
      async (request, reply) => {
        const { id, deliveryId } = request.params;
        const delivery = await retryDelivery(s, scope.owner(request), id, deliveryId);
        reply.status(202);
        return (await showDeliveries([delivery]))(delivery);
      },
    );
  };
}
