// Twilio's requests about an account's calls, under /api/v1/callbacks/twilio/voice/{accountId}:
//   POST …             status callbacks (initiated, ringing, answered, completed);
//   POST …/answer      the TwiML of an answered call;
//   POST …/gather      a gather's digits (or none), answered with what comes next;
//   POST …/node        the TwiML of the node an action goes on to.
// Form-encoded, signed with X-Twilio-Signature; no API key. The sandbox simulator posts the same
// requests. What to do with them is callbacks.ts's.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Channels } from '../../channels/registry.ts';
import type { FormParams } from '../../channels/voice.ts';
import type { KernelContext } from '../../kernel/context.ts';
import type { ErrorCode } from '../../kernel/http/errors.ts';
import { TwilioVoiceForm } from '../callbacks/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { answerTwiml, receiveStatus, type VoiceCallback } from './callbacks.ts';

/** The kernel's context and the services these routes uses. */
export interface CallCallbacksContext extends KernelContext {
  channels: Channels;
  prices: PriceTable;
}

const Params = Type.Object({ accountId: Type.String({ maxLength: 100 }) });
const Query = Type.Object(
  {
    call: Type.Optional(
      Type.String({ maxLength: 100, description: 'The call (call_…), as Tidings gave it in the URL.' }),
    ),
    node: Type.Optional(Type.String({ maxLength: 40 })),
    attempt: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
  },
  { additionalProperties: false },
);

const TwimlAnswer = Type.String({
  description: 'TwiML (text/xml).',
  examples: [
    '<?xml version="1.0" encoding="UTF-8"?><Response><Say>Your appointment is tomorrow.</Say></Response>',
  ],
});

/** A form body as Twilio sends it: a repeated field becomes an array. */
export function formOf(body: unknown): FormParams {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '';
  const params: FormParams = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const before = params[name];
    params[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
  }
  return params;
}

export function voiceCallbackRoutes(ctx: CallCallbacksContext): FastifyPluginAsyncTypebox {
  const tags = ['callbacks'];
  const errors: ErrorCode[] = ['INVALID_SIGNATURE', 'INVALID_REQUEST'];
  const rawBody = { schema: TwilioVoiceForm, contentType: 'application/x-www-form-urlencoded' };

  const callbackOf = (
    request: FastifyRequest<{ Params: { accountId: string }; Querystring: { call?: string } }>,
  ): VoiceCallback => {
    const signature = request.headers[ctx.channels.voiceCallbacks.signatureHeader];
    return {
      accountId: request.params.accountId,
      url: `${ctx.config.publicBaseUrl}${request.url}`,
      signature: Array.isArray(signature) ? signature[0] : signature,
      params: formOf(request.body),
      callId: request.query.call ?? null,
    };
  };

  return async (app) => {
    // The signature covers the form's fields as sent: read them here, not through a JSON parser.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    app.post(
      '/twilio/voice/:accountId',
      {
        config: { errors, rawBody },
        schema: {
          tags,
          operationId: 'receiveTwilioVoiceStatus',
          summary: "A call's progress from Twilio (form-encoded, signed with X-Twilio-Signature)",
          description:
            'Twilio’s status callbacks (initiated, ringing, answered, completed, and busy, no-answer, failed, canceled), applied through the call’s status machine and emitted as `call.status_changed`. A repeated (CallSid, SequenceNumber) is ignored, and so is one that would move the call back. A missing or wrong signature is refused with 401; nothing changes.',
          params: Params,
          querystring: Query,
          response: {
            200: Type.Object(
              { applied: Type.Boolean({ description: 'Whether it changed the call.' }) },
              {
                title: 'VoiceCallbackAnswer',
                description: 'Received; `applied` says whether it changed the call.',
              },
            ),
          },
        },
      },
      async (request) => receiveStatus(ctx, callbackOf(request)),
    );

    const twimlRoute = (
      path: string,
      operationId: string,
      summary: string,
      requestOf: (
        request: FastifyRequest<{ Querystring: { node?: string; attempt?: number } }>,
        params: FormParams,
      ) => Parameters<typeof answerTwiml>[2],
    ) =>
      app.post(
        `/twilio/voice/:accountId/${path}`,
        {
          config: { errors, rawBody },
          schema: {
            tags,
            operationId,
            summary,
            params: Params,
            querystring: Query,
            produces: ['text/xml'],
            response: { 200: TwimlAnswer },
          },
        },
        async (request, reply) => {
          const cb = callbackOf(request);
          const twiml = await answerTwiml(ctx, cb, requestOf(request, cb.params));
          reply.type('text/xml; charset=utf-8');
          return twiml;
        },
      );

    twimlRoute(
      'answer',
      'answerTwilioVoiceCall',
      'The TwiML of an answered call (Twilio fetches it)',
      () => ({ kind: 'answer' }),
    );
    twimlRoute(
      'gather',
      'receiveTwilioVoiceGather',
      'A gather’s digits: recorded, and answered with what comes next',
      (request, params) => {
        const digits = params.Digits;
        return {
          kind: 'gather',
          node: request.query.node ?? '',
          attempt: request.query.attempt ?? 1,
          digits: (Array.isArray(digits) ? digits[0] : digits) ?? '',
          params,
        };
      },
    );
    twimlRoute(
      'node',
      'fetchTwilioVoiceNode',
      'The TwiML of the IVR node an action goes on to',
      (request) => ({
        kind: 'node',
        node: request.query.node ?? '',
      }),
    );
  };
}
