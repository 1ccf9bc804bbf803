// /voice/calls: placing calls, their history, cancel and hang-up (docs/voice.md § Calls); and the
// sandbox's key presses. Plans from Business up.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Channels } from '../../channels/registry.ts';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { PeriodQuery, periodOf } from '../../kernel/http/period.ts';
import { normalizePhone } from '../../kernel/values/phones.ts';
import type { PriceTable } from '../pricing/index.ts';
import type { VoiceDialer } from './dialer.ts';
import { listCalls } from './repo.ts';
import {
  CallIdParams,
  CallListQuery,
  CallSchema,
  CreateCallBody,
  DigitsBody,
  toCall,
  UsageSchema,
} from './schemas.ts';
import { type CallInput, cancelCall, createCall, getCall, pressKeys } from './service.ts';
import { voiceUsage } from './usage.ts';

/** The kernel's context and the services these routes uses. */
export interface CallsContext extends KernelContext {
  channels: Channels;
  prices: PriceTable;
  voice: VoiceDialer;
}

export function callRoutes(ctx: CallsContext): FastifyPluginAsyncTypebox {
  const tags = ['voice'];
  const account = { access: 'account', feature: 'voice' } as const;
  const found = { ...ON_RESOURCE, feature: 'voice' } as const;
  const services = () => ({ ...ctx, voice: ctx.voice });
  const view = (row: Parameters<typeof toCall>[0]) => toCall(row, ctx.prices.currency);

  return async (app) => {
    app.post(
      '/voice/calls',
      {
        config: { ...account, errors: ['CONFLICT', 'INSUFFICIENT_BALANCE'] },
        schema: {
          tags,
          operationId: 'createCall',
          summary: 'Place a call with a published voice script (202: queued; it proceeds in the background)',
          description:
            'The script’s texts are rendered now (Liquid over `contact` and `variables`; 400 naming `variables` when one cannot be, or renders past what the script’s voice speaks: 3000 bytes of UTF-8 with a Polly voice or none, 5000 with a Google voice, 4096 with man, woman or alice). The call is queued, then placed as the account’s calls per second allow; `call.status_changed` tells each move. On Twilio the wallet must pay the first minute (402), and the estimate is held when the call is placed. A sandbox key’s calls, and every call on the sandbox channel, are simulated by number (docs/voice.md § Sandbox) and never charged. Send an `Idempotency-Key` to place at most one call whatever is retried.',
          body: CreateCallBody,
          response: { 202: CallSchema },
        },
      },
      async (request, reply) => {
        const row = await createCall(services(), accountOf(request), request.body as CallInput, {
          sandbox: request.principal!.mode === 'sandbox',
        });
        reply.status(202);
        return view(row);
      },
    );

    app.get(
      '/voice/calls',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listCalls',
          summary: 'List calls, newest first',
          querystring: CallListQuery,
          response: { 200: listOf(CallSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const acct = accountOf(request);
        const to =
          request.query.to === undefined
            ? undefined
            : (normalizePhone(request.query.to, acct.countryCode) ?? request.query.to);
        return pageOf(
          await listCalls(ctx.db, acct.id, page, { status: request.query.status, to }),
          page,
          view,
        );
      },
    );

    app.get(
      '/voice/usage',
      {
        config: account,
        schema: {
          tags,
          operationId: 'getVoiceUsage',
          summary: 'Calls, answered calls, billable minutes and cost over a period, by status and by country',
          description:
            'Calls are counted by when they were made; `from` defaults to the start of the month (UTC), `to` to now. 400 when `from` is not before `to`.',
          querystring: PeriodQuery,
          response: { 200: UsageSchema },
        },
      },
      async (request) => {
        const { from, to } = periodOf(request.query, ctx.now());
        return voiceUsage(ctx.db, accountOf(request).id, from, to, ctx.prices.currency);
      },
    );

    app.get(
      '/voice/calls/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getCall',
          summary: 'Get a call: its status, who answered, the digits pressed, its duration and cost',
          params: CallIdParams,
          response: { 200: CallSchema },
        },
      },
      async (request) => view(await getCall(ctx, accountOf(request).id, request.params.id)),
    );

    app.post(
      '/voice/calls/:id/cancel',
      {
        config: { ...found, errors: ['CONFLICT', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'cancelCall',
          summary: 'Cancel a call not yet answered, or hang up one in progress',
          description:
            'queued, initiated or ringing → canceled; in_progress → hung up, completed (billed to the minute); an ended call → 409. A call being placed at this instant is canceled as soon as the provider has it (it may stay queued for a moment).',
          params: CallIdParams,
          response: { 200: CallSchema },
        },
      },
      async (request) => view(await cancelCall(services(), accountOf(request).id, request.params.id)),
    );

    app.post(
      '/sandbox/calls/:id/digits',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags: ['sandbox'],
          operationId: 'pressSandboxCallDigits',
          summary: 'Press keys on a sandbox call (taken by its next gather, at once if one is waiting)',
          description: 'Sandbox calls only (409 for a Twilio call, or a call that has ended).',
          params: CallIdParams,
          body: DigitsBody,
          response: { 200: CallSchema },
        },
      },
      async (request) =>
        view(await pressKeys(services(), accountOf(request).id, request.params.id, request.body.digits)),
    );
  };
}
