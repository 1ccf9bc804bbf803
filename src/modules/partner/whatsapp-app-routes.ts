// GET and PUT /partner/whatsapp-app: the partner's Meta app, whose one callback URL receives the
// webhooks of every client number (whatsapp-app.ts); and moving a client's number to another of
// the partner's accounts (POST /partner/accounts/{id}/channel/move).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { partnerOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import { NullableTimestamp } from '../../kernel/http/schemas.ts';
import {
  ChannelSchema,
  configurePartnerApp,
  loadPartnerApp,
  moveChannel,
  toChannel,
  toPartnerApp,
} from '../whatsapp-channel/index.ts';
import { getPartnerAccount } from './accounts.ts';
import { AccountIdParams } from './schemas.ts';

const PartnerAppSchema = Type.Object(
  {
    configured: Type.Boolean({ description: 'Whether the partner has set its app.' }),
    appId: Type.Union([Type.String(), Type.Null()], { description: 'The Meta app id.' }),
    configurationId: Type.Union([Type.String(), Type.Null()], {
      description:
        "The app's Embedded Signup configuration id (Meta's `config_id`): with it, the partner's clients connect their own numbers from the console (POST /account/channel/embedded-signup). Null: not set.",
    }),
    callbackUrl: Type.String({
      description:
        "The app-level callback URL to set in the Meta app (with the verify token): Meta sends it every client number's webhooks, and each entry reaches the account whose channel has that phone number id.",
    }),
    updatedAt: NullableTimestamp,
  },
  { title: 'PartnerWhatsAppApp' },
);

const PutPartnerAppBody = Type.Object(
  {
    appId: Type.String({ pattern: '^[0-9]{1,32}$', description: 'The Meta app id.' }),
    appSecret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: "The app's secret: Meta signs the app's callbacks with it. Write-only.",
      }),
    ),
    verifyToken: Type.Optional(
      Type.String({
        minLength: 8,
        maxLength: 256,
        description: 'The verify token entered in the Meta app for the callback handshake. Write-only.',
      }),
    ),
    configurationId: Type.Optional(
      Type.Union([Type.String({ pattern: '^[0-9]{1,32}$' }), Type.Null()], {
        description:
          "The Embedded Signup configuration made in the app's Facebook Login for Business settings. Left out: kept (same app id); null: removed.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'The secret and the verify token may be left out only when the same app id is already set: the stored ones are kept.',
  },
);

const MoveBody = Type.Object(
  {
    toAccountId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The account the number moves to.',
    }),
  },
  { additionalProperties: false },
);

export function partnerWhatsAppAppRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['partner'];
  return async (app) => {
    app.get(
      '/partner/whatsapp-app',
      {
        config: { access: 'partner' },
        schema: {
          tags,
          operationId: 'getPartnerWhatsAppApp',
          summary: "The partner's Meta app (its secrets are never shown)",
          response: { 200: PartnerAppSchema },
        },
      },
      async (request) =>
        toPartnerApp(await loadPartnerApp(ctx.db, ctx.secrets, partnerOf(request)), ctx.config.publicBaseUrl),
    );

    app.put(
      '/partner/whatsapp-app',
      {
        config: { access: 'partner' },
        schema: {
          tags,
          operationId: 'putPartnerWhatsAppApp',
          summary: "Set the partner's Meta app: one callback URL for every client number",
          description:
            "Meta sends the webhooks of all the numbers an app serves to the app's one callback URL. Set the app here once, then its callback URL and verify token in the Meta app: each entry reaches the account (of this partner) whose channel has that phone number id. A client's channel may then leave out its own appSecret and verifyToken.",
          body: PutPartnerAppBody,
          response: { 200: PartnerAppSchema },
        },
      },
      async (request) =>
        toPartnerApp(
          await configurePartnerApp(ctx, partnerOf(request), request.body),
          ctx.config.publicBaseUrl,
        ),
    );

    app.post(
      '/partner/accounts/:accountId/channel/move',
      {
        config: { access: 'partner', errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags,
          operationId: 'moveAccountChannel',
          summary: "Move a sub-account's WhatsApp number to another of the partner's sub-accounts",
          description:
            "The number (its ids, settings and sealed token) becomes the channel of `toAccountId`, which must have none (409), and this account goes back to the sandbox; Meta is not asked anything, and the number's webhooks reach the new account from then on. History (messages, contacts, conversations) stays with the account it happened in; the new account brings in the WABA's templates with POST /templates/sync. `channel.disconnected` (reason `moved`) on this account, `channel.connected` (via `moved`) on the other. Either account of another partner: 404.",
          params: AccountIdParams,
          body: MoveBody,
          response: { 200: ChannelSchema },
        },
      },
      async (request) => {
        const partnerId = partnerOf(request);
        const from = request.params.accountId;
        const to = request.body.toAccountId;
        if (from === to) throw invalid('toAccountId', 'is this account itself');
        await getPartnerAccount(ctx.db, partnerId, from);
        const target = await getPartnerAccount(ctx.db, partnerId, to).catch(() => null);
        if (!target) throw notFound('account toAccountId');
        if (target.status === 'CLOSED') throw conflict('The target account is closed.');
        const moved = await moveChannel(ctx, from, to);
        ctx.auth.forgetAccount(from);
        ctx.auth.forgetAccount(to);
        return toChannel(moved, ctx.config.publicBaseUrl, to);
      },
    );
  };
}
